// Running the original TorchScript model (the reference for --verify and `profile`).
#pragma once

#include <ATen/core/ivalue.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tt {

// Loads the archive (a torch.export .pt2: the module lib/loaders/export/ builds from it) and runs
// forward(inputs) in eval mode without autograd. Returns the forward
// result as one IValue (a tuple stays a tuple). `repeat` > 1 runs it that many times (for timing)
// and calls `on_run(ms)` after each run. Throws tt::Error: BadInput when the archive cannot be
// loaded, Usage when the inputs do not fit the model's forward.
c10::IValue run_torchscript_file(const std::string& path, const std::vector<c10::IValue>& inputs,
                                 int repeat = 1, const std::function<void(double)>& on_run = {});

// Runs the archive's forward on `inputs` and returns a copy of each tensor computed by a node of
// its graph's top block whose debug name is in `names`, as it was right after that node (later
// in-place writes do not show). Throws tt::Error like run_torchscript_file.
std::unordered_map<std::string, at::Tensor> record_torchscript_values(
    const std::string& path, const std::vector<c10::IValue>& inputs,
    const std::vector<std::string>& names);

}  // namespace tt
