// The quantized engine (quant_engine.h).
#include "exec/quant_engine.h"

#include "support/diag.h"

#include <ATen/Context.h>

#include <c10/core/QEngine.h>

namespace tt {
namespace {

// torch.backends.quantized.engine's names.
std::string python_name(c10::QEngine e) {
  switch (e) {
    case c10::kFBGEMM:
      return "fbgemm";
    case c10::kQNNPACK:
      return "qnnpack";
    case c10::kONEDNN:
      return "onednn";
    case c10::kX86:
      return "x86";
    default:
      return "none";
  }
}

}  // namespace

std::string quantized_engine() { return python_name(at::globalContext().qEngine()); }

std::vector<std::string> supported_quantized_engines() {
  std::vector<std::string> out;
  for (c10::QEngine e : at::globalContext().supportedQEngines())
    if (e != c10::kNoQEngine) out.push_back(python_name(e));
  return out;
}

void set_quantized_engine(const std::string& name) {
  for (c10::QEngine e : at::globalContext().supportedQEngines()) {
    if (e != c10::kNoQEngine && python_name(e) == name) {
      at::globalContext().setQEngine(e);
      return;
    }
  }
  std::string list;
  for (const std::string& s : supported_quantized_engines()) list += (list.empty() ? "" : ", ") + s;
  throw Error(ExitCode::Usage, "--quantized-engine " + name +
                                   ": this LibTorch has no such engine — use one of " + list);
}

}  // namespace tt
