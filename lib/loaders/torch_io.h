// Reading and writing tensors in PyTorch's own formats (kept out of other TUs because it needs
// the JIT serialization headers).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <utility>
#include <vector>

namespace tt {

// Writes an ordered name -> tensor dict in torch::pickle_save's format, so that Python's
// `torch.load(path)` returns a dict of tensors (a state_dict). Throws tt::Error on I/O failure.
void save_tensor_dict(const std::string& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& items,
                      const std::string& shown_as = "");  // the name errors give (default: path)

// The same for a state_dict whose values may also be None (a quantized convolution's missing
// bias: Note [State of quantized modules] in lib/ir/quant.h).
void save_state_dict(const std::string& path,
                     const std::vector<std::pair<std::string, c10::IValue>>& items,
                     const std::string& shown_as = "");

// Reads a dict written by save_tensor_dict (or by Python's torch.save of a dict of tensors when
// possible). Throws tt::Error(BadInput) when it is not such a file.
std::vector<std::pair<std::string, at::Tensor>> load_tensor_dict(const std::string& path);

// Model inputs saved by Python's torch.save: a tuple or list of tensors/numbers, or one tensor
// (--verify-inputs). Throws tt::Error(BadInput) when the file is not that.
std::vector<c10::IValue> load_input_values(const std::string& path);

}  // namespace tt
