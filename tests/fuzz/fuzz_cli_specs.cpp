// Fuzz target: the option parsers of the command line: the first line of the input is an
// --input-shape spec (lib/ir/input_spec.cpp), the rest a --passes pipeline (passes/pass_manager.cpp,
// Note [Pipeline text]). Note [Fuzz oracle].
#include "fuzz_target.h"
#include "ir/input_spec.h"
#include "passes/pass_manager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t nl = text.find('\n');
  std::string spec = text.substr(0, nl);
  std::string pipeline = nl == std::string::npos ? "" : text.substr(nl + 1);
  tt::fuzz::guarded([&] { tt::parse_input_spec(spec); });
  tt::fuzz::guarded([&] { tt::parse_pipeline(pipeline); });
  return 0;
}
