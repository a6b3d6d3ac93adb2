// `--emit torchscript`: lowers the IR to TorchScript source for `forward`, builds the module tree
// that holds the weights, compiles forward with torch::jit::Module::define and saves the archive.
//
// Note [Lowering to TorchScript source]
// - Weights: one submodule per state_dict prefix ("layer1.0.conv1.weight" -> module layer1,
//   child "0", child "conv1", parameter "weight"), so state_dict keys equal NAME.pth's. Path
//   components that are not identifiers are read with getattr(self.layer1, "0"), which
//   TorchScript compiles to a plain attribute read.
// - Module::define resolves `torch.<name>` to the builtin aten::<name> (there is no Python, so no
//   torch.ops / torch.nn.functional); every call is spelled that way. Type annotations are
//   spelled `annotate(T, e)` as in the archives' own code: torch.jit.annotate is a Python
//   function, so the resolver (SourceResolver below) adds the special form `annotate`.
// - Module ops become the ATen calls of lib/exec/modules.cpp (the interpreter's lowering), so the
//   archive computes exactly what `--verify` checks; function, method and aten:: fallback ops
//   become torch.<name>(...) calls with the inputs in schema order (kwarg-only schema
//   arguments by keyword), which TorchScript resolves to an overload by the argument types.
// - prim ops become Python expressions; prim.If an if/else, prim.Loop a while loop with the
//   TorchScript loop semantics (trip count and condition).
// - Small tensor constants become non-buffer tensor attributes of the root module
//   (self._tt_constant_N): not in the state_dict, but saved in the archive.
#include "loaders/torchscript_emit.h"

#include "ir/op_table.h"
#include "support/diag.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace tt {
namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// Names a local variable must not take: Python keywords and what the generated code refers to.
bool is_reserved(const std::string& s) {
  static const std::set<std::string> r = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
      "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
      "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
      "try", "while", "with", "yield", "self", "torch", "math", "int", "float", "bool", "str",
      "len", "range", "getattr", "print", "List", "Tuple", "Optional", "Tensor", "Dict",
      "Device", "NoneType", "annotate", "__torch__"};
  return r.count(s) != 0;
}

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '.') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string str_src(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string float_src(double d) {
  if (std::isnan(d)) return "float(\"nan\")";
  if (std::isinf(d)) return d > 0 ? "float(\"inf\")" : "float(\"-inf\")";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string ints_src(const std::vector<int64_t>& v) {
  std::vector<std::string> items;
  for (int64_t x : v) items.push_back(std::to_string(x));
  return "[" + join(items) + "]";
}

std::string floats_src(const std::vector<double>& v) {
  std::vector<std::string> items;
  for (double x : v) items.push_back(float_src(x));
  return "[" + join(items) + "]";
}

// TorchScript spelling of a type (graph input annotations, empty list literals).
std::string ts_type(const Type& t) {
  using K = Type::Kind;
  switch (t.kind) {
    case K::Any:
    case K::Tensor: return "Tensor";
    case K::Int:
    case K::ScalarType:
    case K::Layout:
    case K::MemoryFormat: return "int";
    case K::Float: return "float";
    case K::Bool: return "bool";
    case K::Str: return "str";
    case K::None: return "NoneType";
    case K::Device: return "Device";
    case K::List: return "List[" + (t.elems.empty() ? std::string("Tensor") : ts_type(t.elems[0])) + "]";
    case K::Optional:
      return "Optional[" + (t.elems.empty() ? std::string("Tensor") : ts_type(t.elems[0])) + "]";
    case K::Tuple: {
      std::vector<std::string> e;
      for (const Type& x : t.elems) e.push_back(ts_type(x));
      return "Tuple[" + join(e) + "]";
    }
    case K::Dict:
      return "Dict[" + (t.elems.size() > 0 ? ts_type(t.elems[0]) : std::string("str")) + ", " +
             (t.elems.size() > 1 ? ts_type(t.elems[1]) : std::string("Tensor")) + "]";
  }
  return "Tensor";
}

std::string where(const Node& n) {
  std::string s = n.op();
  if (n.num_outputs()) s += " %" + n.output(0)->name();
  if (!n.scope().empty()) s += " in " + n.scope();
  return s;
}

[[noreturn]] void unsupported(const Node& n, const std::string& why) {
  throw Error(ExitCode::Unsupported, "--emit torchscript cannot express " + where(n) + ": " + why +
                                         " — drop torchscript from --emit for this model");
}

// `self.a.b` with getattr for components that are not identifiers ("0").
std::string attr_path(const std::string& base, const std::string& dotted) {
  std::string e = base;
  for (const auto& c : split_dots(dotted))
    e = is_identifier(c) && !is_reserved(c) ? e + "." + c : "getattr(" + e + ", " + str_src(c) + ")";
  return e;
}

// The schema of `ns::name.overload` (overload "" or "default" = the default one), or nullptr.
const c10::FunctionSchema* find_schema(const std::string& qualified) {
  auto sep = qualified.find("::");
  if (sep == std::string::npos) return nullptr;
  std::string rest = qualified.substr(sep + 2);
  auto dot = rest.find('.');
  std::string name = rest.substr(0, dot);
  std::string overload = dot == std::string::npos ? "" : rest.substr(dot + 1);
  if (overload == "default") overload.clear();
  auto ops = torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(qualified.substr(0, sep) + "::" + name));
  for (const auto& op : ops)
    if (op->schema().overload_name() == overload) return &op->schema();
  return nullptr;
}

class Lowerer {
 public:
  explicit Lowerer(const Graph& g) : g_(g) {}

  std::string forward() {
    std::vector<std::string> params = {"self"};
    for (Value* v : g_.inputs()) params.push_back(bind(v) + ": " + ts_type(v->type()));
    out_ << "def forward(" << join(params) << "):\n";
    emit_nodes(*g_.block(), 1);
    const auto& outs = g_.outputs();
    std::vector<std::string> items;
    for (Value* v : outs) items.push_back(ex(v));
    if (outs.empty()) line(1, "return None");
    else if (outs.size() == 1) line(1, "return " + items[0]);
    else line(1, "return (" + join(items) + ")");
    return out_.str();
  }

  const std::vector<std::pair<std::string, at::Tensor>>& constants() const { return consts_; }

 private:
  // A fresh local name for `v`, derived from its IR name.
  std::string bind(const Value* v) {
    std::string base = v->name();
    if (!is_identifier(base) || is_reserved(base) || base.rfind("_tt_", 0) == 0) base = "_" + base;
    if (!is_identifier(base)) base = "_v";
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    expr_[v] = name;
    return name;
  }
  std::string temp(const std::string& hint) {
    std::string name = "_tt_" + hint;
    for (int i = 1; used_.count(name); ++i) name = "_tt_" + hint + "_" + std::to_string(i);
    used_.insert(name);
    return name;
  }

  std::string ex(const Value* v) {
    auto it = expr_.find(v);
    if (it == expr_.end())
      throw Error(ExitCode::Internal, "--emit torchscript: %" + v->name() +
                                          " is used before it is defined — report it as a tinytrace bug");
    return it->second;
  }

  void line(int indent, const std::string& s) { out_ << std::string(static_cast<size_t>(indent) * 4, ' ') << s << "\n"; }

  void emit_nodes(const Block& b, int ind) {
    for (Node* n = b.front(); n; n = n->next()) emit_node(*n, ind);
  }

  std::string constant_src(const Node& n) {
    const AttrValue& v = n.attrs().at("value");
    const Type& t = n.output()->type();
    Type::Kind elem = t.kind == Type::Kind::List && !t.elems.empty() ? t.elems[0].kind : Type::Kind::Any;
    struct V {
      Lowerer& self;
      const Type& t;
      Type::Kind elem;
      std::string operator()(const NoneAttr&) const { return "None"; }
      std::string operator()(bool b) const { return b ? "True" : "False"; }
      std::string operator()(int64_t i) const {
        if (t.kind == Type::Kind::Float) return float_src(static_cast<double>(i));
        if (t.kind == Type::Kind::Bool) return i ? "True" : "False";
        return std::to_string(i);
      }
      std::string operator()(double d) const { return float_src(d); }
      std::string operator()(const std::string& s) const { return str_src(s); }
      std::string operator()(const std::vector<int64_t>& l) const {
        if (l.empty()) return "annotate(" + ts_type(t.kind == Type::Kind::List ? t : Type::list(Type::of(Type::Kind::Int))) + ", [])";
        if (elem == Type::Kind::Float) return floats_src(std::vector<double>(l.begin(), l.end()));
        if (elem == Type::Kind::Bool) {
          std::vector<std::string> items;
          for (int64_t x : l) items.push_back(x ? "True" : "False");
          return "[" + join(items) + "]";
        }
        return ints_src(l);
      }
      std::string operator()(const std::vector<double>& l) const {
        if (l.empty()) return "annotate(List[float], [])";
        return floats_src(l);
      }
      std::string operator()(const std::vector<std::string>& l) const {
        if (l.empty()) return "annotate(List[str], [])";
        std::vector<std::string> items;
        for (const auto& s : l) items.push_back(str_src(s));
        return "[" + join(items) + "]";
      }
      std::string operator()(DType d) const { return std::to_string(dtype_to_scalar_type(d)); }
      std::string operator()(const DeviceAttr& d) const { return "torch.device(" + str_src(d.name) + ")"; }
      std::string operator()(const at::Tensor& x) const {
        std::string name = "_tt_constant_" + std::to_string(self.consts_.size());
        self.consts_.emplace_back(name, x);
        return "self." + name;
      }
    };
    return std::visit(V{*this, t, elem}, v);
  }

  // Assigns `e` to the node's single output.
  void assign1(const Node& n, const std::string& e, int ind) {
    if (n.num_outputs() != 1) unsupported(n, "expected one output");
    line(ind, bind(n.output()) + " = " + e);
  }

  void emit_node(const Node& n, int ind) {
    const std::string& op = n.op();
    if (op == "prim.Constant") {
      // Inline; a constant used many times is still one literal each time (cheap in TorchScript).
      expr_[n.output()] = constant_src(n);
      return;
    }
    if (op == "prim.GetAttr") {
      std::string w = n.weight("value");
      if (w.empty() || !g_.weights().has(w)) unsupported(n, "reads weight '" + w + "' that the model does not have");
      assign1(n, attr_path("self", w), ind);
      return;
    }
    std::vector<std::string> in;
    for (Value* v : n.inputs()) in.push_back(ex(v));
    if (op == "prim.ListConstruct") {
      bool has_none = false;
      for (Value* v : n.inputs())
        if (const AttrValue* c = v->constant()) has_none = has_none || std::holds_alternative<NoneAttr>(*c);
      std::string lit = "[" + join(in) + "]";
      const Type& t = n.output()->type();
      if (in.empty() || has_none) {
        Type lt = t.kind == Type::Kind::List && !t.elems.empty() && t.elems[0].kind != Type::Kind::Any
                      ? t
                      : Type::list(has_none ? Type::optional(Type::tensor()) : Type::tensor());
        lit = "annotate(" + ts_type(lt) + ", " + lit + ")";
      }
      assign1(n, lit, ind);
      return;
    }
    if (op == "prim.TupleConstruct") {
      assign1(n, in.size() == 1 ? "(" + in[0] + ",)" : "(" + join(in) + ")", ind);
      return;
    }
    if (op == "prim.DictConstruct") {
      std::vector<std::string> items;
      for (size_t i = 0; i + 1 < in.size(); i += 2) items.push_back(in[i] + ": " + in[i + 1]);
      assign1(n, "{" + join(items) + "}", ind);
      return;
    }
    if (op == "prim.TupleUnpack" || op == "prim.ListUnpack") {
      if (n.num_inputs() != 1) unsupported(n, "expected one input");
      if (n.num_outputs() == 0) return;
      std::vector<std::string> outs;
      for (Value* v : n.outputs()) outs.push_back(bind(v));
      line(ind, join(outs) + ", = " + in[0]);
      return;
    }
    if (op == "prim.TupleIndex") {
      if (in.size() != 2) unsupported(n, "expected (tuple, index)");
      assign1(n, in[0] + "[" + in[1] + "]", ind);
      return;
    }
    if (op == "prim.NumToTensor") {
      // prim::NumToTensor keeps the number's own dtype (int -> int64, float -> float64).
      Type::Kind k = n.input(0)->type().kind;
      std::string dtype = k == Type::Kind::Int ? "4" : k == Type::Kind::Float ? "7" : k == Type::Kind::Bool ? "11" : "";
      assign1(n, dtype.empty() ? "torch.tensor(" + in.at(0) + ")"
                               : "torch.scalar_tensor(" + in.at(0) + ", dtype=" + dtype + ")", ind);
      return;
    }
    if (op == "prim.If") {
      if (n.num_inputs() != 1 || n.blocks().size() != 2) unsupported(n, "expected one condition and two blocks");
      std::vector<std::string> outs;
      for (Value* v : n.outputs()) outs.push_back(bind(v));
      line(ind, "if bool(" + in[0] + "):");
      for (size_t b = 0; b < 2; ++b) {
        if (b == 1) line(ind, "else:");
        const Block& blk = *n.block(b);
        emit_nodes(blk, ind + 1);
        for (size_t i = 0; i < outs.size(); ++i) line(ind + 1, outs[i] + " = " + ex(blk.outputs().at(i)));
        line(ind + 1, "pass");
      }
      return;
    }
    if (op == "prim.Loop") {
      if (n.num_inputs() < 2 || n.blocks().size() != 1) unsupported(n, "expected (max_trips, cond, carried...) and one block");
      const Block& body = *n.block(0);
      std::vector<std::string> outs;
      for (Value* v : n.outputs()) outs.push_back(bind(v));
      for (size_t i = 0; i < outs.size(); ++i) line(ind, outs[i] + " = " + in.at(i + 2));
      std::string it = temp("i"), cond = temp("cond");
      line(ind, it + " = 0");
      line(ind, cond + " = bool(" + in[1] + ")");
      const AttrValue* max_c = n.input(0)->constant();
      bool unbounded = max_c && std::holds_alternative<NoneAttr>(*max_c);
      line(ind, "while " + (unbounded ? "" : it + " < " + in[0] + " and ") + cond + ":");
      line(ind + 1, bind(body.inputs().at(0)) + " = " + it);
      for (size_t i = 1; i < body.inputs().size(); ++i) line(ind + 1, bind(body.inputs()[i]) + " = " + outs.at(i - 1));
      emit_nodes(body, ind + 1);
      line(ind + 1, cond + " = bool(" + ex(body.outputs().at(0)) + ")");
      for (size_t i = 0; i < outs.size(); ++i) line(ind + 1, outs[i] + " = " + ex(body.outputs().at(i + 1)));
      line(ind + 1, it + " = " + it + " + 1");
      return;
    }
    if (op.rfind("prim.", 0) == 0) unsupported(n, "this prim op has no TorchScript lowering");
    if (!n.module().empty() || (find_op(op) && find_op(op)->kind == OpKind::Module)) {
      assign1(n, module_call(n, in, ind), ind);
      return;
    }
    if (std::string e = python_operator(n, in); !e.empty()) {
      assign1(n, e, ind);
      return;
    }
    std::string call = function_call(n, in);
    if (n.num_outputs() == 0) {
      line(ind, call);
    } else if (n.num_outputs() == 1) {
      assign1(n, call, ind);
    } else {
      // Several outputs (topk, sort, max.dim, std_mean, a chunk/split/unbind whose list was
      // unpacked): the call returns a tuple or a list of that length, and TorchScript unpacks
      // both (a list with a run-time length check).
      std::vector<std::string> outs;
      for (Value* v : n.outputs()) outs.push_back(bind(v));
      line(ind, join(outs) + " = " + call);
    }
  }

  // Python's operator.* (int/float/bool arithmetic of scripted models) as the operator itself,
  // which TorchScript resolves by the operand types; "" for other ops.
  static std::string python_operator(const Node& n, const std::vector<std::string>& in) {
    if (const char* sym = python_binary_operator(n.op()); sym && in.size() == 2)
      return "(" + in[0] + ") " + sym + " (" + in[1] + ")";
    if (const char* sym = python_unary_operator(n.op()); sym && in.size() == 1)
      return std::string(sym) + " (" + in[0] + ")";
    if (n.op() == "operator.contains" && in.size() == 2) return "(" + in[1] + ") in (" + in[0] + ")";
    if (is_attribute_op(n.op()) && in.size() == 1)  // x.dtype, x.device, device.type
      return "(" + in[0] + ")" + n.op().substr(n.op().find('.'));
    if (n.op() == "list.slice" && in.size() == 4) {
      auto bound = [&](size_t i) { return none_input(n, i) ? std::string() : "(" + in[i] + ")"; };
      return "(" + in[0] + ")[" + python_slice(bound(1), bound(2), bound(3)) + "]";
    }
    return "";
  }

  // torch.<name>(...) with kwarg-only schema arguments by keyword.
  std::string function_call(const Node& n, const std::vector<std::string>& in) {
    const std::string& op = n.op();
    if (op == "F.interpolate") return "torch.__interpolate(" + join(in) + ")";
    std::vector<std::string> candidates;
    const OpInfo* info = find_op(op);
    if (info && !info->aten.empty()) {
      candidates = info->aten;
    } else if (op.find("::") != std::string::npos) {
      candidates.push_back(op);
    } else {
      auto dot = op.rfind('.');
      candidates.push_back("aten::" + (dot == std::string::npos ? op : op.substr(dot + 1)));
    }
    const std::string& q = candidates.front();
    auto sep = q.find("::");
    std::string ns = q.substr(0, sep), rest = q.substr(sep + 2);
    std::string name = rest.substr(0, rest.find('.'));
    const c10::FunctionSchema* schema = nullptr;
    for (const auto& c : candidates)
      if (const auto* s = find_schema(c); s && s->arguments().size() >= n.num_inputs()) {
        schema = s;
        break;
      }
    if (!schema) {
      // No exact overload: any overload of the name with room for the inputs tells the keywords.
      for (const auto& o : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(ns + "::" + name)))
        if (o->schema().arguments().size() >= n.num_inputs()) {
          schema = &o->schema();
          break;
        }
    }
    if (!schema && torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(ns + "::" + name)).empty())
      unsupported(n, "no operator " + ns + "::" + name + " is registered");
    std::vector<std::string> args;
    for (size_t i = 0; i < in.size(); ++i) {
      if (schema && i < schema->arguments().size() && schema->arguments()[i].kwarg_only())
        args.push_back(schema->arguments()[i].name() + "=" + in[i]);
      else
        args.push_back(in[i]);
    }
    // Module::define's resolver maps `torch.<name>` to aten::<name> (torch.ops is Python-only).
    if (ns != "aten") unsupported(n, "only aten operators can be called from the generated TorchScript");
    return "torch." + name + "(" + join(args) + ")";
  }

  // ---- module ops: the ATen calls of lib/exec/modules.cpp --------------------------------

  std::string w(const Node& n, const char* key) {
    std::string name = n.weight(key);
    if (name.empty()) return "None";
    if (!g_.weights().has(name)) unsupported(n, "refers to missing weight '" + name + "'");
    return attr_path("self", name);
  }
  static std::vector<int64_t> ints(const Node& n, const char* key, size_t rank, int64_t def) {
    auto v = n.attrs().get_ints(key, {});
    if (v.empty()) v.assign(rank, def);
    if (v.size() == 1 && rank > 1) v.assign(rank, v[0]);
    return v;
  }
  static size_t rank_of(const std::string& op) {
    if (op.size() >= 2 && op.back() == 'd' && std::isdigit(static_cast<unsigned char>(op[op.size() - 2])))
      return static_cast<size_t>(op[op.size() - 2] - '0');
    return 0;
  }
  static std::string b(bool x) { return x ? "True" : "False"; }
  static std::string f(double x) { return float_src(x); }

  std::string module_call(const Node& n, const std::vector<std::string>& in, int ind) {
    const std::string& op = n.op();
    const Attrs& a = n.attrs();
    auto x = [&]() -> const std::string& {
      if (in.empty()) unsupported(n, "a module call needs an input");
      return in[0];
    };
    std::string A = "torch.";
    size_t r = rank_of(op);
    if (op == "nn.Conv1d" || op == "nn.Conv2d" || op == "nn.Conv3d") {
      std::string mode = a.get_str("padding_mode", "zeros");
      std::string xin = x();
      std::vector<int64_t> pad = ints(n, "padding", r, 0);
      if (mode != "zeros") {
        std::vector<int64_t> p;
        for (size_t i = r; i-- > 0;) {
          p.push_back(pad[i]);
          p.push_back(pad[i]);
        }
        std::string t = temp("padded");
        line(ind, t + " = " + A + "pad(" + xin + ", " + ints_src(p) + ", " + str_src(mode) + ", None)");
        xin = t;
        pad.assign(r, 0);
      }
      return A + "convolution(" + xin + ", " + w(n, "weight") + ", " + w(n, "bias") + ", " +
             ints_src(ints(n, "stride", r, 1)) + ", " + ints_src(pad) + ", " +
             ints_src(ints(n, "dilation", r, 1)) + ", False, " + ints_src(std::vector<int64_t>(r, 0)) +
             ", " + std::to_string(a.get_int("groups", 1)) + ")";
    }
    if (op == "nn.ConvTranspose1d" || op == "nn.ConvTranspose2d" || op == "nn.ConvTranspose3d")
      return A + "convolution(" + x() + ", " + w(n, "weight") + ", " + w(n, "bias") + ", " +
             ints_src(ints(n, "stride", r, 1)) + ", " + ints_src(ints(n, "padding", r, 0)) + ", " +
             ints_src(ints(n, "dilation", r, 1)) + ", True, " + ints_src(ints(n, "output_padding", r, 0)) +
             ", " + std::to_string(a.get_int("groups", 1)) + ")";
    if (op == "nn.Linear") return A + "linear(" + x() + ", " + w(n, "weight") + ", " + w(n, "bias") + ")";
    if (op == "nn.BatchNorm1d" || op == "nn.BatchNorm2d" || op == "nn.BatchNorm3d" ||
        op == "nn.InstanceNorm1d" || op == "nn.InstanceNorm2d" || op == "nn.InstanceNorm3d") {
      bool stats = a.get_bool("training", false) || n.weight("running_mean").empty();
      std::string fn = op.rfind("nn.BatchNorm", 0) == 0 ? "batch_norm(" : "instance_norm(";
      return A + fn + x() + ", " + w(n, "weight") + ", " + w(n, "bias") + ", " + w(n, "running_mean") +
             ", " + w(n, "running_var") + ", " + b(stats) + ", " + f(a.get_float("momentum", 0.1)) + ", " +
             f(a.get_float("eps", 1e-5)) + ", False)";
    }
    if (op == "nn.LayerNorm")
      return A + "layer_norm(" + x() + ", " + ints_src(a.get_ints("normalized_shape")) + ", " + w(n, "weight") +
             ", " + w(n, "bias") + ", " + f(a.get_float("eps", 1e-5)) + ")";
    if (op == "nn.TransformerEncoderLayer") {
      if (in.size() > 1) unsupported(n, "nn.TransformerEncoderLayer only without masks");
      // the fused kernel takes (batch, seq, feature): a sequence-first input is transposed around it
      const bool batch_first = a.get_bool("batch_first", false);
      std::string args = (batch_first ? x() : "torch.transpose(" + x() + ", 0, 1)") + ", " +
                         std::to_string(a.get_int("d_model")) + ", " + std::to_string(a.get_int("nhead"));
      for (const char* k : {"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                            "self_attn.out_proj.bias"})
        args += ", " + w(n, k);
      args += ", " + b(a.get_str("activation", "relu") == "gelu") + ", " + b(a.get_bool("norm_first", false)) + ", " +
              f(a.get_float("layer_norm_eps", 1e-5));
      for (const char* k : {"norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "linear1.weight",
                            "linear1.bias", "linear2.weight", "linear2.bias"})
        args += ", " + w(n, k);
      std::string fwd = "torch._transformer_encoder_layer_fwd(" + args + ", None, None)";
      return batch_first ? fwd : "torch.transpose(" + fwd + ", 0, 1)";
    }
    if (op == "nn.RMSNorm") {
      const AttrValue* e = a.find("eps");
      std::string eps = e && !std::holds_alternative<NoneAttr>(*e) ? f(a.get_float("eps")) : "None";
      return A + "rms_norm(" + x() + ", " + ints_src(a.get_ints("normalized_shape")) + ", " + w(n, "weight") +
             ", " + eps + ")";
    }
    if (op == "nn.GroupNorm")
      return A + "group_norm(" + x() + ", " + std::to_string(a.get_int("num_groups")) + ", " + w(n, "weight") +
             ", " + w(n, "bias") + ", " + f(a.get_float("eps", 1e-5)) + ")";
    if (op == "nn.Embedding")
      return A + "embedding(" + w(n, "weight") + ", " + x() + ", " + std::to_string(a.get_int("padding_idx", -1)) +
             ", False, False)";
    if (op == "nn.ReLU") return A + "relu(" + x() + ")";
    if (op == "nn.ReLU6") return A + "hardtanh(" + x() + ", 0.0, 6.0)";
    if (op == "nn.Hardtanh")
      return A + "hardtanh(" + x() + ", " + f(a.get_float("min_val", -1.0)) + ", " + f(a.get_float("max_val", 1.0)) + ")";
    if (op == "nn.LeakyReLU") return A + "leaky_relu(" + x() + ", " + f(a.get_float("negative_slope", 0.01)) + ")";
    if (op == "nn.PReLU") return A + "prelu(" + x() + ", " + w(n, "weight") + ")";
    if (op == "nn.ELU") return A + "elu(" + x() + ", " + f(a.get_float("alpha", 1.0)) + ")";
    if (op == "nn.GELU") return A + "gelu(" + x() + ", approximate=" + str_src(a.get_str("approximate", "none")) + ")";
    if (op == "nn.SiLU") return A + "silu(" + x() + ")";
    if (op == "nn.Hardswish") return A + "hardswish(" + x() + ")";
    if (op == "nn.Hardsigmoid") return A + "hardsigmoid(" + x() + ")";
    if (op == "nn.Sigmoid") return A + "sigmoid(" + x() + ")";
    if (op == "nn.Tanh") return A + "tanh(" + x() + ")";
    if (op == "nn.Softmax") {
      const AttrValue* dim = a.find("dim");
      if (!dim || !std::holds_alternative<int64_t>(*dim)) unsupported(n, "nn.Softmax without dim");
      return A + "softmax(" + x() + ", " + std::to_string(std::get<int64_t>(*dim)) + ")";
    }
    if (op == "nn.Identity" || op == "nn.Dropout" || op == "nn.Dropout2d") return x();
    if (op == "nn.Flatten")
      return A + "flatten(" + x() + ", " + std::to_string(a.get_int("start_dim", 1)) + ", " +
             std::to_string(a.get_int("end_dim", -1)) + ")";
    if (op == "nn.PixelShuffle") return A + "pixel_shuffle(" + x() + ", " + std::to_string(a.get_int("upscale_factor")) + ")";
    if (op == "nn.PixelUnshuffle")
      return A + "pixel_unshuffle(" + x() + ", " + std::to_string(a.get_int("downscale_factor")) + ")";
    if (op == "nn.MaxPool1d" || op == "nn.MaxPool2d" || op == "nn.MaxPool3d") {
      auto k = ints(n, "kernel_size", r, 1);
      auto s = a.get_ints("stride", {}).empty() ? k : ints(n, "stride", r, 1);
      return A + "max_pool" + std::to_string(r) + "d(" + x() + ", " + ints_src(k) + ", " + ints_src(s) + ", " +
             ints_src(ints(n, "padding", r, 0)) + ", " + ints_src(ints(n, "dilation", r, 1)) + ", " +
             b(a.get_bool("ceil_mode", false)) + ")";
    }
    if (op == "nn.AvgPool1d" || op == "nn.AvgPool2d" || op == "nn.AvgPool3d") {
      auto k = ints(n, "kernel_size", r, 1);
      auto s = a.get_ints("stride", {}).empty() ? k : ints(n, "stride", r, 1);
      std::string call = A + "avg_pool" + std::to_string(r) + "d(" + x() + ", " + ints_src(k) + ", " + ints_src(s) +
                         ", " + ints_src(ints(n, "padding", r, 0)) + ", " + b(a.get_bool("ceil_mode", false)) +
                         ", " + b(a.get_bool("count_include_pad", true));
      if (r > 1) {
        std::string div = "None";
        if (const AttrValue* v = a.find("divisor_override"))
          if (const auto* i = std::get_if<int64_t>(v)) div = std::to_string(*i);
        call += ", " + div;
      }
      return call + ")";
    }
    if (op.rfind("nn.AdaptiveAvgPool", 0) == 0 || op.rfind("nn.AdaptiveMaxPool", 0) == 0) {
      auto o = ints(n, "output_size", r, 1);
      std::vector<std::string> items;
      for (size_t i = 0; i < o.size(); ++i)
        items.push_back(o[i] < 0 ? A + "size(" + x() + ", " + std::to_string(-static_cast<int64_t>(r - i)) + ")"
                                 : std::to_string(o[i]));
      std::string size = "[" + join(items) + "]";
      if (op.rfind("nn.AdaptiveAvgPool", 0) == 0)
        return A + "adaptive_avg_pool" + std::to_string(r) + "d(" + x() + ", " + size + ")";
      std::string call = A + "adaptive_max_pool" + std::to_string(r) + "d(" + x() + ", " + size + ")";
      return a.get_bool("return_indices", false) ? call : call + "[0]";
    }
    if (op == "nn.ZeroPad2d" || op == "nn.ConstantPad1d" || op == "nn.ConstantPad2d" || op == "nn.ConstantPad3d") {
      auto pad = a.get_ints("padding");
      if (pad.size() == 1) pad.assign(2 * r, pad[0]);
      return A + "constant_pad_nd(" + x() + ", " + ints_src(pad) + ", " + f(a.get_float("value", 0.0)) + ")";
    }
    if (op == "nn.Upsample") return upsample(n, x(), ind);
    if (op == "nn.LSTM" || op == "nn.GRU") return rnn(n, in, ind, op == "nn.LSTM");
    if (op == "nn.MultiheadAttention") return multihead_attention(n, in, ind);
    // --quant-prep: the stubs are identities until torch.ao.quantization.convert swaps them.
    if (op == "quant.QuantStub" || op == "quant.DeQuantStub") return x();
    // FloatFunctional methods (float-functional pass) are plain arithmetic before prepare.
    if (op.rfind("FloatFunctional.", 0) == 0 && in.size() == 2) {
      std::string method = op.substr(std::string("FloatFunctional.").size());
      if (method == "add" || method == "add_scalar") return A + "add(" + in[0] + ", " + in[1] + ")";
      if (method == "mul" || method == "mul_scalar") return A + "mul(" + in[0] + ", " + in[1] + ")";
      if (method == "cat") return A + "cat(" + in[0] + ", " + in[1] + ")";
      if (method == "add_relu") return A + "relu(" + A + "add(" + in[0] + ", " + in[1] + "))";
    }
    if (op.rfind("nni.", 0) == 0)
      unsupported(n, "the intrinsic module " + op + " of --quant-prep is meant for the Python "
                     "quantization workflow");
    unsupported(n, "module op " + op + " has no TorchScript lowering");
  }

  // True when input `i` is absent or the constant None.
  static bool none_input(const Node& n, size_t i) {
    return i >= n.num_inputs() || n.input(i)->is_none_constant();
  }
  // A bool input given as a constant (absent or None: `def`).
  static bool const_bool_input(const Node& n, size_t i, bool def, const char* what) {
    if (none_input(n, i)) return def;
    const AttrValue* c = n.input(i)->constant();
    if (c && std::holds_alternative<bool>(*c)) return std::get<bool>(*c);
    if (c && std::holds_alternative<int64_t>(*c)) return std::get<int64_t>(*c) != 0;
    unsupported(n, std::string(what) + " is not a constant");
  }

  // nn.MultiheadAttention as in modules.cpp: the fused kernel with the module's packed weights
  // (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias); inputs (query, key, value[,
  // key_padding_mask, need_weights[, attn_mask, average_attn_weights]]). Unbatched inputs get a
  // batch dim of 1 and batch_first=False ones are transposed (decided at run time, like the
  // module). need_weights must be a constant: it decides whether the second result is None.
  std::string multihead_attention(const Node& n, const std::vector<std::string>& in, int ind) {
    const Attrs& a = n.attrs();
    int64_t e = a.get_int("embed_dim");
    if (a.get_bool("add_bias_kv", false) || a.get_bool("add_zero_attn", false) || a.get_int("kdim", e) != e ||
        a.get_int("vdim", e) != e || n.weight("in_proj_weight").empty())
      unsupported(n, "nn.MultiheadAttention only with packed q/k/v projections (no add_bias_kv, "
                     "add_zero_attn or kdim/vdim != embed_dim)");
    if (in.size() < 3) unsupported(n, "nn.MultiheadAttention needs query, key and value");
    if (!none_input(n, 5)) unsupported(n, "nn.MultiheadAttention with an attn_mask");
    bool need_weights = const_bool_input(n, 4, true, "need_weights");
    bool average = const_bool_input(n, 6, true, "average_attn_weights");
    bool batch_first = a.get_bool("batch_first", false);
    std::string q = temp("mha_q"), k = temp("mha_k"), v = temp("mha_v"), batched = temp("mha_batched");
    line(ind, q + " = " + in[0]);
    line(ind, k + " = " + in[1]);
    line(ind, v + " = " + in[2]);
    line(ind, batched + " = torch.dim(" + q + ") == 3");
    line(ind, "if not " + batched + ":");
    for (const auto& t : {q, k, v}) line(ind + 1, t + " = torch.unsqueeze(" + t + ", 0)");
    if (!batch_first) {
      line(ind, "else:");
      for (const auto& t : {q, k, v}) line(ind + 1, t + " = torch.transpose(" + t + ", 0, 1)");
    }
    bool masked = !none_input(n, 3);
    std::string res = temp("mha");
    line(ind, res + " = torch._native_multi_head_attention(" + q + ", " + k + ", " + v + ", " +
                  std::to_string(e) + ", " + std::to_string(a.get_int("num_heads")) + ", " +
                  w(n, "in_proj_weight") + ", " + w(n, "in_proj_bias") + ", " + w(n, "out_proj.weight") + ", " +
                  w(n, "out_proj.bias") + ", " + (masked ? in[3] : "None") + ", " + b(need_weights) + ", " +
                  b(average) + ", " + (masked ? "1" : "None") + ")");
    std::string out = temp("mha_out"), weights = temp("mha_weights");
    line(ind, out + ", " + weights + ", = " + res);
    line(ind, "if not " + batched + ":");
    line(ind + 1, out + " = torch.squeeze(" + out + ", 0)");
    line(ind + 1, weights + " = torch.squeeze(" + weights + ", 0)");
    if (!batch_first) {
      line(ind, "else:");
      line(ind + 1, out + " = torch.transpose(" + out + ", 0, 1)");
    }
    return "(" + out + ", " + (need_weights ? weights : std::string("None")) + ")";
  }

  // nn.LSTM / nn.GRU as in modules.cpp: flat weights in PyTorch's order, zero initial state when
  // none is given, unbatched inputs get a batch dim of 1 (decided at run time).
  std::string rnn(const Node& n, const std::vector<std::string>& in, int ind, bool lstm) {
    const Attrs& a = n.attrs();
    int64_t layers = a.get_int("num_layers", 1), hidden = a.get_int("hidden_size"), proj = a.get_int("proj_size", 0);
    bool bidir = a.get_bool("bidirectional", false), bias = a.get_bool("bias", true);
    bool bf = a.get_bool("batch_first", false);
    std::vector<std::string> params;
    for (int64_t l = 0; l < layers; ++l)
      for (int d = 0; d < (bidir ? 2 : 1); ++d) {
        std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
        params.push_back(w(n, ("weight_ih" + sfx).c_str()));
        params.push_back(w(n, ("weight_hh" + sfx).c_str()));
        if (bias) {
          params.push_back(w(n, ("bias_ih" + sfx).c_str()));
          params.push_back(w(n, ("bias_hh" + sfx).c_str()));
        }
        if (proj > 0) params.push_back(w(n, ("weight_hr" + sfx).c_str()));
      }
    std::string bd = bf ? "0" : "1";
    std::string x = temp("rnn_x"), batched = temp("rnn_batched");
    line(ind, x + " = " + in.at(0));
    line(ind, batched + " = torch.dim(" + x + ") == 3");
    line(ind, "if not " + batched + ":");
    line(ind + 1, x + " = torch.unsqueeze(" + x + ", " + bd + ")");
    std::string states = std::to_string(layers * (bidir ? 2 : 1));
    std::string batch = "torch.size(" + x + ", " + bd + ")";
    bool given = in.size() > 1 && !(n.input(1)->constant() && std::holds_alternative<NoneAttr>(*n.input(1)->constant()));
    std::string h0 = temp("h0"), c0 = temp("c0");
    if (given) {
      if (lstm) line(ind, h0 + ", " + c0 + ", = " + in[1]);
      else line(ind, h0 + " = " + in[1]);
      line(ind, "if not " + batched + ":");
      line(ind + 1, h0 + " = torch.unsqueeze(" + h0 + ", 1)");
      if (lstm) line(ind + 1, c0 + " = torch.unsqueeze(" + c0 + ", 1)");
    } else {
      line(ind, h0 + " = torch.new_zeros(" + x + ", [" + states + ", " + batch + ", " +
                    std::to_string(lstm && proj > 0 ? proj : hidden) + "])");
      if (lstm) line(ind, c0 + " = torch.new_zeros(" + x + ", [" + states + ", " + batch + ", " + std::to_string(hidden) + "])");
    }
    std::string res = temp("rnn");
    std::string tail = "[" + join(params) + "], " + b(bias) + ", " + std::to_string(layers) + ", 0.0, False, " + b(bidir) +
                       ", " + b(bf) + ")";
    if (lstm) line(ind, res + " = torch.lstm(" + x + ", [" + h0 + ", " + c0 + "], " + tail);
    else line(ind, res + " = torch.gru(" + x + ", " + h0 + ", " + tail);
    std::string out = temp("rnn_out"), hn = temp("hn"), cn = temp("cn");
    if (lstm) line(ind, out + ", " + hn + ", " + cn + ", = " + res);
    else line(ind, out + ", " + hn + ", = " + res);
    line(ind, "if not " + batched + ":");
    line(ind + 1, out + " = torch.squeeze(" + out + ", " + bd + ")");
    line(ind + 1, hn + " = torch.squeeze(" + hn + ", 1)");
    if (lstm) line(ind + 1, cn + " = torch.squeeze(" + cn + ", 1)");
    return lstm ? "(" + out + ", (" + hn + ", " + cn + "))" : "(" + out + ", " + hn + ")";
  }

  std::string upsample(const Node& n, const std::string& x, int ind) {
    const Attrs& a = n.attrs();
    std::string A = "torch.";
    std::string mode = a.get_str("mode", "nearest");
    // The interpreter decides the rank from the input at run time; here the type must tell it.
    const Type& t = n.input(0)->type();
    if (!t.shape) {
      // Rank unknown: F.interpolate's builtin decides at run time (same kernels, same scales).
      std::string size = "None", scale = "None";
      if (const AttrValue* v = a.find("size")) {
        if (const auto* i = std::get_if<int64_t>(v)) size = std::to_string(*i);
        if (const auto* l = std::get_if<std::vector<int64_t>>(v)) size = l->size() == 1 ? std::to_string((*l)[0]) : ints_src(*l);
      }
      if (const AttrValue* v = a.find("scale_factor")) {
        if (const auto* d = std::get_if<double>(v)) scale = float_src(*d);
        if (const auto* i = std::get_if<int64_t>(v)) scale = float_src(static_cast<double>(*i));
        if (const auto* l = std::get_if<std::vector<double>>(v)) scale = l->size() == 1 ? float_src((*l)[0]) : floats_src(*l);
      }
      bool corners = mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear";
      return A + "__interpolate(" + x + ", " + size + ", " + scale + ", " + str_src(mode) + ", " +
             (corners ? b(a.get_bool("align_corners", false)) : std::string("None")) + ")";
    }
    int64_t r = static_cast<int64_t>(t.shape->size()) - 2;
    std::string size = "None";
    auto size_v = a.get_ints("size", {});
    if (!size_v.empty()) {
      if (size_v.size() == 1) size_v.assign(static_cast<size_t>(r), size_v[0]);
      size = ints_src(size_v);
    }
    std::string scales = "None";
    if (const AttrValue* v = a.find("scale_factor")) {
      if (const auto* d = std::get_if<double>(v)) scales = floats_src(std::vector<double>(static_cast<size_t>(r), *d));
      if (const auto* i = std::get_if<int64_t>(v))
        scales = floats_src(std::vector<double>(static_cast<size_t>(r), static_cast<double>(*i)));
      if (const auto* l = std::get_if<std::vector<double>>(v)) scales = floats_src(*l);
    }
    if (size != "None") size = "annotate(Optional[List[int]], " + size + ")";
    else size = "annotate(Optional[List[int]], None)";
    if (scales != "None") scales = "annotate(Optional[List[float]], " + scales + ")";
    else scales = "annotate(Optional[List[float]], None)";
    std::string align = b(a.get_bool("align_corners", false));
    std::string rs = std::to_string(r);
    if (mode == "nearest") return A + "upsample_nearest" + rs + "d(" + x + ", " + size + ", " + scales + ")";
    if (mode == "linear") return A + "upsample_linear1d(" + x + ", " + size + ", " + align + ", " + scales + ")";
    if (mode == "bilinear") return A + "upsample_bilinear2d(" + x + ", " + size + ", " + align + ", " + scales + ")";
    if (mode == "bicubic") return A + "upsample_bicubic2d(" + x + ", " + size + ", " + align + ", " + scales + ")";
    if (mode == "trilinear") return A + "upsample_trilinear3d(" + x + ", " + size + ", " + align + ", " + scales + ")";
    (void)ind;
    unsupported(n, "nn.Upsample mode '" + mode + "'");
  }

  const Graph& g_;
  std::unordered_map<const Value*, std::string> expr_;
  std::set<std::string> used_;
  std::vector<std::pair<std::string, at::Tensor>> consts_;
  std::ostringstream out_;
};

// Module::define's default resolver knows only `torch`; the generated source also uses the
// special form `annotate` (as the TorchScript importer does).
struct SourceResolver : torch::jit::NativeResolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name, torch::jit::GraphFunction& m,
                                                         const torch::jit::SourceRange& loc) override {
    if (name == "annotate") return torch::jit::SpecialFormValue::create(c10::prim::annotate);
    return NativeResolver::resolveValue(name, m, loc);
  }
};

// The module tree that holds the weights: one node per state_dict prefix.
struct ModTree {
  std::vector<std::pair<std::string, Weight>> params, buffers;
  std::vector<std::string> order;  // children in first-seen (state_dict) order
  std::map<std::string, std::unique_ptr<ModTree>> children;
};

std::string class_atom(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "M" + out;
  return out;
}

torch::jit::Module build_module(const ModTree& t, const std::string& qualified,
                                const std::shared_ptr<torch::jit::CompilationUnit>& cu,
                                const std::string& prefix) {
  torch::jit::Module m(c10::QualifiedName(qualified), cu, /*shouldMangle=*/true);
  m.register_attribute("training", c10::BoolType::get(), false);
  for (const auto& [name, w] : t.params) {
    at::Tensor x = w.tensor.detach();
    if (x.is_floating_point() || x.is_complex()) x.requires_grad_(true);
    m.register_parameter(name, x, /*is_buffer=*/false);
  }
  for (const auto& [name, w] : t.buffers) m.register_buffer(name, w.tensor.detach());
  for (const auto& name : t.order) {
    std::string path = prefix.empty() ? name : prefix + "." + name;
    std::string q = qualified.substr(0, qualified.rfind('.')) + "." + class_atom("m_" + path);
    m.register_module(name, build_module(*t.children.at(name), q, cu, path));
  }
  return m;
}

}  // namespace

std::string torchscript_forward_source(const Graph& g) { return Lowerer(g).forward(); }

void save_torchscript(const Graph& g, const std::string& path, const std::string& class_name) {
  Lowerer low(g);
  std::string src = low.forward();

  ModTree root;
  for (const std::string& name : g.weights().names()) {
    auto comps = split_dots(name);
    ModTree* t = &root;
    for (size_t i = 0; i + 1 < comps.size(); ++i) {
      auto it = t->children.find(comps[i]);
      if (it == t->children.end()) {
        t->order.push_back(comps[i]);
        it = t->children.emplace(comps[i], std::make_unique<ModTree>()).first;
      }
      t = it->second.get();
    }
    const Weight& w = g.weights().at(name);
    (w.is_param ? t->params : t->buffers).emplace_back(comps.back(), w);
  }

  try {
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    std::string base = "__torch__.tinytrace";
    torch::jit::Module m = build_module(root, base + "." + class_atom(class_name), cu, "");
    for (const auto& [name, t] : low.constants())
      m.register_attribute(name, c10::TensorType::get(), t.detach(), /*is_param=*/false, /*is_buffer=*/false);
    try {
      m.define(src, std::make_shared<SourceResolver>());
    } catch (const std::exception& e) {
      std::string msg = e.what();
      std::string first = msg.substr(msg.find_first_not_of(" \n"));
      first = first.substr(0, first.find('\n'));
      throw Error(ExitCode::Internal,
                  "--emit torchscript: the generated forward does not compile: " + first +
                      " — report it as a tinytrace bug",
                  {msg, src});
    }
    m.eval();
    m.save(path);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    throw Error(ExitCode::Internal, "--emit torchscript: cannot build or save " + path + ": " +
                                        msg.substr(0, msg.find('\n')) + " — report it as a tinytrace bug");
  }
}

}  // namespace tt
