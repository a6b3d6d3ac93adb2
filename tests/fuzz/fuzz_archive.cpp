// Fuzz target: the checks made before LibTorch sees a file (lib/loaders/loader.cpp): format
// detection (zip magic, the TorchScript / torch.save / torch.export layouts, ONNX, .tir) and the
// zip reader (central directory, entries, truncation). Note [Fuzz oracle].
#include "fuzz_target.h"
#include "loaders/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tt::fuzz::TempFile file(data, size, ".pt");
  tt::fuzz::guarded([&] { tt::detect_format(file.path()); });
  tt::fuzz::guarded([&] { tt::read_zip(file.path(), [](const std::string&) { return true; }); });
  return 0;
}
