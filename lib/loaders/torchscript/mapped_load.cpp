// torch::jit::load with the weights mapped from the archive (mapped_load.h): MappedArchive (Note
// [Weights mapped from the archive] in lib/loaders/mapped_records.cpp) around torch::jit::load,
// unless the archive runs code while it loads.
#include "loaders/torchscript/mapped_load.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import.h>

namespace tt::ts {
namespace {

// Why the archive's weights cannot be mapped (code that runs while it loads), or "".
std::string runs_code_at_load(caffe2::serialize::PyTorchStreamReader& reader,
                              const std::vector<std::string>& names) {
  auto record_text = [&](const std::string& name) {
    auto [data, size] = reader.getRecord(name);
    return std::string(static_cast<const char*>(data.get()), size);
  };
  for (const std::string& name : names) {
    bool code = name.rfind("code/", 0) == 0 && name.size() > 3 &&
                name.compare(name.size() - 3, 3, ".py") == 0;
    if (code && record_text(name).find("__setstate__") != std::string::npos)
      return "its code defines __setstate__";
    if (name == "data.pkl" && record_text(name).find("torch.classes") != std::string::npos)
      return "it holds C++ custom class objects";
  }
  return "";
}

}  // namespace

torch::jit::Module load_mapped(const std::string& path, MappedLoadStats* stats) {
  MappedLoadStats local;
  MappedLoadStats& st = stats ? *stats : local;
  st = MappedLoadStats{};
  auto usual_load = [&](const std::string& why) {
    st.reason = why;
    return torch::jit::load(path, c10::Device(c10::kCPU));
  };
  MappedArchive archive(path);
  if (!archive.error().empty()) return usual_load(archive.error());
  try {
    caffe2::serialize::PyTorchStreamReader reader(archive.adapter());
    if (std::string why = runs_code_at_load(reader, reader.getAllRecords()); !why.empty())
      return usual_load(why);
    archive.mark_records(reader);
  } catch (const std::exception&) {
    return usual_load("not a readable archive");  // torch::jit::load says why
  }
  torch::jit::Module module;
  archive.load(
      [&] {
        module = torch::jit::load(archive.adapter(), c10::Device(c10::kCPU));
        return c10::IValue(module._ivalue());
      },
      st);
  return module;
}

}  // namespace tt::ts
