// Reading a torch.export archive (archive.h).
#include "loaders/export/archive.h"

#include "loaders/loader.h"
#include "loaders/mapped_records.h"

#include <caffe2/serialize/inline_container.h>
#include <spdlog/spdlog.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/serialization/import_read.h>

#include <memory>

namespace tt::pt2 {

namespace jit = torch::jit;
using c10::IValue;

namespace {

const char* kReexport =
    "re-export the model with torch.export.export(model.eval(), args) and save it "
    "with torch.export.save (torch 2.6)";

}  // namespace

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ExitCode::BadInput, "malformed torch.export archive: " + what + " — " + kReexport);
}

const json& field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key))
    malformed(std::string("a '") + key + "' field is missing");
  return j.at(key);
}

std::pair<std::string, const json*> union_member(const json& j) {
  if (!j.is_object() || j.size() != 1)
    malformed("expected a one-member object, got " + first_line(j.dump()).substr(0, 80));
  return {j.begin().key(), &j.begin().value()};
}

Archive read_archive(const std::string& path) {
  // The three files this reader needs, at the top or under one top-level folder.
  auto file_of = [](const std::string& n) {
    auto slash = n.find('/');
    return slash == std::string::npos ? n : n.substr(slash + 1);
  };
  auto named = [&](const std::string& n, std::initializer_list<const char*> files) {
    for (const std::string& f : {n, file_of(n)})
      for (const char* file : files)
        if (f == file) return true;
    return false;
  };
  ZipContents zip = read_zip(
      path, [&](const std::string& n) { return named(n, {"serialized_exported_program.json"}); },
      [&](const std::string& n) {
        return named(n, {"serialized_state_dict.pt", "serialized_constants.pt"});
      });
  const std::vector<std::string>& names = zip.names;
  std::string prefix;
  bool found = false, package = false, aoti = false;
  for (const auto& n : names) {
    auto slash = n.find('/');
    std::string rest = slash == std::string::npos ? n : n.substr(slash + 1);
    std::string pre = slash == std::string::npos ? "" : n.substr(0, slash + 1);
    if (n == "serialized_exported_program.json" || rest == "serialized_exported_program.json") {
      prefix = n == "serialized_exported_program.json" ? "" : pre;
      found = true;
    }
    if (n == "archive_format" || rest == "archive_format") package = true;
    if (rest.rfind("data/aotinductor/", 0) == 0) aoti = true;
  }
  if (!found && aoti)
    throw Error(ExitCode::BadInput,
                "this .pt2 is an AOTInductor package (compiled code), not an exported program — "
                "convert the torch.export.save archive of the model instead");
  if (!found && package)
    throw Error(
        ExitCode::Unsupported,
        "this .pt2 is in the package layout of torch >= 2.7 (archive_format); tinytrace reads the "
        ".pt2 archives torch 2.6's torch.export.save writes (schema 8.x) — save the exported "
        "program "
        "with torch 2.6, or convert a TorchScript (torch.jit.trace) or ONNX export of the model");
  if (!found) malformed("no serialized_exported_program.json inside");
  Archive a;
  a.path = path;
  const std::string& text = zip.data.at(prefix + "serialized_exported_program.json");
  try {
    a.program = json::parse(text);
  } catch (const json::exception& e) {
    malformed("serialized_exported_program.json is not valid JSON (" + first_line(e.what()) + ")");
  }
  auto range = [&](const std::string& n) {
    auto it = zip.ranges.find(prefix + n);
    return it == zip.ranges.end() ? ArtifactRange{}
                                  : ArtifactRange{it->second.first, it->second.second};
  };
  a.state_dict = range("serialized_state_dict.pt");
  a.constants = range("serialized_constants.pt");
  return a;
}

std::vector<std::pair<std::string, at::Tensor>> load_tensor_dict(const std::string& path,
                                                                 const ArtifactRange& range,
                                                                 const std::string& what) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  if (range.size == 0) return out;  // torch.export.save writes b"" for an absent artifact
  auto cu = std::make_shared<jit::CompilationUnit>();
  auto resolver = [cu, what](const c10::QualifiedName& qn) -> c10::StrongTypePtr {
    std::string name = qn.qualifiedName();
    if (name != "torch._utils._rebuild_parameter" &&
        name != "torch._utils._rebuild_parameter_with_state")
      throw Error(ExitCode::Unsupported,
                  what + " holds a " + name +
                      " object; tinytrace reads tensors only — keep the model's "
                      "state as tensors (no custom objects)");
    c10::ClassTypePtr t = cu->get_class(qn);
    if (!t) {
      t = c10::ClassType::create(qn, cu);
      t->addAttribute("data", c10::TensorType::get());
      cu->register_type(t);
    }
    return c10::StrongTypePtr(cu, t);
  };
  auto loader = [](const c10::StrongTypePtr& type, IValue args) {
    auto obj = c10::ivalue::Object::create(type, 1);
    if (args.isTuple() && !args.toTupleRef().elements().empty())
      obj->setSlot(0, args.toTupleRef().elements()[0]);
    return obj;
  };
  IValue v;
  try {
    MappedArchive archive(path, range.offset, range.size);
    if (!archive.error().empty()) malformed(what + " cannot be read (" + archive.error() + ")");
    caffe2::serialize::PyTorchStreamReader reader(archive.adapter());
    archive.mark_records(reader);
    MappedLoadStats st;
    v = archive.load(
        [&] {
          return jit::readArchiveAndTensors("data", "", "", resolver, loader,
                                            c10::Device(c10::kCPU), reader);
        },
        st);
    if (st.mapped)
      spdlog::debug("{}: {} records ({} MiB) mapped from the archive{}, {} read ({} misaligned)",
                    what, st.records, st.bytes >> 20, st.realigned ? " (an aligned copy)" : "",
                    st.filled, st.misaligned);
    else
      spdlog::debug("{}: read into memory ({})", what, st.reason);
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    malformed(what + " cannot be read (" + first_line(e.what_without_backtrace()) + ")");
  } catch (const std::exception& e) {
    malformed(what + " cannot be read (" + first_line(e.what()) + ")");
  }
  if (v.isNone()) return out;
  if (!v.isGenericDict()) malformed(what + " holds a " + v.tagKind() + ", not a dict of tensors");
  for (const auto& entry : v.toGenericDict()) {
    IValue val = entry.value();
    if (val.isObject()) val = val.toObjectRef().getSlot(0);
    if (!entry.key().isString() || !val.isTensor())
      throw Error(ExitCode::Unsupported,
                  what + " has an entry that is not a tensor (" +
                      (entry.key().isString() ? entry.key().toStringRef() : "?") +
                      "); tinytrace reads tensors only — keep the model's state as tensors");
    out.emplace_back(entry.key().toStringRef(), val.toTensor().detach());
  }
  return out;
}

std::optional<c10::ScalarType> scalar_type(int64_t v) {
  switch (v) {
    case 1:
      return c10::kByte;
    case 2:
      return c10::kChar;
    case 3:
      return c10::kShort;
    case 4:
      return c10::kInt;
    case 5:
      return c10::kLong;
    case 6:
      return c10::kHalf;
    case 7:
      return c10::kFloat;
    case 8:
      return c10::kDouble;
    case 9:
      return c10::kComplexHalf;
    case 10:
      return c10::kComplexFloat;
    case 11:
      return c10::kComplexDouble;
    case 12:
      return c10::kBool;
    case 13:
      return c10::kBFloat16;
    case 28:
      return c10::kUInt16;
    default:
      return std::nullopt;
  }
}

}  // namespace tt::pt2
