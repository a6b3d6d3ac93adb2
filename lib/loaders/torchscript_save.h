// `--emit torchscript`: the transformed model as a TorchScript archive (NAME.pt) that runs without
// Python (torch::jit::load) and in Python (torch.jit.load), with the same forward signature and the
// same state_dict keys as NAME.pth: the saving half. The source comes from
// lib/emitters/torchscript.h; compiling and saving it needs the JIT, which only lib/loaders
// includes.
#pragma once

#include "ir/ir.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>

#include <string>
#include <utility>
#include <vector>

namespace tt {

// Every overload of the operator `qualified_name` ("aten::add") the JIT's registry knows: the
// schemas the TorchScript emitter (lib/emitters/torchscript.h, OperatorSchemas) asks for.
std::vector<c10::FunctionSchema> jit_operator_schemas(const std::string& qualified_name);

// Builds the module (one submodule per state_dict prefix, parameters and buffers registered under
// their state_dict names, `constants` as tensor attributes of the root), compiles `forward_source`
// as its forward and saves it to `path`. Throws tt::Error(Internal) when the source does not
// compile or the archive cannot be written. lib/driver/torchscript.h puts the two halves together.
void save_torchscript_module(const Graph& g, const std::string& forward_source,
                             const std::vector<std::pair<std::string, at::Tensor>>& constants,
                             const std::string& path, const std::string& class_name);

}  // namespace tt
