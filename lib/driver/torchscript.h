// `--emit torchscript` whole: the source from lib/emitters/torchscript.h (with the JIT's operator
// schemas) compiled and saved by lib/loaders/torchscript_save.h. The driver is the layer that
// sees both halves.
#pragma once

#include "ir/ir.h"
#include "loaders/torchscript_save.h"

#include <string>

namespace tt {

// TorchScript source of `forward` for `g` (what save_torchscript compiles); for tests and logs.
// Throws tt::Error(Unsupported) for a node it cannot express.
std::string torchscript_forward_source(const Graph& g);

// NAME.pt for `g`: the module tree that holds the weights with the compiled forward, saved to
// `path`; with `optimize` frozen and optimized for inference first (Note [Optimizing NAME.pt for
// inference] in lib/loaders/torchscript_save.cpp), what that did recorded there. Throws
// tt::Error: Unsupported for a node it cannot express or a module LibTorch cannot freeze,
// Internal when the generated source does not compile.
void save_torchscript(const Graph& g, const std::string& path, const std::string& class_name,
                      InferenceOptimization* optimize = nullptr);

}  // namespace tt
