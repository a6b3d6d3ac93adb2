// The Python emitter's calls: module calls (self.conv1(x)), torch / F / Tensor method calls with
// the arguments equal to their defaults left out, torch.ops.aten fallbacks, infix operators and
// indexing (x[i, :, j], x[:, a:b], x[i] = v).
//
// Note [Dropping default arguments]
// Function and method ops carry every ATen argument, constants included. Trailing positional
// arguments and keyword arguments equal to the ATen schema's default are left out, which is exact
// for torch.* and Tensor.* (their Python bindings are generated from those schemas) and for the
// F.* wrappers the op table uses (their Python defaults match the ATen defaults; a unit test
// compares the two). The schema is looked up in the dispatcher (ATen core, not the JIT). When an
// op has several candidate overloads, an argument is dropped only if all of them agree.
#include "emitters/python/emitter.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <set>

namespace tt::pyemit {
namespace {

// ---------------------------------------------------------------------------------------------
// ATen schemas (Note [Dropping default arguments])

const c10::FunctionSchema* find_schema(const std::string& qualified) {
  size_t sep = qualified.find("::");
  if (sep == std::string::npos) return nullptr;
  size_t dot = qualified.find('.', sep + 2);
  std::string name = qualified.substr(0, dot);
  std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
  if (overload == "default") overload.clear();
  auto handle = c10::Dispatcher::singleton().findSchema({name, overload});
  if (!handle) return nullptr;
  return &handle->schema();
}

bool matches_default(const AttrValue& v, const c10::IValue& d) {
  if (d.isNone()) return std::holds_alternative<NoneAttr>(v);
  if (d.isBool()) return std::holds_alternative<bool>(v) && std::get<bool>(v) == d.toBool();
  if (d.isInt()) {
    if (auto* i = std::get_if<int64_t>(&v)) return *i == d.toInt();
    if (auto* f = std::get_if<double>(&v)) return *f == static_cast<double>(d.toInt());
    return false;
  }
  if (d.isDouble()) {
    if (auto* f = std::get_if<double>(&v)) return *f == d.toDouble();
    if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i) == d.toDouble();
    return false;
  }
  if (d.isString()) {
    auto* s = std::get_if<std::string>(&v);
    return s && *s == d.toStringRef();
  }
  if (d.isList()) {
    auto* l = std::get_if<std::vector<int64_t>>(&v);
    if (!l) return false;
    auto items = d.toListRef();
    if (items.size() != l->size()) return false;
    for (size_t i = 0; i < l->size(); ++i)
      if (!items[i].isInt() || items[i].toInt() != (*l)[i]) return false;
    return true;
  }
  return false;
}

}  // namespace

void PyEmitter::emit_module_call(const Node& n, std::vector<std::string>& body) {
  std::vector<std::string> args;
  for (Value* v : n.inputs()) args.push_back(expr(v).text);
  std::string callee = module_ref(n.module());
  size_t dot = n.op().find('.');
  std::string prefix = n.op().substr(0, dot);
  if (method_module_classes().count(prefix)) callee += n.op().substr(dot);  // self.ff.add
  assign(n, callee + "(" + join(args, ", ") + ")", module_hint(n.module()), false, body);
}

// The overloads the node may stand for: those with room for all its inputs and whose argument
// types fit its constant inputs (so conv2d's `str padding` overload does not veto dropping
// padding=[0, 0]).
std::vector<const c10::FunctionSchema*> PyEmitter::candidate_schemas(const Node& n,
                                                                     const OpInfo* info) {
  std::vector<const c10::FunctionSchema*> out;
  std::vector<std::string> names;
  if (info && !not_in_aten_order(info->name))
    names = info->aten;
  else if (!info && n.op().find("::") != std::string::npos)
    names.push_back(n.op());
  for (const auto& q : names) {
    const c10::FunctionSchema* s = find_schema(q);
    if (!s || s->arguments().size() < n.num_inputs()) continue;
    bool fits = true;
    for (size_t i = 0; i < n.num_inputs() && fits; ++i)
      if (const AttrValue* c = n.input(i)->constant()) fits = constant_fits(*c, s->arguments()[i]);
    if (fits) out.push_back(s);
  }
  return out;
}

// Function rows whose inputs are not in ATen order (see Note [Op table rows]); their keyword
// defaults come from the Python signature instead of a schema.
bool PyEmitter::not_in_aten_order(const std::string& op) { return op_has(op, kInputsNotAtenOrder); }

// The default of `keyword` in the Python signature of `op` (Note [Python signatures] in
// lib/ir/op_table.h).
std::string PyEmitter::python_default(const std::string& op, const std::string& keyword) {
  if (const std::vector<PyParam>* sig = python_signature(op))
    for (const PyParam& p : *sig)
      if (p.name == keyword && p.def) return *p.def;
  return std::string("\x01");  // \x01: never a literal
}

bool PyEmitter::constant_fits(const AttrValue& c, const c10::Argument& arg) {
  c10::TypePtr t = arg.type();
  bool optional = false;
  if (auto o = t->cast<c10::OptionalType>()) {
    t = o->getElementType();
    optional = true;
  }
  bool str = t->kind() == c10::TypeKind::StringType;
  bool list = t->kind() == c10::TypeKind::ListType;
  if (std::holds_alternative<NoneAttr>(c)) return optional || t->kind() == c10::TypeKind::NoneType;
  if (std::holds_alternative<std::string>(c)) return str;
  if (std::holds_alternative<std::vector<int64_t>>(c) ||
      std::holds_alternative<std::vector<double>>(c) ||
      std::holds_alternative<std::vector<std::string>>(c))
    return list;
  return !str;
}

ArgFacts PyEmitter::arg_facts(const std::vector<const c10::FunctionSchema*>& schemas, size_t i) {
  ArgFacts f;
  if (schemas.empty()) return f;
  f.known = true;
  f.kwarg_only = true;
  f.name = schemas[0]->arguments()[i].name();
  auto fixed = [](const c10::Argument& a) -> std::optional<int> {
    if (a.N()) return static_cast<int>(*a.N());
    return std::nullopt;
  };
  f.fixed_size = fixed(schemas[0]->arguments()[i]);
  for (const auto* s : schemas) {
    const auto& a = s->arguments()[i];
    f.kwarg_only = f.kwarg_only && a.kwarg_only();
    if (a.name() != f.name) f.name.clear();
    if (fixed(a) != f.fixed_size) f.fixed_size.reset();
  }
  return f;
}

bool PyEmitter::is_default_in_all(const std::vector<const c10::FunctionSchema*>& schemas, size_t i,
                                  const AttrValue* c) {
  if (!c || schemas.empty()) return false;
  for (const auto* s : schemas) {
    const auto& d = s->arguments()[i].default_value();
    if (!d || !matches_default(*c, *d)) return false;
  }
  return true;
}

struct CallArgs {
  std::vector<Expr> positional;
  std::vector<std::pair<std::string, Expr>> keyword;
};

PyEmitter::CallArgs PyEmitter::call_args(const Node& n, const OpInfo* info, size_t first) {
  auto schemas = candidate_schemas(n, info);
  struct Item {
    std::string key;
    Expr e;
    bool droppable;
  };
  std::vector<Item> pos, kw;
  for (size_t i = first; i < n.num_inputs(); ++i) {
    ArgFacts facts = arg_facts(schemas, i);
    std::string role;
    if (info && i < info->py_args.size())
      role = info->py_args[i];
    else if (facts.known && facts.kwarg_only && !facts.name.empty())
      role = facts.name;
    if (role == "-" || role == "=") continue;
    const Value* v = n.input(i);
    const AttrValue* c = v->constant();
    Expr e = expr(v);
    // ATen's int code as Python's string (Note [Python enums]); None is the Python default.
    const std::vector<std::string>* names =
        info && !role.empty() ? python_enum(info->name, role) : nullptr;
    if (names && c && std::holds_alternative<int64_t>(*c)) {
      int64_t code = std::get<int64_t>(*c);
      if (code >= 0 && code < static_cast<int64_t>(names->size()))
        e = Expr(py_str((*names)[static_cast<size_t>(code)]));
    } else if (names && c && std::holds_alternative<NoneAttr>(*c)) {
      continue;
    }
    if (c && facts.fixed_size) {
      if (auto* l = std::get_if<std::vector<int64_t>>(c)) {
        if (static_cast<int>(l->size()) == *facts.fixed_size && !l->empty() &&
            std::all_of(l->begin(), l->end(), [&](int64_t x) { return x == l->front(); }))
          e = Expr{std::to_string(l->front()), l->front() >= 0};
      }
    }
    bool is_default = is_default_in_all(schemas, i, c);
    // Rows without a dispatcher schema (F.interpolate's order, TorchScript-only torch.tensor) and
    // rows with a Python signature (torch.hann_window, F.unfold) take their keyword defaults
    // from the Python signature; with a signature, a positional input is left out from the end
    // where it is its parameter's Python default (torch.hann_window(16) for (16, True)).
    const std::vector<PyParam>* sig = info ? python_signature(info->name) : nullptr;
    if (info && !role.empty() && (not_in_aten_order(info->name) || schemas.empty() || sig))
      is_default = python_default(info->name, role) == e.text;
    else if (sig && role.empty() && i < sig->size() && (*sig)[i].def)
      is_default = *(*sig)[i].def == e.text;
    // Tensor options a trace records although they are what PyTorch does anyway: the strided
    // layout, unpinned memory and the CPU device. Dropping the device also
    // lets x.new_zeros(...) / zeros_like(x) follow x to another device, as eager code does.
    // A positional one (x.to(torch.device("cpu"))) says what the call does: kept.
    std::string arg = role.empty() ? facts.name : role;
    bool keyword = facts.kwarg_only || !role.empty();
    if (keyword && ((arg == "layout" && e.text == "torch.strided") ||
                    (arg == "pin_memory" && e.text == "False") ||
                    (arg == "device" && e.text == "torch.device(\"cpu\")")))
      is_default = true;
    if (role.empty())
      pos.push_back({"", e, is_default});
    else
      kw.push_back({role, e, is_default});
  }
  while (!pos.empty() && pos.back().droppable) pos.pop_back();
  CallArgs out;
  for (auto& p : pos) out.positional.push_back(p.e);
  for (auto& k : kw)
    if (!k.droppable) out.keyword.emplace_back(k.key, k.e);
  return out;
}

std::string PyEmitter::format_args(const CallArgs& a, bool splat_single_list) {
  std::vector<std::string> items;
  if (splat_single_list && a.positional.size() == 1 && a.positional[0].list_elems &&
      !a.positional[0].list_elems->empty()) {
    items = *a.positional[0].list_elems;
  } else {
    for (const auto& e : a.positional) items.push_back(e.text);
  }
  for (const auto& [k, e] : a.keyword) items.push_back(k + "=" + e.text);
  return join(items, ", ");
}

namespace {

// Note [`is` on numbers]
// TorchScript's aten::__is__ compares two ints or two floats by value (IValue::is: a NaN `is` not
// itself, -0.0 `is` 0.0, measured on LibTorch 2.6); Python's `is` compares objects, which for
// numbers depends on how they were made. The IR keeps operator.is_ / is_not (the interpreter runs
// aten::__is__, None included), and NAME.py writes `a is b` of two (Optional) ints, or two
// (Optional) floats, as a == b / a != b: TorchScript's answer, None == None and None != 1.5 too.
bool is_number_identity(const Node& n) {
  auto number_kind = [](const Type& t) {
    const Type& u = contained_type(t);
    return u.kind == Type::Kind::Int || u.kind == Type::Kind::Float ? u.kind : Type::Kind::Any;
  };
  Type::Kind a = number_kind(n.input(0)->type());
  return a != Type::Kind::Any && a == number_kind(n.input(1)->type());
}

}  // namespace

// The callee for a function op name, noting the imports it needs; "" when it has no spelling.
std::string PyEmitter::function_callee(const std::string& op) {
  size_t dot = op.find('.');
  std::string prefix = dot == std::string::npos ? "" : op.substr(0, dot);
  if (prefix == "F") {
    use_functional_ = true;
    return op;
  }
  if (prefix == "torch" || prefix == "nn") return op;
  if (import_aliases().count(prefix)) {
    use_alias(prefix);
    return op;
  }
  if (prefix == "math" || prefix == "cmath" || prefix == "operator" || prefix == "torchvision") {
    imports_.insert("import " + prefix);
    return op;
  }
  if (prefix.empty() && is_identifier(op)) return op;  // a builtin such as int / float / len
  return "";
}

std::string PyEmitter::torch_ops_callee(const std::string& op) {
  size_t sep = op.find("::");
  std::string ns = op.substr(0, sep);
  op_namespaces_.insert(ns);
  std::vector<std::string> comps = {ns};
  for (const auto& c : split(op.substr(sep + 2), '.')) comps.push_back(c);
  return attr_path("torch.ops", comps);
}

void PyEmitter::emit_call(const Node& n, std::vector<std::string>& body) {
  const std::string& op = n.op();
  const OpInfo* info = n.info();
  OpKind kind;
  if (info) {
    kind = info->kind;
  } else if (op.find("::") != std::string::npos) {
    kind = OpKind::Aten;
  } else if (op.rfind("Tensor.", 0) == 0) {
    kind = OpKind::Method;
  } else {
    kind = OpKind::Function;
  }
  if (kind == OpKind::Module)
    unsupported(n, "module op " + op + " has no module path", "set its #module=<path>");
  if (kind == OpKind::Prim)
    unsupported(n, op + " is not supported by the Python emitter", "report it as a tinytrace bug");

  std::string hint = op_hint(op);
  if (kind == OpKind::Aten || op.find("::") != std::string::npos) {
    if (op.find("::") == std::string::npos)
      unsupported(n, "aten op '" + op + "' has no qualified name", "name it 'aten::name.overload'");
    if (try_index_put(n, hint, body)) return;
    if (std::string s = try_index_or_fill(n); !s.empty()) {
      assign(n, s, hint, false, body);
      return;
    }
    CallArgs a = call_args(n, nullptr, 0);
    // Note [Keyword arguments of torch.ops calls]: the trailing inputs the lifter named.
    const AttrValue* kw = n.attrs().find("kwarg_names");
    if (const auto* names = kw ? std::get_if<std::vector<std::string>>(kw) : nullptr) {
      if (!a.keyword.empty() || names->size() > a.positional.size() ||
          a.positional.size() != n.num_inputs())
        unsupported(n, "keyword arguments of " + op + " that the emitter cannot place",
                    "report it as a tinytrace bug");
      size_t first = a.positional.size() - names->size();
      for (size_t i = 0; i < names->size(); ++i)
        a.keyword.emplace_back((*names)[i], a.positional[first + i]);
      a.positional.resize(first);
    }
    assign(n, torch_ops_callee(op) + "(" + format_args(a) + ")", hint, false, body);
    return;
  }
  if (try_container_statement(n, body)) return;
  if (const PyCallForm* form = python_call_form(op)) {
    emit_call_form(n, *form, hint, body);
    return;
  }
  if (Expr infix = try_infix(n); !infix.text.empty()) {
    assign(n, infix, hint, false, body);
    return;
  }
  if (op == "Tensor.slice") {
    // Tensor has no .slice method: indexing when the dim is known, else the ATen op.
    Expr s = try_slice(n);
    if (s.text.empty())
      s = Expr(torch_ops_callee("aten::slice.Tensor") + "(" + format_args(call_args(n, info, 0)) +
               ")");
    assign(n, s, hint, false, body);
    return;
  }
  if (op == "Tensor.index") {
    // x[i, :, j]; the ATen op when the indices are not a list literal (Tensor has no .index).
    std::string subs = n.num_inputs() == 2 ? index_subscripts(*n.input(1)) : "";
    Expr e(subs.empty() ? torch_ops_callee("aten::index.Tensor") + "(" +
                              format_args(call_args(n, info, 0)) + ")"
                        : receiver(expr(n.input(0))) + "[" + subs + "]");
    assign(n, e, hint, false, body);
    return;
  }
  if (is_attribute_op(op) && n.num_inputs() == 1) {
    // an attribute, not a method
    assign(n, receiver(expr(n.input(0))) + op.substr(op.find('.')), hint, true, body);
    return;
  }
  if (kind == OpKind::Method) {
    if (n.num_inputs() == 0)
      unsupported(n, "a method call needs a receiver", "fix the node's inputs");
    std::string method = op.substr(op.rfind('.') + 1);
    CallArgs a = call_args(n, info, 1);
    static const std::set<std::string> splat = {"view", "reshape", "permute", "expand", "repeat"};
    std::string call = receiver(expr(n.input(0))) + "." + method + "(" +
                       format_args(a, splat.count(method) != 0) + ")";
    assign(n, call, hint, false, body);
    return;
  }
  std::string callee = function_callee(op);
  if (callee.empty())
    unsupported(n, "op '" + op + "' has no known Python spelling",
                "add it to the op table in lib/ir/op_table.cpp");
  CallArgs a = call_args(n, info, 0);
  if (op == "torch.tensordot" && a.positional.size() == 4 && a.keyword.empty()) {
    // aten::tensordot(a, b, dims_a, dims_b) is torch.tensordot(a, b, dims=(dims_a, dims_b)).
    Expr dims("(" + a.positional[2].text + ", " + a.positional[3].text + ")");
    a.positional.resize(2);
    a.keyword.emplace_back("dims", dims);
  }
  std::string cast = float_data_cast(n, a);  // Note [Float data of torch.tensor in TorchScript]
  if (!cast.empty()) {
    assign(n, callee + "(" + format_args(a) + ")" + cast, hint, false, body);
    return;
  }
  if (op_has(n, kVarargs) && !a.positional.empty() && !a.positional[0].list_elems) {
    // torch.broadcast_tensors(*tensors): a list that is no literal is unpacked.
    a.positional[0] = Expr("*" + a.positional[0].text);
  }
  assign(n, callee + "(" + format_args(a, op_has(n, kVarargs)) + ")", hint, false, body);
}

// Note [Float data of torch.tensor in TorchScript]
// TorchScript's torch.tensor(data, dtype) and torch.as_tensor(data, dtype) on Python floats (a
// float or a nested list of them) first make a tensor of the default dtype, float32, and then
// convert it to `dtype` (createTensorFromList in torch/csrc/jit/runtime/register_special_ops.cpp):
// scripted, torch.as_tensor([0.485], dtype=torch.float64) holds 0.48500001430511475, eager
// Python 0.485 (torchvision's GeneralizedRCNNTransform normalizes so: a float64 detector's
// generated Python drifted from the scripted one by 1e-7, its masks by 7e-4). Such a call is
// written as the same steps: the call without dtype, then .to(dtype) (and requires_grad_ after
// it). The call is as written when dtype is None or float32, or the data is not floats.
std::string PyEmitter::float_data_cast(const Node& n, CallArgs& a) {
  if ((!n.is("torch.tensor") && !n.is("torch.as_tensor")) || n.num_inputs() < 2) return "";
  const Type* t = &n.input(0)->type();
  while (t->kind == Type::Kind::List && !t->elems.empty()) t = &t->elems[0];
  if (t->kind != Type::Kind::Float) return "";
  const AttrValue* c = n.input(1)->constant();
  if (c && (std::holds_alternative<NoneAttr>(*c) ||
            (std::holds_alternative<int64_t>(*c) &&
             dtype_from_scalar_type(std::get<int64_t>(*c)) == DType::F32)))
    return "";
  std::string cast;
  for (const char* key : {"dtype", "requires_grad"}) {
    auto it = std::find_if(a.keyword.begin(), a.keyword.end(),
                           [&](const auto& kw) { return kw.first == key; });
    if (it == a.keyword.end()) continue;
    cast += std::string(key == std::string("dtype") ? ".to(" : ".requires_grad_(") +
            it->second.text + ")";
    a.keyword.erase(it);
  }
  if (cast.rfind(".to(", 0) != 0)  // dtype given positionally: not a spelling this expects
    unsupported(n, "torch.tensor of floats whose dtype is not a keyword argument",
                "report this as a bug");
  return cast;
}

// A row with a call form (Note [Python call forms] in ir/op_table.h); the op itself through
// torch.ops when the form would drop a result the model reads.
void PyEmitter::emit_call_form(const Node& n, const PyCallForm& form, const std::string& hint,
                               std::vector<std::string>& body) {
  bool others_used = false;
  for (size_t i = 1; i < n.num_outputs(); ++i) others_used = others_used || n.output(i)->has_uses();
  const OpInfo* info = n.info();
  bool differs = form.first_result_only && others_used;
  for (const auto& [result, flag] : form.results_if_true) {
    const AttrValue* c = static_cast<size_t>(flag) < n.num_inputs()
                             ? n.input(static_cast<size_t>(flag))->constant()
                             : nullptr;
    bool is_true = c && std::holds_alternative<bool>(*c) && std::get<bool>(*c);
    if (static_cast<size_t>(result) < n.num_outputs() &&
        n.output(static_cast<size_t>(result))->has_uses() && !is_true)
      differs = true;
  }
  if (differs && info && !info->aten.empty()) {
    CallArgs a = call_args(n, info, 0);
    assign(n, torch_ops_callee(info->aten.front()) + "(" + format_args(a) + ")", hint, false, body);
    return;
  }
  auto fill = [&](const std::string& text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
      if (close == std::string::npos) {
        out += text[i];
        continue;
      }
      size_t k = std::stoul(text.substr(i + 1, close - i - 1));
      if (k >= n.num_inputs())
        unsupported(n,
                    "its call form reads input " + std::to_string(k) + " of " +
                        std::to_string(n.num_inputs()),
                    "fix the node's inputs");
      out += expr(n.input(k)).text;
      i = close;
    }
    return out;
  };
  std::vector<std::string> positional, keyword;
  for (const PyCallArg& a : form.args) {
    std::string text = fill(a.text);
    bool is_default = *a.def && text == a.def;
    if (*a.keyword) {
      if (!is_default) keyword.push_back(std::string(a.keyword) + "=" + text);
    } else {
      positional.push_back(is_default ? "" : text);
    }
  }
  while (!positional.empty() && positional.back().empty()) positional.pop_back();
  for (const std::string& p : positional)
    if (p.empty())
      unsupported(n, "its call form leaves out a positional argument before a given one",
                  "fix the call form in lib/ir/op_python.cpp");
  positional.insert(positional.end(), keyword.begin(), keyword.end());
  std::string callee = form.callee;
  if (callee.rfind("Tensor.", 0) == 0 && n.num_inputs() > 0)
    callee = receiver(expr(n.input(0))) + callee.substr(callee.find('.'));  // a method of input 0
  else
    callee = function_callee(callee);
  std::string call = callee + "(" + join(positional, ", ") + ")";
  assign(n, call, hint, false, body, form.first_result_only);
}

// torch.add/sub/mul/div as infix operators when that is the same call; Python's operator.*
// (int/float/bool arithmetic of scripted models) always.
//
// Note [Dict views in Python]
// TorchScript's d.keys(), d.values() and d.items() return new lists: a snapshot that later writes
// to d do not change, read by index in the loops `for k, v in d.items()` lowers to. Python's are
// live views without indexing, so they are written list(d.keys()), which is that snapshot (and
// the model's own list(d.keys()) once, not list(list(d.keys()))).
Expr PyEmitter::try_infix(const Node& n) {
  if (n.op() == "operator.getitem" && n.num_inputs() == 2)  // a list, tuple or dict item
    return Expr(receiver(expr(n.input(0))) + "[" + expr(n.input(1)).text + "]");
  if ((n.op() == "dict.keys" || n.op() == "dict.values" || n.op() == "dict.items") &&
      n.num_inputs() == 1)
    return Expr("list(" + receiver(expr(n.input(0))) + n.op().substr(4) + "())");
  if (n.op() == "list" && n.num_inputs() == 1 && n.input(0)->num_uses() == 1) {
    // list(d.keys()) in the model: that snapshot is already a new list nothing else reads.
    const Node* p = n.input(0)->node();
    if (p->is("dict.keys") || p->is("dict.values") || p->is("dict.items")) return expr(n.input(0));
  }
  if (n.op() == "list.slice" && n.num_inputs() == 4) {  // l[start:end:step]
    std::vector<std::string> parts;
    for (size_t i = 1; i < 4; ++i)
      parts.push_back(n.input(i)->is_none_constant() ? "" : expr(n.input(i)).text);
    return Expr(receiver(expr(n.input(0))) + "[" + python_slice(parts[0], parts[1], parts[2]) +
                "]");
  }
  if (n.op() == "range.length" && n.num_inputs() == 3)  // Note [Range loops in Python]
    return Expr("len(range(" + range_args(n) + "))");
  if (n.op() == "range.element" && n.num_inputs() == 3)  // lo + k * step
    return binary_expr(expr(n.input(1)), "+", binary_expr(expr(n.input(0)), "*", expr(n.input(2))));
  if (n.op() == "operator.contains" && n.num_inputs() == 2)  // operator.contains(a, b) is `b in a`
    return binary_expr(expr(n.input(1)), "in", expr(n.input(0)));
  if ((n.op() == "operator.is_" || n.op() == "operator.is_not") && n.num_inputs() == 2 &&
      is_number_identity(n))  // Note [`is` on numbers]
    return binary_expr(expr(n.input(0)), n.op() == "operator.is_" ? "==" : "!=", expr(n.input(1)));
  if (const char* sym = python_binary_operator(n.op()); sym && n.num_inputs() == 2)
    return binary_expr(list_operand(n.input(0), n.input(1)), sym,
                       list_operand(n.input(1), n.input(0)));
  if (const char* cmp = python_tensor_comparison(n.op());
      cmp && n.num_inputs() == 2 && !n.input(0)->constant())  // tensor on the left
    return binary_expr(expr(n.input(0)), cmp, expr(n.input(1)));
  if (const char* sym = python_unary_operator(n.op()); sym && n.num_inputs() == 1)
    return std::string(sym) == "not" ? Expr(not_expr(expr(n.input(0))), Prec::Not)
                                     : unary_expr(sym, expr(n.input(0)));
  if (!arithmetic_is_infix(n)) return Expr("");
  return binary_expr(expr(n.input(0)), python_tensor_arithmetic(n.op()), expr(n.input(1)));
}

// Note [torch.Size in Python]
// TorchScript's x.size() is an int[]; Python's is a torch.Size, a tuple. Between two sizes or two
// lists Python's + and == mean what TorchScript's do, but a tuple and a list neither concatenate
// ([1] + x.size() raises) nor compare equal (x.size() == [2, 3] is False). So where one operand
// of +, == or != is a size (x.size(), a slice of it, a sum of sizes) and the other a list, the
// size is written list(x.size()).
Expr PyEmitter::list_operand(const Value* v, const Value* other) {
  std::function<bool(const Value*)> is_size = [&](const Value* x) {
    const Node* p = x->node();
    if (p->is("Tensor.size")) return p->num_inputs() == 1;
    if (p->is("list.slice")) return is_size(p->input(0));
    if (p->is("operator.add")) return is_size(p->input(0)) && is_size(p->input(1));
    return false;
  };
  if (v->type().kind != Type::Kind::List || other->type().kind != Type::Kind::List || !is_size(v) ||
      is_size(other))
    return expr(v);
  return Expr("list(" + expr(v).text + ")");
}

bool arithmetic_is_infix(const Node& n) {
  if (!python_tensor_arithmetic(n.op()) || n.num_inputs() < 2 || n.num_inputs() > 3) return false;
  if (n.num_inputs() == 2) return true;
  const AttrValue* c = n.input(2)->constant();
  if (!c) return false;
  if (n.op() == "torch.div") return std::holds_alternative<NoneAttr>(*c);  // rounding_mode
  if (n.op() == "torch.mul") return false;
  return (std::holds_alternative<int64_t>(*c) && std::get<int64_t>(*c) == 1) ||
         (std::holds_alternative<double>(*c) && std::get<double>(*c) == 1.0);  // alpha
}

// aten::index.Tensor(self, indices) as x[i, :, j] when the indices are a list literal (None:
// that dim is taken whole); an in-place op kept as such (aten::fill_, aten::clamp_, ...;
// Note [In-place writes]) as the Tensor method x.fill_(value), which writes where the model
// wrote (often through a view), or F.leaky_relu_(x, 0.2) for the in-place activations that have
// no method. "" when none applies.
std::string PyEmitter::try_index_or_fill(const Node& n) {
  const std::string& op = n.op();
  std::string_view method = tensor_inplace_method_of(op);
  if (n.num_inputs() >= 1 && !method.empty())
    return receiver(expr(n.input(0))) + "." + std::string(method) + "(" +
           format_args(call_args(n, nullptr, 1)) + ")";
  if (std::string_view f = functional_inplace_of(op); n.num_inputs() >= 1 && !f.empty()) {
    // F.leaky_relu_(x, 0.2) or F.silu(x, inplace=True): torch.Tensor has no such method
    bool flag = f.back() != '_';
    if (flag && n.num_inputs() != 1) return "";
    return function_callee("F." + std::string(f)) + "(" + format_args(call_args(n, nullptr, 0)) +
           (flag ? ", inplace=True)" : ")");
  }
  if (op != "aten::index.Tensor" || n.num_inputs() != 2) return "";
  std::string subs = index_subscripts(*n.input(1));
  return subs.empty() ? "" : receiver(expr(n.input(0))) + "[" + subs + "]";
}

// The subscripts "i, :, j" of an index list literal [i, None, j] (None: that dim is taken
// whole; trailing ones dropped); "" when the list is not a literal or has only None.
std::string PyEmitter::index_subscripts(const Value& indices) {
  const Node* list = indices.node();
  if (!list->is("prim.ListConstruct") || list->num_inputs() == 0) return "";
  std::vector<std::string> subs;
  for (const Value* v : list->inputs()) {
    // A constant 1-d int64 or bool index is the list it was written as: x[[2, 0]].
    const AttrValue* c = v->constant();
    const at::Tensor* t = c ? std::get_if<at::Tensor>(c) : nullptr;
    if (t && t->dim() == 1 && t->numel() > 0 &&
        (t->scalar_type() == at::kLong || t->scalar_type() == at::kBool)) {
      std::string lit = tensor_literal(*t);  // torch.tensor([...]) or torch.tensor([...], dtype=)
      if (lit.rfind("torch.tensor([", 0) == 0 && lit.back() == ')' &&
          lit.find("dtype=") == std::string::npos) {
        subs.push_back(lit.substr(13, lit.size() - 14));
        continue;
      }
    }
    subs.push_back(v->is_none_constant() ? ":" : expr(v).text);
  }
  while (!subs.empty() && subs.back() == ":") subs.pop_back();  // x[i, :] is x[i]
  return join(subs, ", ");
}

// l[i] = v, d[k] = v and del l[i], del d[k] (Note [Container mutation] in exec/alias.h):
// statements, not calls. l[i] = v on a list returns the list, which the lifter binds to it.
bool PyEmitter::try_container_statement(const Node& n, std::vector<std::string>& body) {
  bool set = n.op() == "operator.setitem" && n.num_inputs() == 3;
  bool del = n.op() == "operator.delitem" && n.num_inputs() == 2;
  bool imul = n.op() == "operator.imul" && n.num_inputs() == 2;
  if (!set && !del && !imul) return false;
  if (n.num_outputs() != 0)
    unsupported(n, n.op() + " has no result in Python", "read the container itself instead");
  if (imul) {  // l *= n: a statement on a name
    body.push_back(expr(n.input(0)).text + " *= " + expr(n.input(1)).text);
    return true;
  }
  std::string target = receiver(expr(n.input(0))) + "[" + expr(n.input(1)).text + "]";
  body.push_back(set ? target + " = " + expr(n.input(2)).text : "del " + target);
  return true;
}

// x.index_put_([i, None, j], v) without accumulation (TorchScript's x[i, :, j] = v) as that
// assignment: Python's Tensor.index_put_ takes no None index. Its result is x itself.
bool PyEmitter::try_index_put(const Node& n, const std::string& hint,
                              std::vector<std::string>& body) {
  if (tensor_inplace_method_of(n.op()) != "index_put_" || n.num_inputs() < 3 || n.num_inputs() > 4)
    return false;
  if (n.num_inputs() == 4) {
    const AttrValue* acc = n.input(3)->constant();
    if (!acc || !std::holds_alternative<bool>(*acc) || std::get<bool>(*acc)) return false;
  }
  std::string subs = index_subscripts(*n.input(1));
  if (subs.empty()) return false;
  std::string target = receiver(expr(n.input(0)));
  body.push_back(target + "[" + subs + "] = " + expr(n.input(2)).text);
  if (is_identifier(target) && n.num_outputs() == 1)
    expr_[n.output(0)] = expr(n.input(0));  // the same tensor, under its name
  else
    assign(n, target, hint, /*pure=*/true, body);
  return true;
}

// aten::slice(self, dim=0, start=None, end=None, step=1) as x[:, a:b:s]; a slice of a slice
// written inline (Note [Expressions written inline]) on a dim the first leaves whole joins its
// subscript: x[:, a:b][:, :, c:d] is x[:, a:b, c:d], the same view.
Expr PyEmitter::try_slice(const Node& n) {
  if (n.num_inputs() < 1 || n.num_inputs() > 5) return Expr("");
  auto const_int = [&](size_t i, std::optional<int64_t>& out) -> bool {
    // true when the argument is absent, None or a constant int
    if (i >= n.num_inputs()) return true;
    const AttrValue* c = n.input(i)->constant();
    if (!c) return false;
    if (std::holds_alternative<NoneAttr>(*c)) return true;
    if (auto* v = std::get_if<int64_t>(c)) {
      out = *v;
      return true;
    }
    return false;
  };
  std::optional<int64_t> dim, start, end, step;
  if (!const_int(1, dim)) return Expr("");
  if (!const_int(4, step)) return Expr("");
  if (step && *step <= 0) return Expr("");
  int64_t d = dim.value_or(0);
  std::string lo, hi;
  if (n.num_inputs() > 2) {
    if (const_int(2, start)) {
      if (start && *start != 0) lo = std::to_string(*start);
    } else {
      lo = expr(n.input(2)).text;
    }
  }
  if (n.num_inputs() > 3) {
    if (const_int(3, end)) {
      if (end && *end != std::numeric_limits<int64_t>::max()) hi = std::to_string(*end);
    } else {
      hi = expr(n.input(3)).text;
    }
  }
  std::string s = lo + ":" + hi;
  if (step && *step != 1) s += ":" + std::to_string(*step);
  const Expr& src = expr(n.input(0));
  if (d >= 0) {
    std::string base = receiver(src);
    std::vector<std::string> idx;
    if (src.slices && (static_cast<size_t>(d) >= src.slices->second.size() ||
                       src.slices->second[static_cast<size_t>(d)] == ":")) {
      base = src.slices->first;
      idx = src.slices->second;
    }
    if (idx.size() <= static_cast<size_t>(d)) idx.resize(static_cast<size_t>(d) + 1, ":");
    idx[static_cast<size_t>(d)] = s;
    Expr e(base + "[" + join(idx, ", ") + "]");
    e.slices.emplace(base, idx);
    return e;
  }
  std::vector<std::string> idx = {"...", s};
  for (int64_t i = -1; i > d; --i) idx.push_back(":");
  return Expr(receiver(src) + "[" + join(idx, ", ") + "]");
}

}  // namespace tt::pyemit
