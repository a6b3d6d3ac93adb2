// The quantized engine (torch.backends.quantized.engine): which backend packs the weights of
// quantized modules and runs their ops. An int8 model computes bit-exactly the same only on the
// same engine, so tinytrace uses one engine for everything it runs (loading an archive re-packs
// its weights with it), records it in the report and sets it in the generated __main__
// (Note [Quantized modules] in lib/loaders/torchscript/lifter_quantized.cpp).
#pragma once

#include <string>
#include <vector>

namespace tt {

// The engine in use ("qnnpack", "onednn", "x86", "fbgemm").
std::string quantized_engine();
// The engines this LibTorch supports, without "none".
std::vector<std::string> supported_quantized_engines();
// Selects `name` for the rest of the process; throws Error(Usage) naming the supported ones when
// this LibTorch does not have it.
void set_quantized_engine(const std::string& name);

}  // namespace tt
