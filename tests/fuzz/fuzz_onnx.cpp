// Fuzz target: the ONNX loader (lib/loaders/onnx.cpp, lib/loaders/onnx/): protobuf parsing, the
// graph checks and every op handler the mutated model reaches. Note [Fuzz oracle].
#include "fuzz_target.h"
#include "loaders/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tt::fuzz::TempFile file(data, size, ".onnx");
  tt::fuzz::guarded([&] {
    tt::Diagnostics diags;
    tt::load_onnx(file.path(), diags);
  });
  return 0;
}
