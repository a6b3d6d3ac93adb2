// `--emit torchscript`: the two halves (lib/driver/torchscript.h).
#include "driver/torchscript.h"

#include "emitters/torchscript.h"
#include "loaders/torchscript_save.h"

namespace tt {

std::string torchscript_forward_source(const Graph& g) {
  return torchscript_forward(g, jit_operator_schemas).source;
}

void save_torchscript(const Graph& g, const std::string& path, const std::string& class_name,
                      InferenceOptimization* optimize) {
  TorchScriptForward fwd = torchscript_forward(g, jit_operator_schemas);
  save_torchscript_module(g, fwd.source, fwd.constants, path, class_name, optimize);
}

}  // namespace tt
