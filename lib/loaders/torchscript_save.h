// `--emit torchscript`: the transformed model as a TorchScript archive (NAME.pt) that runs without
// Python (torch::jit::load) and in Python (torch.jit.load), with the same forward signature and the
// same state_dict keys as NAME.pth: the saving half. The source comes from
// lib/emitters/torchscript.h; compiling and saving it needs the JIT, which only lib/loaders
// includes.
#pragma once

#include "ir/ir.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tt {

// Every overload of the operator `qualified_name` ("aten::add") the JIT's registry knows: the
// schemas the TorchScript emitter (lib/emitters/torchscript.h, OperatorSchemas) asks for.
std::vector<c10::FunctionSchema> jit_operator_schemas(const std::string& qualified_name);

// What --optimize-for-inference did to NAME.pt's forward (Note [Optimizing NAME.pt for
// inference]): the ATen ops of its graph by kind before freezing and after the last pass.
struct InferenceOptimization {
  std::vector<std::string> passes;                       // LibTorch's passes run, in order
  std::map<std::string, int64_t> ops_before, ops_after;  // aten:: ops (and conv2d_run) by kind
  int64_t prepacked_convolutions = 0;                    // Note [Prepacked convolutions in NAME.pt]
  // True when the passes changed the float arithmetic (a fold into a conv or linear, a linear
  // rewritten as matmul): --verify then allows 1e-3, as after folding BatchNorm (DESIGN.md §2).
  // Removing dropout alone does not count.
  bool reassociated() const;
};

// Builds the module (one submodule per state_dict prefix, parameters and buffers registered under
// their state_dict names, `constants` as tensor attributes of the root), compiles `forward_source`
// as its forward and saves it to `path`; with `optimize` (--optimize-for-inference) it is frozen
// and optimized by LibTorch's own passes first, and what they did is recorded in *optimize.
// Throws tt::Error: Internal when the source does not compile or the archive cannot be written,
// Unsupported when LibTorch cannot freeze the module. lib/driver/torchscript.h puts the two
// halves together.
void save_torchscript_module(const Graph& g, const std::string& forward_source,
                             const std::vector<std::pair<std::string, at::Tensor>>& constants,
                             const std::string& path, const std::string& class_name,
                             InferenceOptimization* optimize = nullptr);

}  // namespace tt
