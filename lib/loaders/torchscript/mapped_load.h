// torch::jit::load with the weights mapped from the archive instead of copied into memory (Note
// [Weights mapped from the archive] in mapped_load.cpp). JIT headers: include only from
// lib/loaders/.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <string>

namespace tt::ts {

// What load_mapped did, for the log and the tests.
struct MappedLoadStats {
  bool mapped = false;  // false: a plain torch::jit::load (why: `reason`)
  std::string reason;   // why the weights were not mapped, when they were not
  size_t records = 0;   // data/ records mapped in place of a copy
  uint64_t bytes = 0;   // their bytes
  size_t filled = 0;    // records read the usual way after all (not reachable from the module)
};

// torch::jit::load(path) on the CPU, except that the data/ records of at least 64 KiB become
// copy-on-write views of one private mapping of the file: their pages are read from the page
// cache when something touches them, and never all held at once.
torch::jit::Module load_mapped(const std::string& path, MappedLoadStats* stats = nullptr);

}  // namespace tt::ts
