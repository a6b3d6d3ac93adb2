// `--emit torchscript`, the source half: the transformed model's forward as TorchScript source
// (lib/emitters/torchscript.cpp, Note [Lowering to TorchScript source]). The other half, which
// compiles it with the weights and saves NAME.pt, needs the JIT: lib/loaders/torchscript_save.h.
#pragma once

#include "ir/ir.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tt {

// Every overload of the operator `qualified_name` ("aten::add") the JIT knows; empty when none.
// Supplied by the caller (lib/loaders, the one folder that includes the JIT headers).
using OperatorSchemas =
    std::function<std::vector<c10::FunctionSchema>(const std::string& qualified_name)>;

struct TorchScriptForward {
  std::string source;  // "def forward(self, x: Tensor):\n    ..."
  // Tensor constants the source reads as self.<name>: registered on the root module.
  std::vector<std::pair<std::string, at::Tensor>> constants;
};

// The TorchScript source of `forward` for `g`. Throws tt::Error(Unsupported) for a node it
// cannot express.
TorchScriptForward torchscript_forward(const Graph& g, const OperatorSchemas& schemas);

}  // namespace tt
