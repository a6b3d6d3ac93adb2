// Tensor dicts in PyTorch's own serialization format (torch.save/torch.load compatible).
//
// save_state_dict writes the zip-based format of Python's torch.save (archive/data.pkl plus one
// record per storage; Note [Writing NAME.pth] in pth_writer.cpp), so `torch.load(path)` gives back
// a plain dict of tensors in insertion order.
#include "loaders/torch_io.h"

#include "loaders/pth_writer.h"
#include "support/diag.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/serialize.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iterator>

namespace tt {

void save_tensor_dict(const std::string& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& items,
                      const std::string& shown_as) {
  std::vector<std::pair<std::string, c10::IValue>> values;
  values.reserve(items.size());
  for (const auto& [name, t] : items) values.emplace_back(name, t);
  save_state_dict(path, values, shown_as);
}

void save_state_dict(const std::string& path,
                     const std::vector<std::pair<std::string, c10::IValue>>& items,
                     const std::string& shown_as) {
  const std::string& shown = shown_as.empty() ? path : shown_as;
  PthWriter out(path, shown);
  // What torch::pickle_save does, but each storage goes straight from memory to the file (Note
  // [Writing NAME.pth]): pickle_save builds the whole archive in a growing std::vector first.
  std::vector<char> pickle;
  std::vector<at::Tensor> storages;
  try {
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    for (const auto& [name, value] : items) {
      // Autograd state is not part of a state_dict; detach so no grad_fn is pickled.
      if (value.isTensor())
        dict.insert(name, value.toTensor().detach());
      else
        dict.insert(name, value);
    }
    // tag_aggregates=false: a typed Dict is written as a plain dict, without the
    // torch.jit._pickle.restore_type_tag global that torch.load(weights_only=True) — the default
    // since torch 2.6 — refuses. The pickle then holds only dicts, strings, tensors
    // (torch._utils._rebuild_tensor_v2 over typed storages) and an empty OrderedDict per tensor,
    // all on the weights_only allow-list of torch 1.13 and 2.x.
    torch::jit::Pickler pickler(
        [&](const char* buf, size_t n) { pickle.insert(pickle.end(), buf, buf + n); },
        /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
        /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(c10::IValue(dict));
    pickler.stop();
    storages = pickler.tensorData();  // one per storage; the pickle names them "0", "1", ...
  } catch (const std::bad_alloc&) {
    throw;  // out of memory: the CLI's exit 6, not a bug (Note [Exit code 6])
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    throw Error(ExitCode::Internal, "cannot serialize the weights of " + shown + ": " + what);
  }
  // The records in torch::jit::writeArchiveAndTensors' order and names; "version" is what
  // PyTorchStreamWriter writes for this format (kMinProducedFileFormatVersion).
  for (size_t i = 0; i < storages.size(); ++i) {
    torch::jit::WriteableTensorData td = torch::jit::getWriteableTensorData(storages[i]);
    out.add("archive/data/" + std::to_string(i), td.data(), td.sizeInBytes());
  }
  out.add("archive/data.pkl", pickle.data(), pickle.size());
  const std::string version =
      std::to_string(caffe2::serialize::kMinProducedFileFormatVersion) + "\n";
  out.add("archive/version", version.data(), version.size());
  out.finish();
}

namespace {

// What torch.save wrote to `path`. `kind` names the file in messages ("weights file"), `is_not`
// says what a file that does not unpickle is not, `fix` how to write a good one.
c10::IValue load_pickled(const std::string& path, const std::string& kind,
                         const std::string& is_not, const std::string& fix) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ExitCode::BadInput, "cannot open " + kind + " " + path + " — check the path");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw Error(ExitCode::BadInput, kind + " " + path + " is not " + is_not + " (" +
                                        what.substr(0, what.find('\n')) + ") — " + fix);
  }
}

// Python lists unpickle as List[Any]; a model's forward takes List[Tensor] (a detector's
// images), List[int], ...: lists whose items share one of those types get it, recursively.
c10::IValue typed_input(const c10::IValue& v) {
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const c10::IValue& e : v.toTupleRef().elements()) items.push_back(typed_input(e));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (!v.isList()) return v;
  std::vector<c10::IValue> items;
  for (const c10::IValue& e : v.toListRef()) items.push_back(typed_input(e));
  auto all = [&](auto pred) { return std::all_of(items.begin(), items.end(), pred); };
  c10::TypePtr elem = v.toList().elementType();
  if (!items.empty() && all([](const c10::IValue& e) { return e.isTensor(); }))
    elem = c10::TensorType::get();
  else if (!items.empty() && all([](const c10::IValue& e) { return e.isInt(); }))
    elem = c10::IntType::get();
  else if (!items.empty() && all([](const c10::IValue& e) { return e.isDouble(); }))
    elem = c10::FloatType::get();
  c10::impl::GenericList out(elem);
  for (c10::IValue& e : items) out.push_back(std::move(e));
  return out;
}

}  // namespace

std::vector<std::pair<std::string, at::Tensor>> load_tensor_dict(const std::string& path) {
  c10::IValue value = load_pickled(path, "weights file", "a tensor dict written by torch.save",
                                   "save a state_dict with torch.save(model.state_dict(), path)");
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
  c10::IValue value = load_pickled(path, "inputs file", "written by torch.save",
                                   "save the input tuple with torch.save((x, ...), path)");
  if (value.isTensor()) return {value};
  value = typed_input(value);
  if (value.isTuple()) return value.toTupleRef().elements().vec();
  if (value.isList()) return value.toListRef().vec();
  throw Error(ExitCode::BadInput,
              "inputs file " + path + " holds a " + value.tagKind() +
                  ", not a tuple of inputs — save it with torch.save((x, ...), path)");
}

}  // namespace tt
