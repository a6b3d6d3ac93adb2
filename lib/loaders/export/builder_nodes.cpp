// The torch.export module builder (builder.h): the program's nodes as TorchScript nodes.
#include "loaders/export/builder.h"

#include <torch/csrc/jit/runtime/operator.h>

#include <cstdlib>

namespace tt::pt2 {

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

std::string Builder::node_name(const json& n) const {
  std::vector<std::string> defs;
  for (const json& o : n.at("outputs")) collect_defs(o, defs);
  return defs.empty() ? std::string() : defs[0];
}

std::string Builder::where(const json& n, const Call* c) const {
  std::string w;
  std::string name = node_name(n);
  if (!name.empty()) w += " (node " + name;
  if (c && !c->path.empty())
    w += std::string(name.empty() ? " (" : ", ") + "in module '" + c->path + "'";
  std::string loc = short_loc(n);
  if (!loc.empty()) w += std::string(w.empty() ? " (" : ", ") + "at " + loc;
  return w.empty() ? w : w + ")";
}

std::string Builder::short_loc(const json& n) const {
  auto [file, line] = location(n);
  if (file.empty()) return "";
  return source_file_label(file) + ":" + std::to_string(line);
}

// The offset of the innermost frame of the node's stack_trace outside torch itself (torch.cond's
// own frames come last), else of the innermost one; npos when there is none.
size_t Builder::frame(const std::string& st) {
  size_t last = std::string::npos, user = std::string::npos;
  for (size_t f = st.find("File \""); f != std::string::npos; f = st.find("File \"", f + 1)) {
    last = f;
    auto q = st.find('"', f + 6);
    std::string file = q == std::string::npos ? "" : st.substr(f + 6, q - f - 6);
    bool in_torch =
        file.find("-packages/torch/") != std::string::npos || file.rfind("torch/", 0) == 0;
    if (!in_torch) user = f;
  }
  return user != std::string::npos ? user : last;
}

// (file, line) of that frame.
std::pair<std::string, size_t> Builder::location(const json& n) {
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

jit::SourceRange Builder::source_range(const json& n) {
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

void Builder::unsupported(const json& n, const Call* c, const std::string& what,
                          const std::string& fix) const {
  throw Error(ExitCode::Unsupported, what + where(n, c) + " — " + fix)
      .at({node_name(n), c ? c->path : "", short_loc(n)});
}

const c10::FunctionSchema* Builder::find_schema(const std::string& qual,
                                                const std::string& overload) {
  for (const auto& op : jit::getAllOperatorsFor(c10::Symbol::fromQualString(qual)))
    if (op->schema().overload_name() == overload) return &op->schema();
  return nullptr;
}

bool Builder::is_float_type(const c10::TypePtr& t) {
  c10::TypePtr u = t;
  if (auto o = u->cast<c10::OptionalType>()) u = o->getElementType();
  return u->kind() == c10::TypeKind::FloatType;
}

bool Builder::is_float_list(const c10::TypePtr& t) {
  c10::TypePtr u = t;
  if (auto o = u->cast<c10::OptionalType>()) u = o->getElementType();
  auto l = u->cast<c10::ListType>();
  return l && l->getElementType()->kind() == c10::TypeKind::FloatType;
}

// A serialized argument as a value of m; `formal` is the schema's type (numbers follow it).
jit::Value* Builder::arg_value(Method& m, const json& arg, const c10::TypePtr& formal,
                               const json& n) {
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
      items.push_back(t.contains("as_tensor")
                          ? value(m, t["as_tensor"].at("name").get<std::string>())
                          : g.insertConstant(IValue()));
    return g.insertNode(g.createList(c10::OptionalType::create(c10::TensorType::get()), items))
        ->output();
  }
  if (k == "as_int")
    return to_float ? g.insertConstant(double(v->get<int64_t>()))
                    : g.insertConstant(v->get<int64_t>());
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
    if (ck == "as_int")
      return to_float ? g.insertConstant(double(cv->get<int64_t>()))
                      : g.insertConstant(cv->get<int64_t>());
    if (ck == "as_float") return g.insertConstant(cv->get<double>());
    if (ck == "as_bool") return g.insertConstant(cv->get<bool>());
    malformed("unknown " + k + " member " + ck);
  }
  if (k == "as_sym_ints" || k == "as_sym_floats" || k == "as_sym_bools") {
    c10::TypePtr et = k == "as_sym_ints"     ? c10::TypePtr(c10::IntType::get())
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
      if (ck == "as_int")
        items.push_back(g.insertConstant(cv->get<int64_t>()));
      else if (ck == "as_float")
        items.push_back(g.insertConstant(cv->get<double>()));
      else if (ck == "as_bool")
        items.push_back(g.insertConstant(cv->get<bool>()));
      else
        malformed("unknown " + k + " member " + ck);
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
    if (v->contains("index") && (*v)["index"].is_number())
      dev += ":" + std::to_string((*v)["index"].get<int64_t>());
    return g.insertConstant(c10::Device(dev));
  }
  if (k == "as_graph")
    unsupported(n, nullptr, "a subgraph argument (control flow such as torch.cond or torch.map)",
                "export the model without data-dependent control flow");
  if (k == "as_custom_obj")
    unsupported(n, nullptr, "a custom class object argument",
                "export the model without TorchScript custom classes");
  unsupported(n, nullptr, "an argument of kind " + k, "export the model without it");
}

void Builder::bind_outputs(Method& m, jit::Node* node, const json& n) {
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
    } else if ((k == "as_sym_int" || k == "as_sym_float" || k == "as_sym_bool") &&
               body->contains("as_name")) {
      std::string name = (*body)["as_name"].get<std::string>();
      v->setDebugName(name);
      m.env[name] = v;
    }
  };
  for (size_t i = 0; i < outs.size() && i < node->outputs().size(); ++i)
    bind(outs[i], node->output(i));
}

// A node of `kind` on `ins` with the outputs of the overload LibTorch matches; nullptr when none
// matches.
jit::Node* Builder::make_node(Method& m, const std::string& kind,
                              const std::vector<jit::Value*>& ins, const json& n) {
  jit::Node* node = m.g->create(c10::Symbol::fromQualString(kind), ins, 0);
  node->setSourceRange(source_range(n));
  const c10::FunctionSchema* s = node->maybeSchema();
  if (!s) {
    // A number for a Tensor argument with no Scalar overload: as a 0-dim tensor (what Python
    // passes as a wrapped number).
    for (size_t i = 0; i < ins.size(); ++i) {
      auto k = ins[i]->type()->kind();
      if (k != c10::TypeKind::IntType && k != c10::TypeKind::FloatType &&
          k != c10::TypeKind::BoolType)
        continue;
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

bool Builder::is_inplace_target(const std::string& target) {
  auto dot = target.rfind('.');
  std::string name = dot == std::string::npos ? target : target.substr(0, dot);
  return name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_';
}

// Identity in an inference graph: detach/detach_/alias, and lift_fresh_copy (the copy export
// puts on a tensor literal of the forward, `torch.tensor([2, 0, 1])`) unless something writes
// into the copy in place (then it is a clone). Binds the result and returns true.
bool Builder::alias_of(Method& m, int i, const std::string& target) {
  static const std::set<std::string> identity = {
      "torch.ops.aten.detach.default", "torch.ops.aten.detach_.default",
      "torch.ops.aten.alias.default", "torch.ops.aten.lift_fresh_copy.default"};
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

bool Builder::only_first_output_used(const json& n) {
  const json& outs = n.at("outputs");
  for (size_t k = 1; k < outs.size(); ++k) {
    std::vector<std::string> defs;
    collect_defs(outs[k], defs);
    for (const auto& d : defs)
      if (graph_outputs().count(d) || !users_[d].empty()) return false;
  }
  return true;
}

void Builder::emit_node(Method& m, int i) {
  const json& n = *nodes_[i];
  std::string target = n.at("target").get<std::string>();
  Call* c = m.call;
  auto sop = scalar_ops().find(target);
  if (sop != scalar_ops().end()) {
    std::vector<jit::Value*> ins;
    for (const json& in : n.at("inputs")) ins.push_back(arg_value(m, in.at("arg"), nullptr, n));
    jit::Node* node = make_node(m, sop->second, ins, n);
    if (!node)
      unsupported(n, c, target + " on these operands has no TorchScript form",
                  "export the model without it");
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
    bool off = !flag || (f != given.end() && f->second->contains("as_bool") &&
                         !(*f->second)["as_bool"].get<bool>());
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
    if (d.isInt() && lt && a.N())
      d = IValue(std::vector<int64_t>(static_cast<size_t>(*a.N()), d.toInt()));
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
    ins = {ins[0], ins[1], ins[2],
           ins[3], ins[4], m.g->insertConstant(false),
           ins[5], ins[6], m.g->insertConstant(true)};
    kind = "aten::batch_norm";
  }
  jit::Node* node = make_node(m, kind, ins, n);
  if (!node)
    unsupported(n, c, qual + " with these argument types has no TorchScript overload",
                "replace the op in the model");
  bind_outputs(m, node, n);
}

}  // namespace tt::pt2
