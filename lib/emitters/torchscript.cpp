// `--emit torchscript`, the source half: the IR as TorchScript source for `forward` (Note
// [Lowering to TorchScript source]). Compiling it into a module with the weights and saving the
// archive needs the JIT, so that half is in lib/loaders/torchscript_save.cpp.
//
// Note [Lowering to TorchScript source]
// - Weights are read as self.<state_dict name> ("layer1.0.conv1.weight" -> self.layer1... with
//   getattr(self.layer1, "0") for components that are not identifiers, which TorchScript
//   compiles to a plain attribute read): the saving half registers one submodule per state_dict
//   prefix, so state_dict keys equal NAME.pth's.
// - Module::define resolves `torch.<name>` to the builtin aten::<name> (there is no Python, so no
//   torch.ops / torch.nn.functional); every call is spelled that way. Type annotations are
//   spelled `annotate(T, e)` as in the archives' own code: torch.jit.annotate is a Python
//   function, so the saving half's resolver adds the special form `annotate`.
// - Module ops become their lowering (lib/ir/module_lowering.h), printed in place: the same IR the
//   interpreter runs, so the archive computes exactly what `--verify` checks; function, method
//   and aten:: fallback ops become torch.<name>(...) calls with the inputs in schema order
//   (kwarg-only schema arguments by keyword, the schemas coming from the JIT's operator
//   registry through OperatorSchemas), which TorchScript resolves to an overload by the
//   argument types.
// - prim ops become Python expressions; prim.If an if/else, prim.Loop a while loop with the
//   TorchScript loop semantics (trip count and condition).
// - Literals come from the Python-source toolkit (lib/emitters/pysrc.h), with two TorchScript
//   differences: strings escape control characters in octal (its lexer has no \x), and -inf is
//   float("-inf").
// - Small tensor constants become non-buffer tensor attributes of the root module
//   (self._tt_constant_N): not in the state_dict, but saved in the archive.
//
// Note [NamedTuples in TorchScript]
// A NamedTuple (Note [NamedTuple types] in ir/ir.h) is built as in the archive's own code,
// `Cls(a, b)`, and annotated `Cls`: the source spells the class torchscript_named_tuple_name(
// qualified name) (ir/named_tuples.h), which the saving half's resolver maps to a TupleType it
// creates with the original qualified name, fields and field types. NAME.pt then defines the class
// as the original archive did, and its forward returns the same NamedTuple (`out.logits` works
// after torch.jit.load).
#include "emitters/torchscript.h"

#include "emitters/pysrc.h"
#include "ir/module_lowering.h"
#include "ir/named_tuples.h"
#include "ir/op_table.h"
#include "ir/quant.h"
#include "ir/rewrite.h"
#include "support/diag.h"

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace tt {
namespace {

using namespace pysrc;

// Names a local variable must not take: Python keywords and what the generated code refers to.
bool is_reserved(const std::string& s) {
  static const std::set<std::string> r = {
      "False",    "None",     "True",     "and",    "as",       "assert",   "async",     "await",
      "break",    "class",    "continue", "def",    "del",      "elif",     "else",      "except",
      "finally",  "for",      "from",     "global", "if",       "import",   "in",        "is",
      "lambda",   "nonlocal", "not",      "or",     "pass",     "raise",    "return",    "try",
      "while",    "with",     "yield",    "self",   "torch",    "math",     "int",       "float",
      "bool",     "str",      "len",      "range",  "getattr",  "print",    "List",      "Tuple",
      "Optional", "Tensor",   "Dict",     "Device", "NoneType", "annotate", "__torch__", "ops"};
  return r.count(s) != 0;
}

// A string literal TorchScript's lexer reads: control characters as octal escapes (it has no \x).
std::string str_src(const std::string& s) { return py_str(s, /*octal=*/true); }

// A float literal: Python's repr, except that -inf stays one call (float("-inf")).
std::string float_src(double d) {
  return std::isinf(d) && d < 0 ? std::string("float(\"-inf\")") : py_float(d);
}

std::string ints_src(const std::vector<int64_t>& v) { return py_list(int_items(v)); }

std::vector<std::string> float_texts(const std::vector<double>& v) {
  std::vector<std::string> items;
  for (double x : v) items.push_back(float_src(x));
  return items;
}
std::string floats_src(const std::vector<double>& v) { return py_list(float_texts(v)); }

// TorchScript spelling of a type (graph input annotations, empty list literals).
std::string ts_type(const Type& t) {
  using K = Type::Kind;
  switch (t.kind) {
    case K::Any:
    case K::Tensor:
      return "Tensor";
    case K::Int:
    case K::ScalarType:
    case K::Layout:
    case K::MemoryFormat:
      return "int";
    case K::Float:
      return "float";
    case K::Complex:
      return "complex";
    case K::Bool:
      return "bool";
    case K::Str:
      return "str";
    case K::None:
      return "NoneType";
    case K::Device:
      return "Device";
    case K::List:
      return "List[" + (t.elems.empty() ? std::string("Tensor") : ts_type(t.elems[0])) + "]";
    case K::Optional:
      return "Optional[" + (t.elems.empty() ? std::string("Tensor") : ts_type(t.elems[0])) + "]";
    case K::Tuple: {
      if (t.is_named_tuple()) return torchscript_named_tuple_name(t.name);
      std::vector<std::string> e;
      for (const Type& x : t.elems) e.push_back(ts_type(x));
      return "Tuple[" + join(e) + "]";
    }
    case K::Dict:
      return "Dict[" + (t.elems.size() > 0 ? ts_type(t.elems[0]) : std::string("str")) + ", " +
             (t.elems.size() > 1 ? ts_type(t.elems[1]) : std::string("Tensor")) + "]";
    case K::Generator:  // a forward input (one the graph makes is refused: torchscript_forward)
      return "Generator";
    case K::Enum:  // refused by torchscript_forward
      break;
  }
  return "Tensor";
}

[[noreturn]] void unsupported(const Node& n, const std::string& why) {
  throw Error(ExitCode::Unsupported, "--emit torchscript cannot express " + describe(n) + ": " +
                                         why + " — drop torchscript from --emit for this model")
      .at(location_of(n));
}

// A component TorchScript reads as `a.b`: a name that is not reserved (else getattr(a, "0")).
bool plain_attr(const std::string& c) { return is_name(c) && !is_reserved(c); }

// `self.a.b` with getattr for components that are not identifiers ("0").
std::string self_attr(const std::string& dotted) {
  return attr_path("self", split(dotted, '.'), plain_attr);
}

class Lowerer {
 public:
  Lowerer(const Graph& g, const OperatorSchemas& schemas) : g_(g), schemas_(schemas) {}

  std::string forward() {
    std::vector<std::string> params = {"self"};
    for (Value* v : g_.inputs()) {
      params.push_back(bind(v) + ": " + ts_type(v->type()));
      if (const AttrValue* d = g_.input_default(v)) {  // Note [Forward defaults] in ir/ir.h
        params.back() += " = " + value_src(*d, contained_type(v->type()));
      }
    }
    out_ << "def forward(" << join(params) << "):\n";
    emit_nodes(*g_.block(), 1);
    const auto& outs = g_.outputs();
    std::vector<std::string> items;
    for (Value* v : outs) items.push_back(ex(v));
    if (outs.empty())
      line(1, "return None");
    else if (outs.size() == 1)
      line(1, "return " + items[0]);
    else
      line(1, "return (" + join(items) + ")");
    return out_.str();
  }

  std::vector<std::pair<std::string, at::Tensor>> take_constants() { return std::move(consts_); }

 private:
  // Every overload of `ns::name` (cached: the registry is asked once per name).
  const std::vector<c10::FunctionSchema>& overloads(const std::string& qualified_name) {
    auto it = overloads_.find(qualified_name);
    if (it == overloads_.end())
      it = overloads_.emplace(qualified_name, schemas_(qualified_name)).first;
    return it->second;
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
    for (const auto& s : overloads(qualified.substr(0, sep) + "::" + name))
      if (s.overload_name() == overload) return &s;
    return nullptr;
  }

  // A fresh local name for `v`, derived from its IR name.
  std::string bind(const Value* v) {
    std::string base = v->name();
    if (!is_name(base) || is_reserved(base) || base.rfind("_tt_", 0) == 0) base = "_" + base;
    if (!is_name(base)) base = "_v";
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
      throw Error(ExitCode::Internal,
                  "--emit torchscript: %" + v->name() +
                      " is used before it is defined — report it as a tinytrace bug");
    return it->second;
  }

  // Note [Optional refinement in TorchScript]
  // TorchScript's compiler refines an Optional[T] variable to T inside `if x is not None:` (and
  // the else of `if x is None:`) only when the test is written in the if itself, not through a
  // bool computed before it. An if on `x is (not) None` of an Optional variable is written so;
  // any other condition is `bool(c)`.
  std::string condition_src(const Node& n) {
    const Node* c = n.input(0)->node();
    if (c && (c->is("operator.is_not") || c->is("operator.is_")) && c->num_inputs() == 2)
      for (size_t side = 0; side < 2; ++side) {
        const Value* a = c->input(side);
        const AttrValue* b = c->input(1 - side)->constant();
        std::string name = ex(a);
        if (a->type().kind == Type::Kind::Optional && b && std::holds_alternative<NoneAttr>(*b) &&
            is_name(name) && !is_reserved(name))
          return name + (c->is("operator.is_not") ? " is not None" : " is None");
      }
    return "bool(" + ex(n.input(0)) + ")";
  }

  void line(int indent, const std::string& s) {
    out_ << std::string(static_cast<size_t>(indent) * 4, ' ') << s << "\n";
  }

  void emit_nodes(const Block& b, int ind) {
    for (Node* n = b.front(); n; n = n->next()) emit_node(*n, ind);
  }

  std::string constant_src(const Node& n) {
    return value_src(n.attrs().at("value"), n.output()->type());
  }

  // The TorchScript text of a constant of type `t`.
  std::string value_src(const AttrValue& v, const Type& t) {
    if (t.kind == Type::Kind::Tuple) {  // a tuple default, held as a list (default_fits)
      std::vector<std::string> items;
      std::visit(
          [&](const auto& l) {
            using L = std::decay_t<decltype(l)>;
            if constexpr (std::is_same_v<L, std::vector<int64_t>>) items = int_items(l);
            if constexpr (std::is_same_v<L, std::vector<double>>) items = float_texts(l);
            if constexpr (std::is_same_v<L, std::vector<std::string>>)
              for (const auto& x : l) items.push_back(str_src(x));
          },
          v);
      if (!items.empty() || t.elems.empty()) return py_tuple(items);
    }
    Type::Kind elem =
        t.kind == Type::Kind::List && !t.elems.empty() ? t.elems[0].kind : Type::Kind::Any;
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
        if (l.empty())
          return "annotate(" +
                 ts_type(t.kind == Type::Kind::List ? t : Type::list(Type::of(Type::Kind::Int))) +
                 ", [])";
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
      std::string operator()(const std::complex<double>& z) const {
        return "complex(" + float_src(z.real()) + ", " + float_src(z.imag()) + ")";
      }
      std::string operator()(const DeviceAttr& d) const {
        return "torch.device(" + str_src(d.name) + ")";
      }
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
    if (op == "prim.StateGet" || op == "prim.StateSet")  // Note [Module state] in exec/alias.h
      unsupported(n, "the module attribute '" + state_path(n) +
                         "' keeps its value between calls (module state), which the "
                         "TorchScript emitter does not write");
    if (op == "prim.GetAttr") {
      std::string w = n.weight("value");
      if (w.empty() || !g_.weights().has(w))
        unsupported(n, "reads weight '" + w + "' that the model does not have");
      assign1(n, self_attr(w), ind);
      return;
    }
    std::vector<std::string> in;
    for (Value* v : n.inputs()) in.push_back(ex(v));
    if (op == "prim.ListConstruct") {
      bool has_none = false;
      for (Value* v : n.inputs())
        if (const AttrValue* c = v->constant())
          has_none = has_none || std::holds_alternative<NoneAttr>(*c);
      std::string lit = "[" + join(in) + "]";
      const Type& t = n.output()->type();
      if (in.empty() || has_none) {
        Type lt =
            t.kind == Type::Kind::List && !t.elems.empty() && t.elems[0].kind != Type::Kind::Any
                ? t
                : Type::list(has_none ? Type::optional(Type::tensor()) : Type::tensor());
        lit = "annotate(" + ts_type(lt) + ", " + lit + ")";
      }
      assign1(n, lit, ind);
      return;
    }
    if (op == "prim.TupleConstruct") {
      const Type& t = n.output()->type();
      if (t.is_named_tuple())  // Note [NamedTuples in TorchScript]
        assign1(n, torchscript_named_tuple_name(t.name) + "(" + join(in) + ")", ind);
      else
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
      std::string dtype = k == Type::Kind::Int     ? "4"
                          : k == Type::Kind::Float ? "7"
                          : k == Type::Kind::Bool  ? "11"
                                                   : "";
      assign1(n,
              dtype.empty() ? "torch.tensor(" + in.at(0) + ")"
                            : "torch.scalar_tensor(" + in.at(0) + ", dtype=" + dtype + ")",
              ind);
      return;
    }
    if (op == "prim.If") {
      if (n.num_inputs() != 1 || n.blocks().size() != 2)
        unsupported(n, "expected one condition and two blocks");
      std::vector<std::string> outs;
      for (Value* v : n.outputs()) outs.push_back(bind(v));
      line(ind, "if " + condition_src(n) + ":");
      for (size_t b = 0; b < 2; ++b) {
        if (b == 1) line(ind, "else:");
        const Block& blk = *n.block(b);
        emit_nodes(blk, ind + 1);
        for (size_t i = 0; i < outs.size(); ++i)
          line(ind + 1, outs[i] + " = " + ex(blk.outputs().at(i)));
        line(ind + 1, "pass");
      }
      return;
    }
    if (op == "prim.Loop") {
      if (n.num_inputs() < 2 || n.blocks().size() != 1)
        unsupported(n, "expected (max_trips, cond, carried...) and one block");
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
      for (size_t i = 1; i < body.inputs().size(); ++i)
        line(ind + 1, bind(body.inputs()[i]) + " = " + outs.at(i - 1));
      emit_nodes(body, ind + 1);
      line(ind + 1, cond + " = bool(" + ex(body.outputs().at(0)) + ")");
      for (size_t i = 0; i < outs.size(); ++i)
        line(ind + 1, outs[i] + " = " + ex(body.outputs().at(i + 1)));
      line(ind + 1, it + " = " + it + " + 1");
      return;
    }
    if (op == "prim.Print") {
      line(ind, "print(" + join(in) + ")");
      return;
    }
    if (op.rfind("prim.", 0) == 0) unsupported(n, "this prim op has no TorchScript lowering");
    if (!n.module().empty() || (n.info() && n.info()->kind == OpKind::Module)) {
      assign1(n, module_call(n, in, ind), ind);
      return;
    }
    if (op_has(n, kWritesContainer)) {
      // The same statement as in Python (Note [Container mutation] in exec/alias.h).
      std::string stmt;
      if (op == "operator.setitem" && in.size() == 3)
        stmt = "(" + in[0] + ")[" + in[1] + "] = " + in[2];
      else if (op == "operator.delitem" && in.size() == 2)
        stmt = "del " + in[0] + "[" + in[1] + "]";
      else if (op == "operator.imul" && in.size() == 2)
        stmt = "(" + in[0] + ") *= " + in[1];
      else if (!in.empty())
        stmt = "(" + in[0] + ")." + op.substr(op.rfind('.') + 1) + "(" +
               join(std::vector<std::string>(in.begin() + 1, in.end())) + ")";
      if (stmt.empty()) unsupported(n, "a container mutation without its container");
      if (n.num_outputs() == 0)
        line(ind, stmt);
      else
        assign1(n, stmt, ind);
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
    if (n.op() == "operator.contains" && in.size() == 2)
      return "(" + in[1] + ") in (" + in[0] + ")";
    if (n.op() == "max" || n.op() == "min" || n.op() == "str")  // TorchScript's builtins too
      return n.op() + "(" + join(in) + ")";
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
    if (op == "F.interpolate") return interpolate_call(n, in);
    std::vector<std::string> candidates;
    const OpInfo* info = n.info();
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
    // The first overload with room for the inputs whose non-optional arguments get no None
    // (torch.repeat_interleave(repeats, None): the repeats-only overload, output_size by keyword).
    auto takes_nones = [&](const c10::FunctionSchema& s) {
      for (size_t i = 0; i < n.num_inputs(); ++i)
        if (n.input(i)->is_none_constant() &&
            s.arguments()[i].type()->kind() != c10::TypeKind::OptionalType &&
            s.arguments()[i].type()->kind() != c10::TypeKind::NoneType)
          return false;
      return true;
    };
    for (bool strict : {true, false}) {
      for (const auto& c : candidates)
        if (const auto* s = find_schema(c);
            s && s->arguments().size() >= n.num_inputs() && (!strict || takes_nones(*s))) {
          schema = s;
          break;
        }
      if (schema) break;
    }
    if (!schema) {
      // No exact overload: any overload of the name with room for the inputs tells the keywords.
      for (const auto& s : overloads(ns + "::" + name))
        if (s.arguments().size() >= n.num_inputs()) {
          schema = &s;
          break;
        }
    }
    if (!schema && overloads(ns + "::" + name).empty())
      unsupported(n, "no operator " + ns + "::" + name + " is registered");
    std::vector<std::string> args;
    for (size_t i = 0; i < in.size(); ++i) {
      if (schema && i < schema->arguments().size() && schema->arguments()[i].kwarg_only())
        args.push_back(schema->arguments()[i].name() + "=" + in[i]);
      else
        args.push_back(in[i]);
    }
    // Module::define's resolver maps `torch.<name>` to aten::<name>; the ops of other namespaces
    // (custom op libraries, Note [Op libraries] in ir/model.h) are `ops.<ns>.<name>`, as in the
    // archives PyTorch saves (SourceResolver in lib/loaders/torchscript_save.cpp).
    if (ns != "aten") return "ops." + ns + "." + name + "(" + join(args) + ")";
    return "torch." + name + "(" + join(args) + ")";
  }

  // F.interpolate(input, size, scale_factor, mode, align_corners[, antialias]): TorchScript's
  // torch.__interpolate, except for what it lacks: mode "nearest-exact" is the ATen op
  // _upsample_nearest_exact{N}d(input, size, scale_factors), N from the size or scale list, and
  // antialias=True _upsample_{bilinear,bicubic}2d_aa(input, size, align_corners, scale_factors).
  std::string interpolate_call(const Node& n, const std::vector<std::string>& in) {
    const AttrValue* mode = n.num_inputs() > 3 ? n.input(3)->constant() : nullptr;
    const AttrValue* aa = n.num_inputs() > 5 ? n.input(5)->constant() : nullptr;
    auto list_or_none = [&](size_t i, const char* elem) {
      return none_input(n, i) ? "annotate(Optional[List[" + std::string(elem) + "]], None)" : in[i];
    };
    if (aa && std::holds_alternative<bool>(*aa) && std::get<bool>(*aa)) {
      std::string m =
          mode && std::holds_alternative<std::string>(*mode) ? std::get<std::string>(*mode) : "";
      if (m != "bilinear" && m != "bicubic")
        unsupported(n, "F.interpolate(antialias=True) with mode '" + m + "'");
      return "torch._upsample_" + m + "2d_aa(" + in[0] + ", " + list_or_none(1, "int") + ", " +
             (none_input(n, 4) ? std::string("False") : in[4]) + ", " + list_or_none(2, "float") +
             ")";
    }
    if (n.num_inputs() > 5 && !aa)
      unsupported(n, "F.interpolate with an antialias that is not a constant");
    if (!mode || !std::holds_alternative<std::string>(*mode) ||
        std::get<std::string>(*mode) != "nearest-exact") {
      std::vector<std::string> five(in.begin(), in.begin() + std::min<size_t>(in.size(), 5));
      return "torch.__interpolate(" + join(five) + ")";
    }
    size_t rank = 0;
    for (size_t i : {1, 2}) {
      const Node* p = n.input(i)->node();
      const AttrValue* c = n.input(i)->constant();
      if (p->is("prim.ListConstruct")) rank = p->num_inputs();
      if (c && std::holds_alternative<std::vector<int64_t>>(*c))
        rank = std::get<std::vector<int64_t>>(*c).size();
      if (c && std::holds_alternative<std::vector<double>>(*c))
        rank = std::get<std::vector<double>>(*c).size();
    }
    if (rank < 1 || rank > 3)
      unsupported(n,
                  "F.interpolate(mode=\"nearest-exact\") needs its size or scale_factor as a "
                  "list of known length");
    return "torch._upsample_nearest_exact" + std::to_string(rank) + "d(" + in[0] + ", " +
           list_or_none(1, "int") + ", " + list_or_none(2, "float") + ")";
  }

  // True when input `i` is absent or the constant None.
  static bool none_input(const Node& n, size_t i) {
    return i >= n.num_inputs() || n.input(i)->is_none_constant();
  }

  // A module op: its lowering (lib/ir/module_lowering.h) printed in place, its inputs bound to
  // the call's arguments; returns the expression of its result.
  std::string module_call(const Node& n, const std::vector<std::string>& in, int ind) {
    const std::string& op = n.op();
    // --quant-prep's intrinsic modules are meant for the Python quantization workflow.
    if (composite_parts(op))
      unsupported(n, "the intrinsic module " + op +
                         " of --quant-prep is meant for the Python "
                         "quantization workflow");
    if (!has_module_lowering(op))
      unsupported(n, "module op " + op + " has no TorchScript lowering");
    std::string why;
    std::unique_ptr<Graph> lowered = lower_module(n, why);
    if (!lowered) unsupported(n, why);
    for (size_t i = 0; i < in.size(); ++i) expr_[lowered->inputs().at(i)] = in[i];
    emit_nodes(*lowered->block(), ind);
    std::string result = ex(lowered->outputs().at(0));
    lowered_.push_back(std::move(lowered));  // its values stay keys of expr_
    return result;
  }

  const Graph& g_;
  const OperatorSchemas& schemas_;
  std::map<std::string, std::vector<c10::FunctionSchema>> overloads_;
  std::vector<std::unique_ptr<Graph>> lowered_;
  std::unordered_map<const Value*, std::string> expr_;
  std::set<std::string> used_;
  std::vector<std::pair<std::string, at::Tensor>> consts_;
  std::ostringstream out_;
};

}  // namespace

TorchScriptForward torchscript_forward(const Graph& g, const OperatorSchemas& schemas) {
  // An Enum needs its class in the saved archive (Note [Enum types] in ir/ir.h), which this
  // emitter does not define yet.
  std::vector<Type> enums = enum_types(g);
  if (!enums.empty())
    throw Error(ExitCode::Unsupported, "--emit torchscript cannot express the Enum class " +
                                           enums.front().name +
                                           " yet — use --emit python (the default)");
  // A torch.Generator (Note [Generator values] in ir/ir.h): TorchScript would run a
  // torch.Generator() of constant arguments while compiling the written source and keep that one
  // object from call to call, and its executor merges generators and initial_seed() calls
  // (Note [Generators while lifting], lib/loaders/torchscript/lifter.cpp): the source would not
  // compute what the graph computes.
  bool generator = any_node(g.block(), [](const Node* n) {
    for (const Value* o : n->outputs())
      if (o->type().kind == Type::Kind::Generator) return true;
    return false;
  });
  if (generator)
    throw Error(ExitCode::Unsupported,
                "--emit torchscript cannot express a torch.Generator yet (TorchScript keeps a "
                "generator made of constants from call to call) — use --emit python (the default)");
  Lowerer low(g, schemas);
  TorchScriptForward out;
  out.source = low.forward();
  out.constants = low.take_constants();
  return out;
}

}  // namespace tt
