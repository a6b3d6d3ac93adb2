// Tensor dicts in PyTorch's own serialization format (torch.save/torch.load compatible).
//
// torch::pickle_save writes the zip-based format of Python's torch.save (archive/data.pkl plus one
// record per storage), so `torch.load(path)` gives back a plain dict of tensors in insertion order.
#include "loaders/torch_io.h"

#include "support/diag.h"

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/serialize.h>

#include <fstream>
#include <iterator>

namespace tt {

void save_tensor_dict(const std::string& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& items) {
  std::vector<char> bytes;
  try {
    c10::Dict<std::string, at::Tensor> dict;
    for (const auto& [name, tensor] : items) {
      // Autograd state is not part of a state_dict; detach so no grad_fn is pickled.
      dict.insert(name, tensor.detach());
    }
    bytes = torch::pickle_save(c10::IValue(dict));
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    throw Error(ExitCode::Internal, "cannot serialize the weights of " + path + ": " + what);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw Error(ExitCode::Usage,
                "cannot open " + path + " for writing — check that the directory exists and is writable");
  }
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    throw Error(ExitCode::Usage, "cannot write " + path + " — check free disk space and permissions");
  }
}

std::vector<std::pair<std::string, at::Tensor>> load_tensor_dict(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ExitCode::BadInput, "cannot open weights file " + path + " — check the path");
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    throw Error(ExitCode::BadInput,
                "weights file " + path + " is not a tensor dict written by torch.save (" + what +
                    ") — save a state_dict with torch.save(model.state_dict(), path)");
  }
  if (!value.isGenericDict()) {
    throw Error(ExitCode::BadInput, "weights file " + path + " holds a " + value.tagKind() +
                                        ", not a dict of tensors — save a state_dict with "
                                        "torch.save(model.state_dict(), path)");
  }
  std::vector<std::pair<std::string, at::Tensor>> items;
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString() || !entry.value().isTensor()) {
      throw Error(ExitCode::BadInput, "weights file " + path +
                                          " has an entry that is not name -> tensor — save a "
                                          "state_dict with torch.save(model.state_dict(), path)");
    }
    items.emplace_back(entry.key().toStringRef(), entry.value().toTensor());
  }
  return items;
}

std::vector<c10::IValue> load_input_values(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ExitCode::BadInput, "cannot open inputs file " + path + " — check the path");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw Error(ExitCode::BadInput, "inputs file " + path + " is not written by torch.save (" +
                                        what.substr(0, what.find('\n')) +
                                        ") — save the input tuple with torch.save((x, ...), path)");
  }
  if (value.isTensor()) return {value};
  if (value.isTuple()) return value.toTupleRef().elements().vec();
  if (value.isList()) return value.toListRef().vec();
  throw Error(ExitCode::BadInput, "inputs file " + path + " holds a " + value.tagKind() +
                                      ", not a tuple of inputs — save it with torch.save((x, ...), path)");
}

}  // namespace tt
