// Reading and writing tensors in PyTorch's own formats (kept out of other TUs because it needs
// the JIT serialization headers).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

namespace tt {

// Writes an ordered name -> tensor dict with torch::pickle_save, so that Python's
// `torch.load(path)` returns a dict of tensors (a state_dict). Throws tt::Error on I/O failure.
void save_tensor_dict(const std::string& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& items);

// Reads a dict written by save_tensor_dict (or by Python's torch.save of a dict of tensors when
// possible). Throws tt::Error(BadInput) when it is not such a file.
std::vector<std::pair<std::string, at::Tensor>> load_tensor_dict(const std::string& path);

}  // namespace tt
