// torch.export archives (.pt2 written by torch 2.6's torch.export.save), read through the
// TorchScript pipeline.
//
// Note [Exported programs as traced modules]
// An exported program is one flat ATen graph (serialized_exported_program.json; the schema is
// torch/_export/serde/schema.py, version 8.x in torch 2.6) whose nodes carry the nn.Module calls
// they were traced in (metadata nn_module_stack: "key,path,class;key,path,class;..." from the root
// down), with parameters, buffers and lifted constants as graph inputs the signature names. Rather
// than a second lifter, this file rebuilds from it the module torch.jit.trace would have given and
// hands that to the TorchScript lifter (lift_jit_module), so leaf recipes, in-place handling,
// normalisations and the op table apply unchanged:
// - one module object per module path (from the call stacks and the state_dict names), each of its
//   own module class named after the Python class the way the tracer names them
//   ("__torch__.torch.nn.modules.conv.___torch_mangle_N.Conv2d"), holding its parameters and
//   buffers (serialized_state_dict.pt / serialized_constants.pt) under their state_dict names, and
//   lifted tensor constants as plain tensor attributes (the lifter keeps those as constants);
// - one method per module call (forward, forward1, ... when a module is called again: the stack
//   keys differ per call, "b.relu" then "b.relu@1"), holding the nodes whose innermost stack entry
//   is that call and calling its sub-calls with prim::CallMethod. Values crossing a call boundary
//   are method inputs and results (a tuple when there are several); parameters are read with
//   prim::GetAttr chains from the method's self, as in a traced module;
// - ATen nodes get their inputs in schema order, missing ones from the schema's defaults, and
//   LibTorch picks the overload from the input types as for any TorchScript node (a number given
//   for a Tensor argument, `x + 1`, selects the Scalar overload). Symbolic sizes stay code:
//   aten.sym_size.int is aten::size.int, Python operators on SymInts (_operator.mul, ...) are the
//   TorchScript int ops, so a dynamic dim is `x.size(0)` in the generated code; runtime asserts
//   (_assert_scalar, sym_constrain_range*, _assert_tensor_metadata) are dropped, detach/alias and
//   the lift_fresh_copy of a tensor literal are the value itself. A decomposed program
//   (ep.run_decompositions()) gets back the ops its nodes came from where that is exact:
//   convolution -> _convolution, _native_batch_norm_legit_no_training -> batch_norm,
//   addmm(b, x, permute(w)) -> linear, _softmax -> softmax, ..., so its modules are recognised too.
// Scalar nodes (sizes and arithmetic on them) move to the innermost call containing them and all
// their uses: export shares them between modules (ViT's attention layers reuse one batch*heads),
// which would otherwise give a leaf module an extra result. A call whose nodes interleave with its
// caller's so that no single call can stand for them (data flowing out and back in, or an in-place
// write that calling it as one unit would move across a read) is dissolved into the caller.
// The module built here is also --verify's reference (jit_runner.cpp), so the archive's own
// values are what the converted graph is compared with.
#include "loaders/export.h"

#include "loaders/loader.h"

#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/csrc/jit/serialization/import_read.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

namespace tt {
namespace {

namespace jit = torch::jit;
using json = nlohmann::json;
using c10::IValue;

const char* kReexport = "re-export the model with torch.export.export(model.eval(), args) and save it "
                        "with torch.export.save (torch 2.6)";

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ExitCode::BadInput, "malformed torch.export archive: " + what + " — " + kReexport);
}

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
  return l;
}

const json& field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) malformed(std::string("a '") + key + "' field is missing");
  return j.at(key);
}

// The one member of a serialized union ({"as_tensor": {...}}).
std::pair<std::string, const json*> union_member(const json& j) {
  if (!j.is_object() || j.size() != 1) malformed("expected a one-member object, got " + first_line(j.dump()).substr(0, 80));
  return {j.begin().key(), &j.begin().value()};
}

// ---------------------------------------------------------------------------------------------
// The archive

struct Archive {
  json program;
  std::string state_dict, constants;  // torch.save bytes ("" when absent)
};

Archive read_archive(const std::string& path) {
  // The three files this reader needs, at the top or under one top-level folder.
  auto file_of = [](const std::string& n) {
    auto slash = n.find('/');
    return slash == std::string::npos ? n : n.substr(slash + 1);
  };
  auto wanted = [&](const std::string& n) {
    for (const std::string& f : {n, file_of(n)})
      if (f == "serialized_exported_program.json" || f == "serialized_state_dict.pt" ||
          f == "serialized_constants.pt")
        return true;
    return false;
  };
  ZipContents zip = read_zip(path, wanted);
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
    throw Error(ExitCode::Unsupported,
                "this .pt2 is in the package layout of torch >= 2.7 (archive_format); tinytrace reads the "
                ".pt2 archives torch 2.6's torch.export.save writes (schema 8.x) — save the exported program "
                "with torch 2.6, or convert a TorchScript (torch.jit.trace) or ONNX export of the model");
  if (!found) malformed("no serialized_exported_program.json inside");
  Archive a;
  const std::string& text = zip.data.at(prefix + "serialized_exported_program.json");
  try {
    a.program = json::parse(text);
  } catch (const json::exception& e) {
    malformed("serialized_exported_program.json is not valid JSON (" + first_line(e.what()) + ")");
  }
  auto bytes = [&](const std::string& n) {
    auto it = zip.data.find(prefix + n);
    return it == zip.data.end() ? std::string() : std::move(it->second);
  };
  a.state_dict = bytes("serialized_state_dict.pt");
  a.constants = bytes("serialized_constants.pt");
  return a;
}

// A torch.save'd dict of tensors (the state_dict or the constants). torch.save pickles a Parameter
// as torch._utils._rebuild_parameter(data, requires_grad, hooks), which LibTorch's unpickler does
// not know: it is resolved to a stand-in class whose object keeps `data`, unwrapped below.
std::vector<std::pair<std::string, at::Tensor>> load_tensor_dict_bytes(const std::string& bytes,
                                                                       const std::string& what) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  if (bytes.empty()) return out;  // torch.export.save writes b"" for an absent artifact
  auto cu = std::make_shared<jit::CompilationUnit>();
  auto resolver = [cu, what](const c10::QualifiedName& qn) -> c10::StrongTypePtr {
    std::string name = qn.qualifiedName();
    if (name != "torch._utils._rebuild_parameter" && name != "torch._utils._rebuild_parameter_with_state")
      throw Error(ExitCode::Unsupported, what + " holds a " + name +
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
    if (args.isTuple() && !args.toTupleRef().elements().empty()) obj->setSlot(0, args.toTupleRef().elements()[0]);
    return obj;
  };
  IValue v;
  try {
    caffe2::serialize::PyTorchStreamReader reader(
        std::make_shared<caffe2::serialize::MemoryReadAdapter>(bytes.data(), static_cast<off_t>(bytes.size())));
    v = jit::readArchiveAndTensors("data", "", "", resolver, loader, c10::Device(c10::kCPU), reader);
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
      throw Error(ExitCode::Unsupported, what + " has an entry that is not a tensor (" +
                                             (entry.key().isString() ? entry.key().toStringRef() : "?") +
                                             "); tinytrace reads tensors only — keep the model's state as tensors");
    out.emplace_back(entry.key().toStringRef(), val.toTensor().detach());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Module paths and calls

struct StackEntry {
  std::string key, path, cls;
};

// "layer1.0.conv" from the Python expression dynamo recorded when torch's own normalisation did
// not apply ("L['s'].layer1[0].conv", "getattr(L['self'].layer1, '0')", "._modules['0']");
// nullopt when it is not such an expression (e.g. a slice of a Sequential).
std::optional<std::string> normalize_path(const std::string& p) {
  if (p.find_first_of("[(") == std::string::npos) return p;
  size_t i = 0;
  std::vector<std::string> parts;
  auto lit = [&](std::string& s) {  // '...' or "..."
    if (i >= p.size() || (p[i] != '\'' && p[i] != '"')) return false;
    char q = p[i++];
    size_t e = p.find(q, i);
    if (e == std::string::npos) return false;
    s = p.substr(i, e - i);
    i = e + 1;
    return true;
  };
  auto eat = [&](const char* t) {
    size_t n = std::char_traits<char>::length(t);
    if (p.compare(i, n, t) != 0) return false;
    i += n;
    return true;
  };
  auto ident = [&](std::string& s) {
    size_t b = i;
    while (i < p.size() && (std::isalnum(static_cast<unsigned char>(p[i])) || p[i] == '_')) ++i;
    s = p.substr(b, i - b);
    return !s.empty();
  };
  std::function<bool()> expr = [&]() -> bool {
    std::string s;
    if (eat("getattr(")) {
      if (!expr() || !eat(", ") || !lit(s) || !eat(")")) return false;
      parts.push_back(s);
    } else if (eat("L[")) {
      if (!lit(s) || !eat("]")) return false;
    } else if (!ident(s)) {
      return false;
    }
    while (i < p.size()) {
      if (eat(".")) {
        if (!ident(s)) return false;
        if (s == "_modules" && i < p.size() && p[i] == '[') continue;
        parts.push_back(s);
      } else if (eat("[")) {
        if (i < p.size() && (p[i] == '\'' || p[i] == '"')) {
          if (!lit(s)) return false;
        } else {
          size_t b = i;
          while (i < p.size() && (std::isdigit(static_cast<unsigned char>(p[i])) || p[i] == '-')) ++i;
          s = p.substr(b, i - b);
          if (s.empty()) return false;
        }
        if (!eat("]")) return false;
        parts.push_back(s);
      } else {
        return true;
      }
    }
    return true;
  };
  if (!expr() || i != p.size()) return std::nullopt;
  std::string out;
  for (const auto& s : parts) out += (out.empty() ? "" : ".") + s;
  return out;
}

// "key,path,class;..." -> entries (the path may hold commas: the key is up to the first comma,
// the class after the last).
std::vector<StackEntry> parse_stack(const std::string& s) {
  std::vector<StackEntry> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t semi = s.find(';', start);
    std::string item = s.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
    start = semi == std::string::npos ? s.size() + 1 : semi + 1;
    size_t c1 = item.find(','), c2 = item.rfind(',');
    if (c1 == std::string::npos || c1 == c2) continue;
    StackEntry e{item.substr(0, c1), item.substr(c1 + 1, c2 - c1 - 1), item.substr(c2 + 1)};
    if (e.key.rfind("_empty_nn_module_stack", 0) == 0) continue;
    out.push_back(std::move(e));
  }
  return out;
}

bool under(const std::string& prefix, const std::string& path) {  // path is prefix or inside it
  return prefix.empty() || path == prefix || path.rfind(prefix + ".", 0) == 0;
}

struct Call {
  std::string key, path, cls;
  Call* parent = nullptr;
  std::vector<Call*> children;  // in order of first appearance, then as scheduled
  std::map<std::string, Call*> by_key;
  std::vector<int> nodes;                   // its own nodes, in graph order
  std::vector<std::pair<int, Call*>> items;  // scheduled: a node (index, nullptr) or a sub-call (-1, call)
  std::vector<std::string> outputs;          // values it returns, in graph order
  std::string method;                        // forward, forward1, ...
};

// Export's ScalarType / MemoryFormat / Layout enums (schema.py) -> c10's.
std::optional<c10::ScalarType> scalar_type(int64_t v) {
  switch (v) {
    case 1: return c10::kByte;
    case 2: return c10::kChar;
    case 3: return c10::kShort;
    case 4: return c10::kInt;
    case 5: return c10::kLong;
    case 6: return c10::kHalf;
    case 7: return c10::kFloat;
    case 8: return c10::kDouble;
    case 9: return c10::kComplexHalf;
    case 10: return c10::kComplexFloat;
    case 11: return c10::kComplexDouble;
    case 12: return c10::kBool;
    case 13: return c10::kBFloat16;
    case 28: return c10::kUInt16;
    default: return std::nullopt;
  }
}

// Python operators on SymInts/SymFloats/SymBools -> the TorchScript scalar op (overload chosen by
// the input types).
const std::map<std::string, const char*>& scalar_ops() {
  static const std::map<std::string, const char*> m = {
      {"_operator.add", "aten::add"},       {"_operator.sub", "aten::sub"},
      {"_operator.mul", "aten::mul"},       {"_operator.floordiv", "aten::floordiv"},
      {"_operator.mod", "aten::remainder"}, {"_operator.truediv", "aten::div"},
      {"_operator.neg", "aten::neg"},       {"_operator.eq", "aten::eq"},
      {"_operator.ne", "aten::ne"},         {"_operator.lt", "aten::lt"},
      {"_operator.le", "aten::le"},         {"_operator.gt", "aten::gt"},
      {"_operator.ge", "aten::ge"},         {"_operator.and_", "aten::__and__"},
      {"_operator.or_", "aten::__or__"},    {"torch.sym_not", "aten::__not__"},
      {"torch.sym_float", "aten::Float"},   {"torch.sym_int", "aten::Int"},
      {"torch.sym_sqrt", "aten::sqrt"},     {"torch._sym_sqrt", "aten::sqrt"},
      {"math.ceil", "aten::ceil"},          {"math.floor", "aten::floor"},
  };
  return m;
}

bool is_dropped(const std::string& target) {
  static const std::set<std::string> asserts = {
      "torch.ops.aten._assert_scalar.default",
      "torch.ops.aten.sym_constrain_range.default",
      "torch.ops.aten.sym_constrain_range_for_size.default",
      "torch.ops.aten._assert_tensor_metadata.default",
      "torch.ops.aten._assert_async.msg",
      "torch.ops.aten._assert_async.default",
      "torch._check",
      "torch._check_is_size",
  };
  return asserts.count(target) > 0;
}

// ---------------------------------------------------------------------------------------------
// The builder

class Builder {
 public:
  Builder(std::string path, Diagnostics* diags) : path_(std::move(path)), diags_(diags) {}

  jit::Module run() {
    Archive a = read_archive(path_);
    try {
      return build(a);
    } catch (const json::exception& e) {
      malformed(first_line(e.what()));
    }
  }

 private:
  enum class Kind { Tensor, Int, Float, Bool };

  // A method being built for one call.
  struct Method {
    Call* call = nullptr;
    std::shared_ptr<jit::Graph> g;
    jit::Value* self = nullptr;
    std::unordered_map<std::string, jit::Value*> env;
    std::vector<std::string> inputs;  // external values, in input order (after self)
    std::map<std::string, jit::Value*> objects;  // module path -> its value (GetAttr chains, inputs)
  };

  jit::Module build(const Archive& a) {
    const json& prog = a.program;
    if (prog.contains("schema_version")) {
      const json& v = prog["schema_version"];
      int64_t major = v.value("major", int64_t{0});
      if (major != 8 && diags_)
        diags_->warn("export-schema",
                     "the archive's schema version is " + std::to_string(major) + "." +
                         std::to_string(v.value("minor", int64_t{0})) +
                         "; tinytrace is made for torch 2.6's 8.x — check the result");
    }
    const json& gm = field(prog, "graph_module");
    graph_ = &field(gm, "graph");
    const json& sig = field(gm, "signature");
    for (const json& n : field(*graph_, "nodes")) nodes_.push_back(&n);
    for (const char* k : {"sym_int_values", "sym_float_values", "sym_bool_values"}) {
      if (!graph_->contains(k)) continue;
      Kind kind = k[4] == 'i' ? Kind::Int : k[4] == 'f' ? Kind::Float : Kind::Bool;
      for (auto it = (*graph_)[k].begin(); it != (*graph_)[k].end(); ++it) kinds_[it.key()] = kind;
    }
    if (graph_->contains("tensor_values"))
      for (auto it = (*graph_)["tensor_values"].begin(); it != (*graph_)["tensor_values"].end(); ++it)
        kinds_[it.key()] = Kind::Tensor;

    auto state = load_tensor_dict_bytes(a.state_dict, "serialized_state_dict.pt");
    auto consts = load_tensor_dict_bytes(a.constants, "serialized_constants.pt");
    std::map<std::string, at::Tensor> tensors(state.begin(), state.end());
    for (auto& c : consts) tensors.emplace(c.first, c.second);

    read_signature(sig, tensors);
    read_nodes();
    build_modules();
    schedule(root_);
    find_outputs();
    std::map<std::string, int> calls_per_module;
    name_methods(root_, calls_per_module);
    build_method(root_, field(gm, "module_call_graph"));
    root_module().eval();
    return root_module();
  }

  // ---- signature: graph inputs as parameters, buffers, constants and user inputs ----

  struct WeightSpec {
    std::string target;  // state_dict / constants name
    enum { Parameter, Buffer, Constant } what;
    at::Tensor value;
  };

  void read_signature(const json& sig, const std::map<std::string, at::Tensor>& tensors) {
    const json& specs = field(sig, "input_specs");
    const json& inputs = field(*graph_, "inputs");
    if (specs.size() != inputs.size()) malformed("the signature and the graph have different inputs");
    for (const json& s : specs) {
      auto [kind, body] = union_member(s);
      auto tensor = [&](const std::string& target) {
        auto it = tensors.find(target);
        if (it == tensors.end()) malformed("no tensor '" + target + "' in the archive's state_dict or constants");
        return it->second;
      };
      if (kind == "user_input") {
        auto [ak, arg] = union_member(field(*body, "arg"));
        if (ak != "as_tensor")
          throw Error(ExitCode::Unsupported,
                      "the exported model takes a non-tensor input (" + ak +
                          "); tinytrace converts models whose inputs are tensors — export it with "
                          "tensor inputs only");
        user_inputs_.push_back(field(*arg, "name").get<std::string>());
      } else if (kind == "parameter") {
        std::string name = field(field(*body, "arg"), "name").get<std::string>();
        std::string target = field(*body, "parameter_name").get<std::string>();
        weights_[name] = WeightSpec{target, WeightSpec::Parameter, tensor(target)};
      } else if (kind == "buffer") {
        std::string name = field(field(*body, "arg"), "name").get<std::string>();
        std::string target = field(*body, "buffer_name").get<std::string>();
        weights_[name] = WeightSpec{target, WeightSpec::Buffer, tensor(target)};
      } else if (kind == "tensor_constant") {
        std::string name = field(field(*body, "arg"), "name").get<std::string>();
        std::string target = field(*body, "tensor_constant_name").get<std::string>();
        weights_[name] = WeightSpec{target, WeightSpec::Constant, tensor(target)};
      } else {
        throw Error(ExitCode::Unsupported,
                    "the exported program has a " + kind +
                        " input (custom objects, effect tokens and constant inputs are not supported) — "
                        "export a model whose inputs are tensors and whose state is tensors");
      }
    }
    for (const json& s : field(sig, "output_specs")) {
      auto [kind, body] = union_member(s);
      if (kind == "user_output") continue;
      std::string what = kind == "buffer_mutation" ? "writes a buffer (" + body->value("buffer_name", std::string("?")) + ")"
                         : kind == "user_input_mutation" ? "writes into its input"
                                                         : "has a " + kind + " output (a training graph)";
      throw Error(ExitCode::Unsupported,
                  "the exported program " + what + "; tinytrace converts inference graphs — export the "
                  "model in eval mode (model.eval()) without in-place writes to its inputs or buffers");
    }
  }

  // ---- nodes: the call tree, producers and users ----

  static void collect_uses(const json& arg, std::vector<std::string>& out) {
    if (!arg.is_object()) return;
    for (auto it = arg.begin(); it != arg.end(); ++it) {
      const std::string& k = it.key();
      const json& v = it.value();
      if (k == "as_tensor" || k == "as_custom_obj") {
        out.push_back(v.at("name").get<std::string>());
      } else if (k == "as_tensors") {
        for (const json& t : v) out.push_back(t.at("name").get<std::string>());
      } else if (k == "as_optional_tensors") {
        for (const json& t : v)
          if (t.contains("as_tensor")) out.push_back(t["as_tensor"].at("name").get<std::string>());
      } else if (k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") {
        if (v.contains("as_name")) out.push_back(v["as_name"].get<std::string>());
      } else if (k == "as_sym_ints" || k == "as_sym_floats" || k == "as_sym_bools") {
        for (const json& e : v)
          if (e.contains("as_name")) out.push_back(e["as_name"].get<std::string>());
      }
    }
  }

  static void collect_defs(const json& out, std::vector<std::string>& names) {
    auto [k, v] = union_member(out);
    if (k == "as_tensor") names.push_back(v->at("name").get<std::string>());
    else if (k == "as_tensors")
      for (const json& t : *v) names.push_back(t.at("name").get<std::string>());
    else if ((k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") && v->contains("as_name"))
      names.push_back((*v)["as_name"].get<std::string>());
  }

  bool is_scalar_node(int i) const {
    const json& n = *nodes_[i];
    std::vector<std::string> defs;
    for (const json& o : n.at("outputs")) collect_defs(o, defs);
    if (defs.empty()) return false;
    for (const auto& d : defs) {
      auto it = kinds_.find(d);
      if (it == kinds_.end() || it->second == Kind::Tensor) return false;
    }
    return true;
  }

  Call* new_call(Call* parent, const StackEntry& e, const std::string& path) {
    calls_.emplace_back();
    Call* c = &calls_.back();
    c->key = e.key;
    c->path = path;
    c->cls = e.cls;
    c->parent = parent;
    if (parent) {
      parent->children.push_back(c);
      parent->by_key[e.key] = c;
    }
    return c;
  }

  // A decomposed program (ep.run_decompositions()) spells F.linear(x, w, b) as
  // addmm(b, x, permute(w, [1, 0])): with w and b a module's weight and bias, the pair is lifted as
  // the aten::linear it came from (so nn.Linear is recognised again). Records the addmm in linear_
  // and drops the permute.
  void fold_linear() {
    auto weight = [&](const json& arg, int64_t dims) -> std::optional<std::string> {
      if (!arg.contains("as_tensor")) return std::nullopt;
      std::string name = arg["as_tensor"].at("name").get<std::string>();
      auto w = weights_.find(name);
      if (w == weights_.end() || w->second.value.dim() != dims) return std::nullopt;
      return name;
    };
    for (size_t b = 0; b < nodes_.size(); ++b) {
      const json& n = *nodes_[b];
      if (dropped_[b] || n.at("target").get<std::string>() != "torch.ops.aten.addmm.default") continue;
      std::map<std::string, const json*> in;
      for (const json& a : n.at("inputs")) in[a.at("name").get<std::string>()] = &a.at("arg");
      auto is_one = [&](const char* k) {
        auto it = in.find(k);
        return it == in.end() || (it->second->contains("as_int") && (*it->second)["as_int"] == 1) ||
               (it->second->contains("as_float") && (*it->second)["as_float"] == 1.0);
      };
      if (!in.count("self") || !in.count("mat1") || !in.count("mat2") || !is_one("beta") || !is_one("alpha")) continue;
      auto bias = weight(*in["self"], 1);
      if (!bias || !in["mat2"]->contains("as_tensor") || !in["mat1"]->contains("as_tensor")) continue;
      std::string p = (*in["mat2"])["as_tensor"].at("name").get<std::string>();
      auto pi = producer_.find(p);
      if (pi == producer_.end() || users_[p].size() != 1 || graph_outputs().count(p)) continue;
      const json& perm = *nodes_[pi->second];
      std::string pt = perm.at("target").get<std::string>();
      const json& pin = perm.at("inputs");
      bool transpose = pt == "torch.ops.aten.t.default" && pin.size() == 1;
      if (pt == "torch.ops.aten.permute.default" && pin.size() == 2 && pin[1].at("arg").contains("as_ints"))
        transpose = pin[1]["arg"]["as_ints"] == json::array({1, 0});
      if (!transpose) continue;
      auto w = weight(pin[0].at("arg"), 2);
      if (!w) continue;
      dropped_[pi->second] = true;
      users_.erase(p);
      linear_[static_cast<int>(b)] = {(*in["mat1"])["as_tensor"].at("name").get<std::string>(), *w, *bias};
    }
  }

  void read_nodes() {
    StackEntry root_entry{"", "", "torch.nn.modules.module.Module"};
    root_ = new_call(nullptr, root_entry, "");
    node_call_.assign(nodes_.size(), nullptr);
    dropped_.assign(nodes_.size(), false);
    std::vector<std::vector<std::string>> uses(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const json& n = *nodes_[i];
      std::string target = field(n, "target").get<std::string>();
      if (is_dropped(target)) {
        dropped_[i] = true;
        continue;
      }
      for (const json& in : field(n, "inputs")) collect_uses(field(in, "arg"), uses[i]);
      std::vector<std::string> defs;
      for (const json& o : field(n, "outputs")) collect_defs(o, defs);
      for (const auto& d : defs) producer_[d] = static_cast<int>(i);
      Call* c = root_;
      std::string stack = n.contains("metadata") ? n["metadata"].value("nn_module_stack", std::string()) : "";
      bool any = false;
      for (const StackEntry& e : parse_stack(stack)) {
        any = true;
        if (e.path.empty()) {  // the root module
          if (c == root_ && !e.cls.empty()) root_->cls = e.cls;
          continue;
        }
        auto p = normalize_path(e.path);
        if (!p || p->empty()) continue;  // not a module attribute path: stays in its caller
        auto it = c->by_key.find(e.key);
        c = it != c->by_key.end() ? it->second : new_call(c, e, *p);
      }
      node_call_[i] = any ? c : nullptr;
    }
    // Scalar nodes whose results only fed dropped asserts go too.
    for (size_t r = nodes_.size(); r-- > 0;) {
      int i = static_cast<int>(r);
      if (dropped_[i]) continue;
      if (is_scalar_node(i)) {
        std::vector<std::string> defs;
        for (const json& o : nodes_[i]->at("outputs")) collect_defs(o, defs);
        bool used = false;
        for (const auto& d : defs) used = used || graph_outputs().count(d) || live_[d];
        if (!used) {
          dropped_[i] = true;
          continue;
        }
      }
      for (const auto& u : uses[i]) live_[u] = true;
    }
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (!dropped_[i])
        for (const auto& u : uses[i]) users_[u].push_back(static_cast<int>(i));
    fold_linear();
    // Scalar nodes and nodes without a stack go to the innermost call holding them and their uses.
    for (size_t r = nodes_.size(); r-- > 0;) {
      int i = static_cast<int>(r);
      if (dropped_[i] || (node_call_[i] && !is_scalar_node(i))) continue;
      std::vector<std::string> defs;
      for (const json& o : nodes_[i]->at("outputs")) collect_defs(o, defs);
      Call* lca = node_call_[i];
      for (const auto& d : defs) {
        if (graph_outputs().count(d)) lca = root_;
        for (int u : users_[d]) lca = lca ? common(lca, node_call_[u] ? node_call_[u] : root_) : node_call_[u];
      }
      node_call_[i] = lca ? lca : root_;
    }
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (!dropped_[i]) node_call_[i]->nodes.push_back(static_cast<int>(i));
  }

  // The values the graph returns.
  const std::set<std::string>& graph_outputs() {
    if (!outputs_read_) {
      std::vector<std::string> names;
      for (const json& o : field(*graph_, "outputs")) collect_uses(o, names);
      outputs_.insert(names.begin(), names.end());
      outputs_read_ = true;
    }
    return outputs_;
  }

  static int depth(const Call* c) {
    int d = 0;
    for (; c->parent; c = c->parent) ++d;
    return d;
  }
  static Call* common(Call* a, Call* b) {
    int da = depth(a), db = depth(b);
    for (; da > db; --da) a = a->parent;
    for (; db > da; --db) b = b->parent;
    while (a != b) {
      a = a->parent;
      b = b->parent;
    }
    return a;
  }
  static bool contains(const Call* outer, const Call* inner) {
    for (; inner; inner = inner->parent)
      if (inner == outer) return true;
    return false;
  }

  // ---- modules ----

  struct Mod {
    std::string cls;
    jit::Module module;
    std::vector<std::string> children;  // direct child names, in order
  };

  static std::string sanitize_component(const std::string& s) {
    std::string out;
    for (char ch : s) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
    return out;
  }

  // "__torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d": the tracer's naming, one class
  // per instance (the lifter strips "__torch__." and the mangle).
  std::string class_name(const std::string& cls) {
    std::vector<std::string> comps;
    size_t start = 0;
    while (start <= cls.size()) {
      size_t dot = cls.find('.', start);
      comps.push_back(sanitize_component(cls.substr(start, dot == std::string::npos ? std::string::npos : dot - start)));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    std::string q = "__torch__";
    for (size_t i = 0; i + 1 < comps.size(); ++i) q += "." + comps[i];
    return q + ".___torch_mangle_" + std::to_string(mangle_++) + "." + comps.back();
  }

  Mod& module_at(const std::string& path) {
    auto it = mods_.find(path);
    if (it != mods_.end()) return it->second;
    if (!path.empty()) {
      auto dot = path.rfind('.');
      std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
      module_at(parent).children.push_back(dot == std::string::npos ? path : path.substr(dot + 1));
    }
    Mod& m = mods_[path];
    return m;
  }

  jit::Module& root_module() { return mods_.at("").module; }

  void build_modules() {
    module_at("");
    // Paths in state_dict order first (the order of the module's own registration), then the
    // called modules that own no weights.
    for (const auto& [name, w] : weight_order()) {
      auto dot = w->target.rfind('.');
      module_at(dot == std::string::npos ? "" : w->target.substr(0, dot));
    }
    for (const Call& c : calls_) {
      if (c.path.empty()) continue;
      Mod& m = module_at(c.path);
      if (m.cls.empty()) m.cls = c.cls;
    }
    mods_[""].cls = root_->cls;
    cu_ = std::make_shared<jit::CompilationUnit>();
    for (auto& [path, m] : mods_) {
      std::string cls = m.cls.empty() ? "torch.nn.modules.module.Module" : m.cls;
      m.module = jit::Module(c10::QualifiedName(class_name(cls)), cu_, /*shouldMangle=*/false);
      m.module.register_attribute("training", c10::BoolType::get(), false);
    }
    for (const auto& [name, w] : weight_order()) {
      auto dot = w->target.rfind('.');
      std::string owner = dot == std::string::npos ? "" : w->target.substr(0, dot);
      std::string attr = dot == std::string::npos ? w->target : w->target.substr(dot + 1);
      jit::Module& m = mods_.at(owner).module;
      if (m.hasattr(attr)) continue;  // one tensor under two names (tied weights): the first
      at::Tensor t = w->value.detach();
      if (w->what == WeightSpec::Parameter)
        m.register_parameter(attr, t, /*is_buffer=*/false);
      else if (w->what == WeightSpec::Buffer)
        m.register_buffer(attr, t);
      else
        m.register_attribute(attr, c10::TensorType::get(), t);
    }
    // Children after the tensors, as nn.Module's state_dict orders them.
    std::function<void(const std::string&)> attach = [&](const std::string& path) {
      Mod& m = mods_.at(path);
      for (const auto& child : m.children) {
        std::string cp = path.empty() ? child : path + "." + child;
        attach(cp);
        if (!m.module.hasattr(child)) m.module.register_module(child, mods_.at(cp).module);
      }
    };
    attach("");
  }

  std::vector<std::pair<std::string, const WeightSpec*>> weight_order() const {
    std::vector<std::pair<std::string, const WeightSpec*>> out;
    for (const json& in : graph_->at("inputs")) {
      if (!in.contains("as_tensor")) continue;
      std::string name = in["as_tensor"].at("name").get<std::string>();
      auto it = weights_.find(name);
      if (it != weights_.end()) out.emplace_back(name, &it->second);
    }
    return out;
  }

  // ---- scheduling: the order of each call's nodes and sub-calls ----

  // The item of `c`'s level that node i belongs to: the node itself, a sub-call of c, or none
  // (outside c).
  std::optional<std::pair<int, Call*>> item_of(const Call* c, int i) const {
    Call* k = node_call_[i];
    if (k == c) return std::make_pair(i, static_cast<Call*>(nullptr));
    for (; k && k->parent != c; k = k->parent) {
    }
    if (!k) return std::nullopt;
    return std::make_pair(-1, k);
  }

  void subtree_nodes(const Call* c, std::vector<int>& out) const {
    out.insert(out.end(), c->nodes.begin(), c->nodes.end());
    for (const Call* k : c->children) subtree_nodes(k, out);
  }

  void dissolve(Call* c, Call* child) {
    for (int i : child->nodes) node_call_[i] = c;
    c->nodes.insert(c->nodes.end(), child->nodes.begin(), child->nodes.end());
    std::sort(c->nodes.begin(), c->nodes.end());
    child->nodes.clear();
    auto pos = std::find(c->children.begin(), c->children.end(), child);
    std::vector<Call*> grand = child->children;
    for (Call* g : grand) g->parent = c;
    pos = c->children.erase(pos);
    c->children.insert(pos, grand.begin(), grand.end());
    child->children.clear();
    spdlog::debug("export: the call of {} ({}) interleaves with its caller's nodes; inlined into {}", child->path,
                  child->key, c->path.empty() ? "the root" : c->path);
  }

  // Whether calling sub-call k as one unit could move an in-place write across a read: some node
  // of c's level lies between k's first and last node, and it writes in place, or it reads tensor
  // data while k writes in place in that stretch. (Size queries and scalar arithmetic, which
  // export places anywhere, read no data.)
  bool reorder_hazard(const Call* c, const Call* k, std::vector<int>& sub) const {
    std::sort(sub.begin(), sub.end());
    std::set<int> inside(sub.begin(), sub.end());
    std::vector<int> all;
    subtree_nodes(c, all);
    bool outside_writes = false, outside_reads = false;
    for (int o : all) {
      if (o <= sub.front() || o >= sub.back() || inside.count(o)) continue;
      std::string t = nodes_[o]->at("target").get<std::string>();
      outside_writes = outside_writes || is_inplace_target(t);
      outside_reads = outside_reads || !is_scalar_node(o);
    }
    if (outside_writes) return true;
    if (!outside_reads) return false;
    for (int i : sub)
      if (is_inplace_target(nodes_[i]->at("target").get<std::string>())) return true;
    return false;
  }

  void schedule(Call* c) {
    for (;;) {
      // Items: own nodes and sub-calls, each with the smallest node index it holds.
      std::vector<std::pair<int, Call*>> items;
      std::vector<int> first;
      std::map<std::pair<int, Call*>, size_t> index;
      for (int i : c->nodes) {
        index[{i, nullptr}] = items.size();
        items.push_back({i, nullptr});
        first.push_back(i);
      }
      Call* hazard = nullptr;
      for (Call* k : c->children) {
        std::vector<int> sub;
        subtree_nodes(k, sub);
        if (sub.empty()) continue;
        index[{-1, k}] = items.size();
        items.push_back({-1, k});
        first.push_back(*std::min_element(sub.begin(), sub.end()));
        if (!hazard && reorder_hazard(c, k, sub)) hazard = k;
      }
      if (hazard) {
        dissolve(c, hazard);
        continue;
      }
      std::vector<std::set<size_t>> succ(items.size());
      std::vector<int> indeg(items.size(), 0);
      std::vector<int> all;
      subtree_nodes(c, all);
      for (int m : all) {
        size_t to = index.at(*item_of(c, m));
        std::vector<std::string> uses;
        for (const json& in : nodes_[m]->at("inputs")) collect_uses(in.at("arg"), uses);
        for (const auto& u : uses) {
          auto p = producer_.find(u);
          if (p == producer_.end() || dropped_[p->second]) continue;
          auto from_item = item_of(c, p->second);
          if (!from_item) continue;
          size_t from = index.at(*from_item);
          if (from != to && succ[from].insert(to).second) ++indeg[to];
        }
      }
      using Entry = std::pair<int, size_t>;  // (first node index, item)
      std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
      for (size_t k = 0; k < items.size(); ++k)
        if (indeg[k] == 0) ready.push({first[k], k});
      std::vector<std::pair<int, Call*>> order;
      while (!ready.empty()) {
        size_t k = ready.top().second;
        ready.pop();
        order.push_back(items[k]);
        for (size_t s : succ[k])
          if (--indeg[s] == 0) ready.push({first[s], s});
      }
      if (order.size() == items.size()) {
        c->items = std::move(order);
        break;
      }
      // A cycle through sub-calls: dissolve the earliest one left and try again.
      Call* victim = nullptr;
      int best = INT_MAX;
      for (size_t k = 0; k < items.size(); ++k)
        if (indeg[k] > 0 && items[k].second && first[k] < best) {
          best = first[k];
          victim = items[k].second;
        }
      TT_ASSERT(victim, "a dependency cycle between the nodes of one call");
      dissolve(c, victim);
    }
    for (auto& it : c->items)
      if (it.second) schedule(it.second);
  }

  // ---- call results: the values used outside the call that computes them ----

  void find_outputs() {
    std::map<Call*, std::set<std::pair<int, std::string>>> outs;
    auto mark = [&](const std::string& v, int producer, Call* user) {
      for (Call* c = node_call_[producer]; c && !contains(c, user); c = c->parent) outs[c].insert({producer, v});
    };
    for (const auto& [v, p] : producer_) {
      if (dropped_[p]) continue;
      if (graph_outputs().count(v)) mark(v, p, root_);
      auto it = users_.find(v);
      if (it == users_.end()) continue;
      for (int u : it->second)
        if (!dropped_[u]) mark(v, p, node_call_[u]);
    }
    for (auto& [c, s] : outs)
      for (const auto& e : s) c->outputs.push_back(e.second);
  }

  void name_methods(Call* c, std::map<std::string, int>& count) {
    if (c != root_) {
      int n = count[c->path]++;
      c->method = n == 0 ? "forward" : "forward" + std::to_string(n);
    } else {
      c->method = "forward";
    }
    for (auto& it : c->items)
      if (it.second) name_methods(it.second, count);
  }

  // ---- method graphs ----

  c10::TypePtr type_of(const std::string& name) const {
    auto it = kinds_.find(name);
    Kind k = it == kinds_.end() ? Kind::Tensor : it->second;
    switch (k) {
      case Kind::Int: return c10::IntType::get();
      case Kind::Float: return c10::FloatType::get();
      case Kind::Bool: return c10::BoolType::get();
      case Kind::Tensor: break;
    }
    return c10::TensorType::get();
  }

  // The static type of a model input (dtype and sizes when every size is a number).
  c10::TypePtr input_type(const std::string& name) const {
    const json& tv = graph_->value("tensor_values", json::object());
    if (!tv.contains(name)) return c10::TensorType::get();
    const json& meta = tv[name];
    auto st = scalar_type(meta.value("dtype", int64_t{0}));
    std::vector<int64_t> sizes;
    bool all_static = true;
    for (const json& s : meta.value("sizes", json::array())) {
      if (s.contains("as_int")) sizes.push_back(s["as_int"].get<int64_t>());
      else all_static = false;
    }
    if (!st) return c10::TensorType::get();
    if (!all_static) return c10::TensorType::get()->withScalarType(*st);
    return c10::TensorType::createContiguous(*st, c10::Device(c10::kCPU), sizes);
  }

  jit::Value* add_input(Method& m, const std::string& key, const c10::TypePtr& type, const std::string& debug) {
    if (m.call == root_)
      throw Error(ExitCode::Internal, "export: value " + key + " used before it is defined");
    jit::Value* v = m.g->addInput();
    v->setType(type);
    if (!debug.empty()) v->setDebugName(debug);
    m.inputs.push_back(key);
    return v;
  }

  // A module object in m: a GetAttr chain from self when it is inside m's module, else an input.
  jit::Value* object(Method& m, const std::string& path) {
    auto it = m.objects.find(path);
    if (it != m.objects.end()) return it->second;
    const std::string& own = m.call->path;
    jit::Value* v = nullptr;
    if (path == own) {
      v = m.self;
    } else if (under(own, path)) {
      auto dot = path.rfind('.');
      std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
      v = m.g->insertGetAttr(object(m, parent), dot == std::string::npos ? path : path.substr(dot + 1));
    } else {
      v = add_input(m, "@module:" + path, mods_.at(path).module.type(), "");
    }
    m.objects[path] = v;
    return v;
  }

  jit::Value* value(Method& m, const std::string& name) {
    auto it = m.env.find(name);
    if (it != m.env.end()) return it->second;
    jit::Value* v = nullptr;
    auto w = weights_.find(name);
    if (w != weights_.end() && under(m.call->path, w->second.target)) {
      const std::string& t = w->second.target;
      auto dot = t.rfind('.');
      jit::Value* owner = object(m, dot == std::string::npos ? "" : t.substr(0, dot));
      v = m.g->insertGetAttr(owner, dot == std::string::npos ? t : t.substr(dot + 1));
      return v;  // a fresh read per use, as the tracer records them
    }
    v = add_input(m, name, type_of(name), name);
    m.env[name] = v;
    return v;
  }

  Method build_method(Call* c, const json& call_graph) {
    Method m;
    m.call = c;
    m.g = std::make_shared<jit::Graph>();
    jit::Module& mod = mods_.at(c->path).module;
    m.self = m.g->addInput("self");
    m.self->setType(mod.type());
    m.objects[c->path] = m.self;
    if (c == root_)
      for (const auto& name : user_inputs_) {
        jit::Value* v = m.g->addInput(name);
        v->setType(input_type(name));
        m.env[name] = v;
      }
    for (auto& [i, sub] : c->items) {
      if (!sub) {
        emit_node(m, i);
        continue;
      }
      Method s = build_method(sub, call_graph);
      std::vector<jit::Value*> args = {object(m, sub->path)};
      for (const auto& key : s.inputs)
        args.push_back(key.rfind("@module:", 0) == 0 ? object(m, key.substr(8)) : value(m, key));
      jit::Node* call = m.g->create(c10::prim::CallMethod, args, 1);
      call->s_(c10::attr::name, sub->method);
      m.g->insertNode(call);
      jit::Value* r = call->output();
      r->setType(s.g->outputs().at(0)->type());
      if (sub->outputs.size() == 1) {
        r->setDebugName(sub->outputs[0]);
        m.env[sub->outputs[0]] = r;
      } else if (sub->outputs.size() > 1) {
        jit::Node* un = m.g->insertNode(m.g->createTupleUnpack(r));
        for (size_t k = 0; k < sub->outputs.size(); ++k) {
          un->output(k)->setDebugName(sub->outputs[k]);
          m.env[sub->outputs[k]] = un->output(k);
        }
      }
    }
    if (c == root_) {
      m.g->registerOutput(root_result(m, call_graph));
    } else {
      std::vector<jit::Value*> outs;
      for (const auto& o : c->outputs) {
        auto it = m.env.find(o);
        TT_ASSERT(it != m.env.end(), "export: result " + o + " of " + c->path + " not computed there");
        outs.push_back(it->second);
      }
      if (outs.size() == 1)
        m.g->registerOutput(outs[0]);
      else if (outs.empty())
        m.g->registerOutput(m.g->insertConstant(IValue()));
      else
        m.g->registerOutput(m.g->insertNode(m.g->createTuple(outs))->output());
    }
    c10::ClassTypePtr type = mod.type();
    jit::Function* fn = cu_->create_function(c10::QualifiedName(*type->name(), c->method), m.g);
    type->addMethod(fn);
    return m;
  }

  // ---- the model's result, in the structure of the signature's out_spec ----

  jit::Value* output_value(Method& m, const json& arg) {
    auto [k, v] = union_member(arg);
    if (k == "as_tensor") return value(m, v->at("name").get<std::string>());
    if ((k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") && v->contains("as_name"))
      return value(m, (*v)["as_name"].get<std::string>());
    if (k == "as_none") return m.g->insertConstant(IValue());
    if (k == "as_int" || (k == "as_sym_int" && v->contains("as_int")))
      return m.g->insertConstant(k == "as_int" ? v->get<int64_t>() : (*v)["as_int"].get<int64_t>());
    if (k == "as_float") return m.g->insertConstant(v->get<double>());
    if (k == "as_bool") return m.g->insertConstant(v->get<bool>());
    throw Error(ExitCode::Unsupported, "the exported model returns a " + k + " — return tensors (or tuples, lists, dicts of them)");
  }

  jit::Value* root_result(Method& m, const json& call_graph) {
    std::vector<jit::Value*> flat;
    for (const json& o : field(*graph_, "outputs")) flat.push_back(output_value(m, o));
    json spec;
    for (const json& e : call_graph)
      if (e.value("fqn", std::string("?")).empty() && e.contains("signature") && e["signature"].is_object())
        try {
          spec = json::parse(e["signature"].value("out_spec", std::string()));
        } catch (const json::exception&) {
        }
    size_t next = 0;
    std::function<jit::Value*(const json&)> build = [&](const json& s) -> jit::Value* {
      std::string type = s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
      const json& kids = s.value("children_spec", json::array());
      if (type.empty()) {
        if (next >= flat.size()) malformed("out_spec has more leaves than the graph has outputs");
        return flat[next++];
      }
      std::vector<jit::Value*> items;
      for (const json& k : kids) items.push_back(build(k));
      if (type == "builtins.list") {
        c10::TypePtr et = items.empty() ? c10::TensorType::get() : items[0]->type();
        for (jit::Value* it : items)
          if (*it->type() != *et) return m.g->insertNode(m.g->createTuple(items))->output();
        return m.g->insertNode(m.g->createList(et, items))->output();
      }
      if (type == "builtins.dict" || type == "collections.OrderedDict") {
        json keys = json::parse(s.value("context", std::string("[]")));
        std::vector<jit::Value*> kv;
        bool ok = keys.is_array() && keys.size() == items.size() && !items.empty();
        for (size_t i = 0; ok && i < keys.size(); ++i) {
          ok = keys[i].is_string() && *items[i]->type() == *items[0]->type();
          if (ok) kv.push_back(m.g->insertConstant(keys[i].get<std::string>()));
        }
        if (ok)
          return m.g->insertNode(m.g->createDict(c10::StringType::get(), items[0]->type(), kv, items))->output();
      } else if (type != "builtins.tuple" && diags_) {
        diags_->warn("export-output", "the exported model returns a " + type +
                                          "; the converted model returns its fields as a tuple");
      }
      return m.g->insertNode(m.g->createTuple(items))->output();
    };
    jit::Value* r = nullptr;
    if (spec.is_array() && spec.size() == 2) {
      r = build(spec[1]);
      if (next != flat.size()) r = nullptr;
    }
    if (!r) r = flat.size() == 1 ? flat[0] : m.g->insertNode(m.g->createTuple(flat))->output();
    return r;
  }

  // ---- nodes ----

  std::string node_name(const json& n) const {
    std::vector<std::string> defs;
    for (const json& o : n.at("outputs")) collect_defs(o, defs);
    return defs.empty() ? std::string() : defs[0];
  }

  std::string where(const json& n, const Call* c) const {
    std::string w;
    std::string name = node_name(n);
    if (!name.empty()) w += " (node " + name;
    if (c && !c->path.empty()) w += std::string(name.empty() ? " (" : ", ") + "in module '" + c->path + "'";
    std::string loc = location(n).first;
    if (!loc.empty()) {
      auto slash = loc.find_last_of('/');
      w += std::string(w.empty() ? " (" : ", ") + "at " + (slash == std::string::npos ? loc : loc.substr(slash + 1)) +
           ":" + std::to_string(location(n).second);
    }
    return w.empty() ? w : w + ")";
  }

  // The offset of the innermost frame of the node's stack_trace outside torch itself (torch.cond's
  // own frames come last), else of the innermost one; npos when there is none.
  static size_t frame(const std::string& st) {
    size_t last = std::string::npos, user = std::string::npos;
    for (size_t f = st.find("File \""); f != std::string::npos; f = st.find("File \"", f + 1)) {
      last = f;
      auto q = st.find('"', f + 6);
      std::string file = q == std::string::npos ? "" : st.substr(f + 6, q - f - 6);
      bool in_torch = file.find("-packages/torch/") != std::string::npos || file.rfind("torch/", 0) == 0;
      if (!in_torch) user = f;
    }
    return user != std::string::npos ? user : last;
  }

  // (file, line) of that frame.
  static std::pair<std::string, size_t> location(const json& n) {
    if (!n.contains("metadata")) return {};
    std::string st = n["metadata"].value("stack_trace", std::string());
    auto f = frame(st);
    if (f == std::string::npos) return {};
    auto q = st.find('"', f + 6);
    auto l = q == std::string::npos ? q : st.find(", line ", q);
    if (q == std::string::npos || l == std::string::npos) return {};
    size_t line = std::strtoul(st.c_str() + l + 7, nullptr, 10);
    return {st.substr(f + 6, q - f - 6), line};
  }

  jit::SourceRange source_range(const json& n) {
    auto [file, line] = location(n);
    if (file.empty() || line == 0) return jit::SourceRange();
    auto key = std::make_pair(file, line);
    auto it = sources_.find(key);
    if (it == sources_.end()) {
      std::string st = n["metadata"].value("stack_trace", std::string());
      auto nl = st.find('\n', frame(st));
      std::string code = nl == std::string::npos ? "" : st.substr(nl + 1);
      code = code.substr(0, code.find('\n'));
      auto b = code.find_first_not_of(' ');
      code = b == std::string::npos ? " " : code.substr(b);
      it = sources_.emplace(key, std::make_shared<jit::Source>(code, file, line)).first;
    }
    return jit::SourceRange(it->second, 0, it->second->size());
  }

  [[noreturn]] void unsupported(const json& n, const Call* c, const std::string& what, const std::string& fix) const {
    throw Error(ExitCode::Unsupported, what + where(n, c) + " — " + fix);
  }

  static const c10::FunctionSchema* find_schema(const std::string& qual, const std::string& overload) {
    for (const auto& op : jit::getAllOperatorsFor(c10::Symbol::fromQualString(qual)))
      if (op->schema().overload_name() == overload) return &op->schema();
    return nullptr;
  }

  static bool is_float_type(const c10::TypePtr& t) {
    c10::TypePtr u = t;
    if (auto o = u->cast<c10::OptionalType>()) u = o->getElementType();
    return u->kind() == c10::TypeKind::FloatType;
  }
  static bool is_float_list(const c10::TypePtr& t) {
    c10::TypePtr u = t;
    if (auto o = u->cast<c10::OptionalType>()) u = o->getElementType();
    auto l = u->cast<c10::ListType>();
    return l && l->getElementType()->kind() == c10::TypeKind::FloatType;
  }

  // A serialized argument as a value of m; `formal` is the schema's type (numbers follow it).
  jit::Value* arg_value(Method& m, const json& arg, const c10::TypePtr& formal, const json& n) {
    auto [k, v] = union_member(arg);
    jit::Graph& g = *m.g;
    bool to_float = formal && is_float_type(formal);
    if (k == "as_none") return g.insertConstant(IValue());
    if (k == "as_tensor") return value(m, v->at("name").get<std::string>());
    if (k == "as_tensors") {
      std::vector<jit::Value*> items;
      for (const json& t : *v) items.push_back(value(m, t.at("name").get<std::string>()));
      // Tensor?[] where the schema says so (aten.index.Tensor, index_put_): a Tensor[] would
      // match TorchScript's own hacked_twin overloads, which only the JIT knows.
      auto l = formal ? formal->cast<c10::ListType>() : nullptr;
      bool optional = l && l->getElementType()->kind() == c10::TypeKind::OptionalType;
      c10::TypePtr et = c10::TensorType::get();
      if (optional) et = c10::OptionalType::create(et);
      return g.insertNode(g.createList(et, items))->output();
    }
    if (k == "as_optional_tensors") {
      std::vector<jit::Value*> items;
      for (const json& t : *v)
        items.push_back(t.contains("as_tensor") ? value(m, t["as_tensor"].at("name").get<std::string>()) : g.insertConstant(IValue()));
      return g.insertNode(g.createList(c10::OptionalType::create(c10::TensorType::get()), items))->output();
    }
    if (k == "as_int") return to_float ? g.insertConstant(double(v->get<int64_t>())) : g.insertConstant(v->get<int64_t>());
    if (k == "as_float") return g.insertConstant(v->get<double>());
    if (k == "as_bool") return g.insertConstant(v->get<bool>());
    if (k == "as_string") return g.insertConstant(v->get<std::string>());
    if (k == "as_ints") {
      if (formal && is_float_list(formal)) {
        std::vector<double> d;
        for (const json& e : *v) d.push_back(double(e.get<int64_t>()));
        return g.insertConstant(d);
      }
      return g.insertConstant(v->get<std::vector<int64_t>>());
    }
    if (k == "as_floats") return g.insertConstant(v->get<std::vector<double>>());
    if (k == "as_bools") {
      c10::List<bool> l;
      for (const json& e : *v) l.push_back(e.get<bool>());
      return g.insertConstant(l);
    }
    if (k == "as_strings") {
      c10::List<std::string> l;
      for (const json& e : *v) l.push_back(e.get<std::string>());
      return g.insertConstant(l);
    }
    if (k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") {
      if (v->contains("as_name")) return value(m, (*v)["as_name"].get<std::string>());
      auto [ck, cv] = union_member(*v);
      if (ck == "as_int") return to_float ? g.insertConstant(double(cv->get<int64_t>())) : g.insertConstant(cv->get<int64_t>());
      if (ck == "as_float") return g.insertConstant(cv->get<double>());
      if (ck == "as_bool") return g.insertConstant(cv->get<bool>());
      malformed("unknown " + k + " member " + ck);
    }
    if (k == "as_sym_ints" || k == "as_sym_floats" || k == "as_sym_bools") {
      c10::TypePtr et = k == "as_sym_ints" ? c10::TypePtr(c10::IntType::get())
                        : k == "as_sym_floats" ? c10::TypePtr(c10::FloatType::get())
                                               : c10::TypePtr(c10::BoolType::get());
      bool all_const = true;
      for (const json& e : *v) all_const = all_const && !e.contains("as_name");
      if (all_const && k == "as_sym_ints") {
        std::vector<int64_t> ints;
        for (const json& e : *v) ints.push_back(e.at("as_int").get<int64_t>());
        return g.insertConstant(ints);
      }
      std::vector<jit::Value*> items;
      for (const json& e : *v) {
        if (e.contains("as_name")) {
          items.push_back(value(m, e["as_name"].get<std::string>()));
          continue;
        }
        auto [ck, cv] = union_member(e);
        if (ck == "as_int") items.push_back(g.insertConstant(cv->get<int64_t>()));
        else if (ck == "as_float") items.push_back(g.insertConstant(cv->get<double>()));
        else if (ck == "as_bool") items.push_back(g.insertConstant(cv->get<bool>()));
        else malformed("unknown " + k + " member " + ck);
      }
      return g.insertNode(g.createList(et, items))->output();
    }
    if (k == "as_scalar_type") {
      auto st = scalar_type(v->get<int64_t>());
      if (!st) malformed("unknown scalar type " + v->dump());
      return g.insertConstant(static_cast<int64_t>(*st));
    }
    if (k == "as_memory_format") {
      static const std::map<int64_t, c10::MemoryFormat> mf = {{1, c10::MemoryFormat::Contiguous},
                                                              {2, c10::MemoryFormat::ChannelsLast},
                                                              {3, c10::MemoryFormat::ChannelsLast3d},
                                                              {4, c10::MemoryFormat::Preserve}};
      auto it = mf.find(v->get<int64_t>());
      if (it == mf.end()) malformed("unknown memory format " + v->dump());
      return g.insertConstant(static_cast<int64_t>(it->second));
    }
    if (k == "as_layout") {
      if (v->get<int64_t>() != 7)
        unsupported(n, nullptr, "a tensor layout other than strided", "use dense (strided) tensors");
      return g.insertConstant(static_cast<int64_t>(c10::kStrided));
    }
    if (k == "as_device") {
      std::string type = v->value("type", std::string("cpu"));
      std::string dev = type;
      if (v->contains("index") && (*v)["index"].is_number()) dev += ":" + std::to_string((*v)["index"].get<int64_t>());
      return g.insertConstant(c10::Device(dev));
    }
    if (k == "as_graph")
      unsupported(n, nullptr, "a subgraph argument (control flow such as torch.cond or torch.map)",
                  "export the model without data-dependent control flow");
    if (k == "as_custom_obj")
      unsupported(n, nullptr, "a custom class object argument", "export the model without TorchScript custom classes");
    unsupported(n, nullptr, "an argument of kind " + k, "export the model without it");
  }

  void bind_outputs(Method& m, jit::Node* node, const json& n) {
    const json& outs = n.at("outputs");
    auto bind = [&](const json& o, jit::Value* v) {
      auto [k, body] = union_member(o);
      if (k == "as_tensor") {
        std::string name = body->at("name").get<std::string>();
        v->setDebugName(name);
        m.env[name] = v;
      } else if (k == "as_tensors") {
        jit::Node* un = m.g->insertNode(m.g->createListUnpack(v, body->size()));
        un->setSourceRange(node->sourceRange());
        for (size_t i = 0; i < body->size(); ++i) {
          std::string name = (*body)[i].at("name").get<std::string>();
          un->output(i)->setDebugName(name);
          m.env[name] = un->output(i);
        }
      } else if ((k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") && body->contains("as_name")) {
        std::string name = (*body)["as_name"].get<std::string>();
        v->setDebugName(name);
        m.env[name] = v;
      }
    };
    for (size_t i = 0; i < outs.size() && i < node->outputs().size(); ++i) bind(outs[i], node->output(i));
  }

  // A node of `kind` on `ins` with the outputs of the overload LibTorch matches; nullptr when none
  // matches.
  jit::Node* make_node(Method& m, const std::string& kind, const std::vector<jit::Value*>& ins, const json& n) {
    jit::Node* node = m.g->create(c10::Symbol::fromQualString(kind), ins, 0);
    node->setSourceRange(source_range(n));
    const c10::FunctionSchema* s = node->maybeSchema();
    if (!s) {
      // A number for a Tensor argument with no Scalar overload: as a 0-dim tensor (what Python
      // passes as a wrapped number).
      for (size_t i = 0; i < ins.size(); ++i) {
        auto k = ins[i]->type()->kind();
        if (k != c10::TypeKind::IntType && k != c10::TypeKind::FloatType && k != c10::TypeKind::BoolType) continue;
        jit::WithInsertPoint guard(m.g->block());
        jit::Node* t = m.g->insertNode(m.g->create(c10::prim::NumToTensor, {ins[i]}, 1));
        t->output()->setType(c10::TensorType::get());
        node->replaceInput(i, t->output());
        if ((s = node->maybeSchema())) break;
      }
    }
    if (!s) {
      node->destroy();
      return nullptr;
    }
    m.g->insertNode(node);
    for (const auto& r : s->returns()) node->addOutput()->setType(r.type());
    return node;
  }

  static bool is_inplace_target(const std::string& target) {
    auto dot = target.rfind('.');
    std::string name = dot == std::string::npos ? target : target.substr(0, dot);
    return name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_';
  }

  // Identity in an inference graph: detach/detach_/alias, and lift_fresh_copy (the copy export
  // puts on a tensor literal of the forward, `torch.tensor([2, 0, 1])`) unless something writes
  // into the copy in place (then it is a clone). Binds the result and returns true.
  bool alias_of(Method& m, int i, const std::string& target) {
    static const std::set<std::string> identity = {
        "torch.ops.aten.detach.default", "torch.ops.aten.detach_.default", "torch.ops.aten.alias.default",
        "torch.ops.aten.lift_fresh_copy.default"};
    if (!identity.count(target)) return false;
    const json& n = *nodes_[i];
    const json& ins = n.at("inputs");
    std::vector<std::string> defs;
    for (const json& o : n.at("outputs")) collect_defs(o, defs);
    if (ins.size() != 1 || defs.size() != 1 || !ins[0].at("arg").contains("as_tensor")) return false;
    if (target == "torch.ops.aten.lift_fresh_copy.default") {
      // Written in place, directly or through an alias (detach_ itself writes nothing): a copy.
      std::vector<std::string> work = {defs[0]};
      while (!work.empty()) {
        std::string v = work.back();
        work.pop_back();
        for (int u : users_[v]) {
          std::string t = nodes_[u]->at("target").get<std::string>();
          if (identity.count(t)) {
            for (const json& o : nodes_[u]->at("outputs")) collect_defs(o, work);
          } else if (is_inplace_target(t)) {
            jit::Value* src = value(m, ins[0]["arg"]["as_tensor"].at("name").get<std::string>());
            jit::Node* c = make_node(m, "aten::clone", {src, m.g->insertConstant(IValue())}, n);
            TT_ASSERT(c, "aten::clone has no overload for a tensor");
            bind_outputs(m, c, n);
            return true;
          }
        }
      }
    }
    m.env[defs[0]] = value(m, ins[0]["arg"]["as_tensor"].at("name").get<std::string>());
    return true;
  }

  bool only_first_output_used(const json& n) {
    const json& outs = n.at("outputs");
    for (size_t k = 1; k < outs.size(); ++k) {
      std::vector<std::string> defs;
      collect_defs(outs[k], defs);
      for (const auto& d : defs)
        if (graph_outputs().count(d) || !users_[d].empty()) return false;
    }
    return true;
  }

  void emit_node(Method& m, int i) {
    const json& n = *nodes_[i];
    std::string target = n.at("target").get<std::string>();
    Call* c = m.call;
    auto sop = scalar_ops().find(target);
    if (sop != scalar_ops().end()) {
      std::vector<jit::Value*> ins;
      for (const json& in : n.at("inputs")) ins.push_back(arg_value(m, in.at("arg"), nullptr, n));
      jit::Node* node = make_node(m, sop->second, ins, n);
      if (!node)
        unsupported(n, c, target + " on these operands has no TorchScript form", "export the model without it");
      bind_outputs(m, node, n);
      return;
    }
    if (alias_of(m, i, target)) return;
    auto lin = linear_.find(i);
    if (lin != linear_.end()) {
      const auto& [x, w, b] = lin->second;
      jit::Node* node = make_node(m, "aten::linear", {value(m, x), value(m, w), value(m, b)}, n);
      TT_ASSERT(node, "aten::linear has no overload for tensors");
      bind_outputs(m, node, n);
      return;
    }
    const std::string aten = "torch.ops.aten.";
    if (target.rfind(aten, 0) != 0) {
      std::string what;
      if (target.rfind("torch.ops.higher_order.", 0) == 0)
        what = target + ": a higher-order op (control flow or a wrapped subgraph) is not supported";
      else if (target.rfind("torch.ops.", 0) == 0)
        what = target + ": an operator outside ATen (a custom or prims op) is not supported";
      else
        what = target + ": a Python call in the exported graph is not supported";
      unsupported(n, c, what, "replace it in the model, or export it without it");
    }
    std::string rest = target.substr(aten.size());
    auto dot = rest.rfind('.');
    if (dot == std::string::npos) malformed("node target " + target + " has no overload");
    std::string name = rest.substr(0, dot), overload = rest.substr(dot + 1);
    if (overload == "default") overload = "";
    std::map<std::string, const json*> given;
    for (const json& in : n.at("inputs")) given[in.at("name").get<std::string>()] = &in.at("arg");
    // Symbolic sizes as the TorchScript size ops, and the private ops of a decomposed program as
    // the public ones they stand for (same argument names; the dropped flag must be false).
    static const std::map<std::string, std::tuple<const char*, const char*, const char*>> renamed = {
        {"sym_size.int", {"size", "int", nullptr}},
        {"sym_stride.int", {"stride", "int", nullptr}},
        {"sym_numel.", {"numel", "", nullptr}},
        {"sym_storage_offset.", {"storage_offset", "", nullptr}},
        {"_adaptive_avg_pool2d.", {"adaptive_avg_pool2d", "", nullptr}},
        {"_adaptive_avg_pool3d.", {"adaptive_avg_pool3d", "", nullptr}},
        {"_softmax.", {"softmax", "int", "half_to_float"}},
        {"_log_softmax.", {"log_softmax", "int", "half_to_float"}},
        {"_unsafe_view.", {"view", "", nullptr}},
    };
    auto rit = renamed.find(name + "." + overload);
    if (rit != renamed.end()) {
      const char* flag = std::get<2>(rit->second);
      auto f = flag ? given.find(flag) : given.end();
      bool off = !flag || (f != given.end() && f->second->contains("as_bool") && !(*f->second)["as_bool"].get<bool>());
      if (off) {
        if (flag) given.erase(f);
        name = std::get<0>(rit->second);
        overload = std::get<1>(rit->second);
      }
    }
    std::string qual = "aten::" + name + (overload.empty() ? "" : "." + overload);
    const c10::FunctionSchema* schema = find_schema("aten::" + name, overload);
    if (!schema)
      unsupported(n, c, "ATen operator " + qual + " is unknown to this LibTorch",
                  "export the model with the PyTorch version tinytrace is built with (2.6)");
    std::vector<jit::Value*> ins;
    for (const c10::Argument& a : schema->arguments()) {
      auto it = given.find(a.name());
      if (it != given.end()) {
        ins.push_back(arg_value(m, *it->second, a.type(), n));
        given.erase(it);
        continue;
      }
      if (!a.default_value())
        malformed("node " + node_name(n) + " (" + qual + ") has no argument '" + a.name() + "'");
      IValue d = *a.default_value();
      auto lt = a.type()->cast<c10::ListType>();
      if (d.isInt() && lt && a.N()) d = IValue(std::vector<int64_t>(static_cast<size_t>(*a.N()), d.toInt()));
      if (d.isInt() && is_float_type(a.type())) d = IValue(double(d.toInt()));
      ins.push_back(m.g->insertConstant(d));
    }
    if (!given.empty())
      malformed("node " + node_name(n) + " (" + qual + ") has an argument '" + given.begin()->first +
                "' its schema does not have");
    std::string kind = schema->name();
    // A decomposed program's convolution and inference batch norm, as the ops they came from.
    if (qual == "aten::convolution") {
      // _convolution's extra flags (benchmark, deterministic, cudnn_enabled, allow_tf32) do not
      // change the result; the lifter writes it as F.conv{N}d / nn.Conv{N}d.
      for (bool flag : {false, false, true, true}) ins.push_back(m.g->insertConstant(flag));
      kind = "aten::_convolution";
    } else if (qual == "aten::_native_batch_norm_legit_no_training" && only_first_output_used(n)) {
      ins = {ins[0], ins[1], ins[2], ins[3], ins[4], m.g->insertConstant(false), ins[5], ins[6],
             m.g->insertConstant(true)};
      kind = "aten::batch_norm";
    }
    jit::Node* node = make_node(m, kind, ins, n);
    if (!node)
      unsupported(n, c, qual + " with these argument types has no TorchScript overload",
                  "replace the op in the model");
    bind_outputs(m, node, n);
  }

  std::string path_;
  Diagnostics* diags_;
  const json* graph_ = nullptr;
  std::vector<const json*> nodes_;
  std::unordered_map<std::string, Kind> kinds_;
  std::map<std::string, WeightSpec> weights_;  // graph input name -> parameter/buffer/constant
  std::vector<std::string> user_inputs_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> users_;
  std::unordered_map<std::string, bool> live_;
  std::map<int, std::tuple<std::string, std::string, std::string>> linear_;  // addmm -> (x, weight, bias)
  std::set<std::string> outputs_;
  bool outputs_read_ = false;
  std::deque<Call> calls_;
  Call* root_ = nullptr;
  std::vector<Call*> node_call_;
  std::vector<bool> dropped_;
  std::map<std::string, Mod> mods_;
  std::shared_ptr<jit::CompilationUnit> cu_;
  int mangle_ = 0;
  std::map<std::pair<std::string, size_t>, std::shared_ptr<jit::Source>> sources_;
};

}  // namespace

torch::jit::Module export_to_module(const std::string& path, Diagnostics* diags) {
  try {
    return Builder(path, diags).run();
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(ExitCode::Unsupported, "cannot read the exported program: " + first_line(e.what_without_backtrace()) +
                                           " — please report this with the model");
  } catch (const std::exception& e) {
    throw Error(ExitCode::Unsupported,
                "cannot read the exported program: " + first_line(e.what()) + " — please report this with the model");
  }
}

std::unique_ptr<Graph> load_export(const std::string& path, Diagnostics& diags,
                                   std::vector<std::pair<std::string, std::string>>* source_values) {
  jit::Module module = export_to_module(path, &diags);
  try {
    return lift_jit_module(module, diags, source_values);
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(ExitCode::Unsupported, "cannot lift the exported program: " + first_line(e.what_without_backtrace()) +
                                           " — please report this with the model");
  } catch (const std::exception& e) {
    throw Error(ExitCode::Unsupported,
                "cannot lift the exported program: " + first_line(e.what()) + " — please report this with the model");
  }
}

}  // namespace tt
