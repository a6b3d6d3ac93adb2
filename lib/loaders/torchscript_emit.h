// `--emit torchscript`: the transformed model as a TorchScript archive (NAME.pt) that runs without
// Python (torch::jit::load) and in Python (torch.jit.load), with the same forward signature and the
// same state_dict keys as NAME.pth.
#pragma once

#include "ir/ir.h"

#include <string>

namespace tt {

// TorchScript source of `forward` for `g` (what save_torchscript compiles); for tests and logs.
// Throws tt::Error(Unsupported) for a node it cannot express.
std::string torchscript_forward_source(const Graph& g);

// Builds the module (one submodule per state_dict prefix, parameters and buffers registered under
// their state_dict names), compiles forward and saves it to `path`. Throws tt::Error: Unsupported
// for a node it cannot express, Internal when the generated source does not compile.
void save_torchscript(const Graph& g, const std::string& path, const std::string& class_name);

}  // namespace tt
