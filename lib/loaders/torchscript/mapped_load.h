// torch::jit::load with the weights mapped from the archive instead of copied into memory (Note
// [Weights mapped from the archive] in lib/loaders/mapped_records.cpp). JIT headers: include only
// from lib/loaders/.
#pragma once

#include "loaders/mapped_records.h"

#include <torch/csrc/jit/api/module.h>

#include <string>

namespace tt::ts {

using tt::MappedLoadStats;

// torch::jit::load(path) on the CPU, except that the data/ records of at least 64 KiB become
// copy-on-write views of one private mapping of the file: their pages are read from the page
// cache when something touches them, and never all held at once.
torch::jit::Module load_mapped(const std::string& path, MappedLoadStats* stats = nullptr);

}  // namespace tt::ts
