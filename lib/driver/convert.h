// `tinytrace convert`: load -> (passes) -> emit, all-or-nothing.
#pragma once

#include "driver/passes_cli.h"
#include "ir/input_spec.h"

#include <optional>
#include <string>
#include <vector>

namespace tt {

struct ConvertOptions {
  std::string model_path;
  std::string out_dir = ".";
  std::string name;  // empty: derived from the model file name
  std::vector<InputSpec> input_shapes;
  std::vector<std::string> emit = {"python", "weights", "report"};
  PassCliOptions passes;            // --passes / --fuse / --print-ir-after / --verify-each
  bool verify = false;              // --verify
  std::string verify_inputs;        // --verify-inputs: torch.save'd inputs instead of seeded ones
  std::optional<double> tolerance;  // --tolerance (default: 1e-4, 1e-3 when BN was folded)
  bool flat = false;                // --flat: one class with one forward in NAME.py
  // --optimize-for-inference: NAME.pt frozen and optimized by LibTorch's passes (needs
  // torchscript in `emit`; Note [Optimizing NAME.pt for inference]).
  bool optimize_for_inference = false;
  // The CLI ends right after: the final graph is not freed (Note [The final graph at exit] in
  // lib/driver/passes_cli.cpp).
  bool keep_final_graph = false;
};

struct ConvertResult {
  std::vector<std::string> written;  // final paths
  std::string name, class_name;
  size_t nodes = 0;
  int64_t parameters = 0;
  size_t warnings = 0;
  size_t aten_fallbacks = 0;
  std::vector<std::string> verify_summaries;  // one line per engine compared
};

// The kinds --emit accepts today, in the order they are written.
const std::vector<std::string>& emit_kinds();

// "my-model.pt" -> "my_model"; never empty, always a Python identifier that is not a keyword.
std::string default_model_name(const std::string& model_path);
// "my_model" -> "MyModel".
std::string class_name_for(const std::string& name);
bool is_python_identifier(const std::string& s);

// Throws tt::Error with the exit code of DESIGN.md §1 on every failure; writes nothing then.
ConvertResult run_convert(const ConvertOptions& opts);

}  // namespace tt
