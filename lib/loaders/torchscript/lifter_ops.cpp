// The TorchScript lifter (lifter.h): ATen ops and TorchScript's scalar builtins.
//
// Note [ATen normalisations]
// Where one Python spelling stands for ATen ops with different argument layouts, the lifter
// rewrites to the layout of the op table row (exactly, never changing the result):
//   aten::_convolution{,_mode}     -> F.conv{N}d / F.conv_transpose{N}d (conv{N}d schema order)
//   aten::constant_pad_nd, reflection_pad*, replication_pad* -> F.pad (aten::pad order)
//   aten::upsample_*.vec           -> F.interpolate(input, size, scale_factor, mode, align_corners)
//   aten::arange, arange.start     -> torch.arange (arange.start_step order)
//   aten::{hann,hamming,blackman,bartlett,kaiser}_window{,.periodic,.periodic_alpha}
//                                  -> the overload with every parameter (torch's defaults added)
//   aten::stft                     -> torch.stft (stft.center order, center=False)
//   aten::{std,var,std_mean,var_mean}{,.dim} -> torch.std, ... (the .correction order)
//   aten::to.device/dtype_layout   -> Tensor.to (to.dtype order) when the device is the CPU
//   aten::to.device (memory_format None), to.prim_Device -> Tensor.to_device (to.prim_Device
//                                     order, a constant dtype) when the device is known at run time
//   aten::Int/ScalarImplicit(prim::NumToTensor(x)) -> x
//   aten::slice(x, dim, 0, INT64_MAX, 1) -> x (the tracer's record of a `:` in x[:, i])
//   aten::to(c, cpu, c's dtype, False, False, None) of a constant tensor c -> c (x[[2, 0]])
//   (the last three in fold_tracer_noise, jit_cleanup.cpp)
#include "loaders/torchscript/lifter.h"

#include "exec/dispatch.h"
#include "exec/interpreter.h"
#include "ir/op_table.h"
#include "loaders/jit_builtins.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace tt::ts {

void Lifter::lift_op(const jit::Node* n, Frame& f) {
  const c10::FunctionSchema* schema = n->maybeSchema();
  if (!schema)
    unsupported(n, "an operator without a known schema", f,
                "load the library that defines it, or replace the op in the model");
  std::string qual = qualified_overload(*schema);
  const auto& args = schema->arguments();
  if (n->inputs().size() > args.size())
    unsupported(n, "a variadic operator", f, "replace the op in the model");
  std::vector<Value*> ins;
  for (size_t i = 0; i < n->inputs().size(); ++i)
    ins.push_back(value_of(f, n->input(i), n, int_role(args[i])));

  if (fold_tracer_noise(qual, ins, n, f)) return;  // jit_cleanup.cpp
  if (fold_self_comparison(n, ins, f)) return;
  if (lift_traced_qfunctional(n, f)) return;  // lifter_quantized.cpp
  if (lift_inplace(n, *schema, ins, f)) return;

  std::string op;
  std::vector<std::string> kwarg_names;  // of a torch.ops call's trailing inputs (below)
  if (!normalize(qual, ins, n, f, op)) {
    const OpInfo* info = find_op_by_aten(qual);
    if (info && fits_python_call(*info, *schema, ins)) {
      op = info->name;
    } else {
      bool dispatched = c10::Dispatcher::singleton()
                            .findOp(c10::OperatorName(schema->name(), schema->overload_name()))
                            .has_value();
      // An op of a custom library (Note [Op libraries]) keeps its qualified name and is written
      // torch.ops.<ns>.<op>.<overload>(...), as the archive's own code calls it.
      // (TorchScript builtins of prim:: and other namespaces run through the JIT's registry.)
      bool custom = schema->name().rfind("aten::", 0) != 0 && !find_jit_only_operator(qual);
      if (custom && !dispatched)
        unsupported(
            n, "operator " + schema->name() + " has no implementation in LibTorch's dispatcher", f,
            "replace it in the model or ask for it to be added");
      if (dispatched) {
        op = schema->name() + "." +
             (schema->overload_name().empty() ? "default" : schema->overload_name());
      } else if (const char* py = qual == "aten::pow.int_to_int"
                                      ? nullptr
                                      : python_builtin(schema->name(), ins)) {
        op = py;
      } else if (exact_through_torch_ops(n, *schema)) {
        // Note [TorchScript builtins without a row]
        op = schema->name() + "." +
             (schema->overload_name().empty() ? "default" : schema->overload_name());
        // Note [Keyword arguments of torch.ops calls]
        // torch.ops takes a schema's keyword-only arguments by name only, and the Python emitter
        // knows no TorchScript-only schema (torch.tensor(z, dtype=...) is aten::tensor.complex(t,
        // *, dtype, device, requires_grad)): trailing ones that hold their default are left out
        // (torch.ops fills them in), the others are named on the node (attribute kwarg_names,
        // one name per trailing input), and the emitter writes them as keywords.
        while (!ins.empty() && args[ins.size() - 1].kwarg_only() &&
               holds_default(ins.back(), args[ins.size() - 1]))
          ins.pop_back();
        for (size_t i = 0; i < ins.size(); ++i)
          if (args[i].kwarg_only()) kwarg_names.push_back(args[i].name());
      } else {
        unsupported(n, "TorchScript-only operator " + qual + " is not supported", f,
                    "rewrite that expression in the model, or trace it with "
                    "torch.jit.trace(model.eval(), example)");
      }
    }
  }
  // x.dtype != torch.bool: the constant is an int in TorchScript, a torch.dtype in Python
  if ((op == "operator.eq" || op == "operator.ne") && is_dtype_comparison(ins))
    for (Value*& v : ins) v = typed_int(v, IntRole::ScalarType, f, n);
  if (op == "str") require_exact_text(n, f);
  if (Value* folded = fold_scalar(op, ins, n, f)) {
    f.env[n->output()] = Binding{folded, {}};
    return;
  }
  Node* node = emit(op, ins, n, f);
  if (!kwarg_names.empty()) node->attrs().set("kwarg_names", kwarg_names);
  if (written_as_torch_ops(op)) {
    diags_.warn("aten-fallback",
                "no Python spelling for " + op + "; it is emitted as torch.ops.aten." +
                    op.substr(6) + "(...)",
                node->num_outputs() ? node->output()->name() : "", f.scope, node->loc());
  }
}

// Whether the row's Python call can pass these inputs: every input it leaves out as "=" (Note
// [Op table rows]) holds the schema's default (F.rrelu has no generator), and every int code
// written as a Python string (Note [Python enums]) is a constant the string list covers (or None).
// Otherwise the op stays an ATen call.
bool Lifter::fits_python_call(const OpInfo& info, const c10::FunctionSchema& schema,
                              const std::vector<Value*>& ins) {
  for (size_t i = 0; i < info.py_args.size() && i < ins.size(); ++i) {
    const AttrValue* c = ins[i]->constant();
    if (const auto* names = python_enum(info.name, info.py_args[i])) {
      if (!c) return false;
      if (std::holds_alternative<NoneAttr>(*c)) continue;
      const int64_t* code = std::get_if<int64_t>(c);
      if (!code || *code < 0 || *code >= static_cast<int64_t>(names->size())) return false;
      continue;
    }
    if (info.py_args[i] != "=") continue;
    if (!holds_default(ins[i], schema.arguments().at(i))) return false;
  }
  return true;
}

// Whether `v` is a constant equal to the schema argument's default.
bool Lifter::holds_default(const Value* v, const c10::Argument& arg) {
  const AttrValue* c = v->constant();
  const auto& d = arg.default_value();
  if (!d || !c) return false;
  return d->isNone() ? std::holds_alternative<NoneAttr>(*c) : attr_to_ivalue(*c, v->type()) == *d;
}

// The Python spelling of a TorchScript-only scalar/list builtin (Note [Lifting control flow]);
// nullptr when there is none. Lists only where Python gives the same result.
const char* Lifter::python_builtin(const std::string& name, const std::vector<Value*>& ins) {
  static const std::map<std::string, const char*> numeric = {
      {"aten::add", "operator.add"},
      {"aten::sub", "operator.sub"},
      {"aten::mul", "operator.mul"},
      {"aten::div", "operator.truediv"},
      {"aten::floordiv", "operator.floordiv"},
      {"aten::remainder", "operator.mod"},
      {"aten::neg", "operator.neg"},
      {"aten::lt", "operator.lt"},
      {"aten::le", "operator.le"},
      {"aten::gt", "operator.gt"},
      {"aten::ge", "operator.ge"},
      {"aten::eq", "operator.eq"},
      {"aten::ne", "operator.ne"},
      {"aten::__not__", "operator.not_"},
      {"aten::__and__", "operator.and_"},
      {"aten::__or__", "operator.or_"},
      {"aten::__xor__", "operator.xor"},
      {"aten::Int", "int"},
      {"aten::Float", "float"},
      {"aten::Bool", "bool"},
      {"aten::floor", "math.floor"},
      {"aten::ceil", "math.ceil"},
      {"aten::sqrt", "math.sqrt"},
      {"aten::abs", "abs"},
      {"aten::pow", "operator.pow"},
  };
  static const std::map<std::string, const char*> any = {
      {"aten::__is__", "operator.is_"},
      {"aten::__isnot__", "operator.is_not"},
      {"aten::__getitem__", "operator.getitem"},
      {"aten::len", "len"},
      {"aten::dim", "Tensor.dim"},
      {"aten::is_autocast_enabled", "torch.is_autocast_enabled"},
      {"aten::__contains__", "operator.contains"},
      {"aten::any", "any"},
      {"aten::all", "all"},
      {"aten::sum", "sum"},
      {"aten::is_grad_enabled", "torch.is_grad_enabled"},
  };
  // sum(l) of anything but ints and bools stays a torch.ops call: Python 3.12's sum() of floats
  // compensates rounding ([1e16, 1.0, -1e16] gives 1.0, TorchScript's left-to-right sum 0.0), and
  // newer Pythons (3.14) compensate complex sums too (Note [Complex scalars]).
  if (name == "aten::sum" &&
      (ins.size() != 1 || ins[0]->type().kind != Type::Kind::List || ins[0]->type().elems.empty() ||
       (ins[0]->type().elems[0].kind != Type::Kind::Int &&
        ins[0]->type().elems[0].kind != Type::Kind::Bool)))
    return nullptr;
  if (auto it = any.find(name); it != any.end()) return it->second;
  auto it = numeric.find(name);
  if (it == numeric.end()) return nullptr;
  auto all_are = [&](Type::Kind kind) {
    return std::all_of(ins.begin(), ins.end(), [&](Value* v) { return v->type().kind == kind; });
  };
  // a + b, a == b, a != b on lists (hx.size() != expected_hidden_size in nn.LSTM)
  if ((name == "aten::add" || name == "aten::eq" || name == "aten::ne") && ins.size() == 2 &&
      all_are(Type::Kind::List))
    return it->second;
  // dtypes are ints in TorchScript: x.dtype == y.dtype
  if ((name == "aten::eq" || name == "aten::ne") && ins.size() == 2 && is_dtype_comparison(ins))
    return it->second;
  for (Value* v : ins) {
    Type::Kind k = v->type().kind;
    if (k != Type::Kind::Int && k != Type::Kind::Float && k != Type::Kind::Bool &&
        k != Type::Kind::Any)
      return nullptr;
  }
  return it->second;
}

// Note [TorchScript builtins without a row]
// A TorchScript-only operator (one the c10 dispatcher does not have) without an op table row
// keeps its qualified name ("aten::eq.float_list", "aten::__derive_index.default") and is written
// `torch.ops.aten.eq.float_list(a, b)`: Python's torch.ops reaches the same registered operator
// that TorchScript ran and the interpreter runs (Note [TorchScript builtins through LibTorch's
// registry], lib/exec/dispatch.h), so the result is exact. torch.ops converts Python values to
// the schema's types only when those are concrete, so this holds for schemas without type
// variables (List[t], Dict(t, tVal): those need a row) whose arguments are numbers, strings,
// tensors, devices or lists and Optionals of them, that run without a jit::Node, write nothing,
// and that the JIT does not treat as having side effects (prints, seeds, RPC).
bool Lifter::exact_through_torch_ops(const jit::Node* n, const c10::FunctionSchema& s) {
  const JitBuiltin* b = find_jit_only_operator(qualified_overload(s));
  return b && b->torch_ops_exact && !n->hasSideEffects();
}

// Note [Comparing a value with itself]
// TorchScript's graph executor folds `a == a` to True and `a != a` to False when both operands
// are one SSA value of type bool, int, float or None, or a List or Dict of those
// (PeepholeOptimizeNonTensor in torch/csrc/jit/passes/peephole_non_tensor.cpp, run by every
// executor before the first call). For a float that is NaN this is not Python's answer
// (nan != nan is True), so the lifter folds exactly these comparisons the same way; for ints,
// bools, None and their containers the constant is what the comparison computes anyway. It does
// not fold what the JIT does not: str, Optional, Scalar (number), complex, tuples, devices,
// tensors, nor <, <=, >, >= (measured on LibTorch 2.6: `v < v` is computed), nor `a is a`
// (a NaN `is` not itself in TorchScript: Note [`is` on numbers] in emitters/python/calls.cpp).
// Before the fold the executor inlines calls and runs its CSE and list idioms, which can make two
// different values one: `a = v * 2.0; b = v * 2.0; a != b`, `[v, w][0] != v`, `f(v, v)` whose
// body compares its two parameters. Those are folded too (measured: False for a NaN v), and the
// lifter cannot tell them from the values the passes leave apart, so a comparison whose operands
// may hold a float and that TorchScript may fold is refused (exit 4) when the operands are not one
// SSA value in the archive but may be one after those passes (self_comparison_may_fold: the same
// lifted value, e.g. the two parameters of an inlined call; values built by the same op from
// operands that may be one; equal constants; an element read from a list). Ints and the other
// types are never refused, nor a comparison with a constant that is not NaN (`v == 0.0`): there
// folding cannot change the result. The check models the passes
// named here (inlining, CSE, constant pooling and propagation, list and dict idioms, the
// peephole's removal of casts); another way for the executor to make two values one would escape
// it (none is known).
// The lifter's preparation of a scripted graph (Lifter::prepared) runs ConstantPropagation after
// turning module attributes into constants, which would compare `self.eps != self.eps` by value
// before lift_op sees it: fold_jit_self_comparisons applies the same rule to the JIT graph first
// (folding one value's comparisons as the executor's peephole does before its own constant
// propagation), and when a comparison may fold only after CSE (jit_may_be_one, the same question
// on the JIT graph: two reads of one attribute, ...) the graph is lifted unprepared, where lift_op
// refuses it.
// tinytrace's own passes (CSE, constant folding, inlining) never fold by identity: operator.eq
// and operator.ne compute by value in the interpreter and in NAME.py, so when a pass later makes
// two operands one, the comparison still computes what it computed before (which was the
// archive's answer, since the lifter refused every comparison TorchScript could have folded).
namespace {

// The operand types whose self-comparison the JIT folds (immut_type in the JIT's pass).
bool jit_folds_self_comparison(const c10::TypePtr& t) {
  auto immutable = [](const c10::TypePtr& e) {
    auto k = e->kind();
    return k == c10::TypeKind::BoolType || k == c10::TypeKind::IntType ||
           k == c10::TypeKind::FloatType || k == c10::TypeKind::NoneType;
  };
  if (auto l = t->cast<c10::ListType>()) return immutable(l->getElementType());
  if (auto d = t->cast<c10::DictType>())
    return immutable(d->getKeyType()) && immutable(d->getValueType());
  return immutable(t);
}

bool holds_float(const c10::TypePtr& t) {
  if (t->kind() == c10::TypeKind::FloatType) return true;
  for (const c10::TypePtr& e : t->containedTypes())
    if (holds_float(e)) return true;
  return false;
}

bool constants_may_be_one(const AttrValue& a, const AttrValue& b) {
  const double* x = std::get_if<double>(&a);
  const double* y = std::get_if<double>(&b);
  if (x && y) return *x == *y || (std::isnan(*x) && std::isnan(*y));
  if (std::holds_alternative<at::Tensor>(a) || std::holds_alternative<at::Tensor>(b)) return true;
  return attr_equal(a, b);
}

// Whether a constant may be NaN or hold one: only then can folding `c == c` differ from computing
// it, so a comparison with any other constant is never refused.
bool may_hold_nan(const AttrValue& c) {
  if (const double* x = std::get_if<double>(&c)) return std::isnan(*x);
  if (const auto* l = std::get_if<std::vector<double>>(&c))
    return std::any_of(l->begin(), l->end(), [](double x) { return std::isnan(x); });
  return std::holds_alternative<at::Tensor>(c);
}

bool jit_may_hold_nan(const jit::Value* v) {
  auto c = jit::toIValue(v);
  if (!c) return true;
  if (c->isDouble()) return std::isnan(c->toDouble());
  if (c->isDoubleList()) {
    auto l = c->toDoubleVector();
    return std::any_of(l.begin(), l.end(), [](double x) { return std::isnan(x); });
  }
  return !(c->isInt() || c->isBool() || c->isNone() || c->isString() || c->isIntList() ||
           c->isBoolList());
}

// Whether TorchScript's inlining, CSE, constant pooling and list idioms may make the lifted values
// a and b one value (Note [Comparing a value with itself]). May answer true when they cannot
// (the caller then refuses), never false when they can.
bool self_comparison_may_fold(const Value* a, const Value* b, int depth = 0) {
  if (a == b || depth > 8) return true;
  const AttrValue* ca = a->constant();
  const AttrValue* cb = b->constant();
  if (ca && cb) return constants_may_be_one(*ca, *cb);
  const Node* na = a->node();
  const Node* nb = b->node();
  // an element of a list or dict literal: the list idioms replace [x, y][0] by x
  auto from_literal = [](const Node* n) {
    return n->is("operator.getitem") && (n->input(0)->node()->is("prim.ListConstruct") ||
                                         n->input(0)->node()->is("prim.DictConstruct"));
  };
  if (from_literal(na) || from_literal(nb)) return true;
  if (ca || cb) {
    // constant propagation may turn an op of constants into an equal constant
    const Node* other = ca ? nb : na;
    return std::all_of(other->inputs().begin(), other->inputs().end(),
                       [](const Value* v) { return v->constant() != nullptr; });
  }
  // different block inputs, results of control flow (CSE leaves nodes with blocks alone)
  if (na == nb || na->op() != nb->op() || !na->blocks().empty() || !nb->blocks().empty() ||
      na->num_inputs() != nb->num_inputs() || a->offset() != b->offset() || na->is("prim.Param"))
    return false;
  for (size_t i = 0; i < na->num_inputs(); ++i)
    if (!self_comparison_may_fold(na->input(i), nb->input(i), depth + 1)) return false;
  return true;
}

// The same question on the JIT graph (before the lifter's constant propagation), where values are
// jit::Values: also two reads of one attribute (prim::GetAttr of one name on one object), and
// through the casts the peephole removes.
const jit::Value* strip_casts(const jit::Value* v) {
  while (v->node()->kind() == c10::prim::unchecked_cast ||
         v->node()->kind() == c10::aten::_unwrap_optional ||
         v->node()->kind() == c10::prim::unchecked_unwrap_optional)
    v = v->node()->input(0);
  return v;
}

bool jit_constants_may_be_one(const jit::Node* a, const jit::Node* b) {
  auto x = jit::toIValue(a->output());
  auto y = jit::toIValue(b->output());
  if (!x || !y) return true;
  if (x->isDouble() && y->isDouble()) {
    double p = x->toDouble(), q = y->toDouble();
    return p == q || (std::isnan(p) && std::isnan(q));
  }
  if (x->isInt() && y->isInt()) return x->toInt() == y->toInt();
  if (x->isBool() && y->isBool()) return x->toBool() == y->toBool();
  if (x->isString() && y->isString()) return x->toStringRef() == y->toStringRef();
  if (x->isNone() && y->isNone()) return true;
  return x->tagKind() == y->tagKind();
}

bool jit_may_be_one(const jit::Value* a, const jit::Value* b, int depth = 0) {
  a = strip_casts(a);
  b = strip_casts(b);
  if (a == b || depth > 8) return true;
  const jit::Node* na = a->node();
  const jit::Node* nb = b->node();
  auto from_literal = [](const jit::Node* n) {
    return n->kind() == c10::aten::__getitem__ &&
           (n->input(0)->node()->kind() == c10::prim::ListConstruct ||
            n->input(0)->node()->kind() == c10::prim::DictConstruct);
  };
  if (from_literal(na) || from_literal(nb)) return true;
  bool ca = na->kind() == c10::prim::Constant, cb = nb->kind() == c10::prim::Constant;
  if (ca && cb) return jit_constants_may_be_one(na, nb);
  if (ca || cb) {
    const jit::Node* other = ca ? nb : na;
    return std::all_of(other->inputs().begin(), other->inputs().end(),
                       [](const jit::Value* v) { return jit::toIValue(v).has_value(); });
  }
  if (na == nb || na->kind() != nb->kind() || !na->blocks().empty() || !nb->blocks().empty() ||
      na->inputs().size() != nb->inputs().size() || a->offset() != b->offset() ||
      na->kind() == c10::prim::Param)
    return false;
  if (na->kind() == c10::prim::GetAttr && na->s(c10::attr::name) != nb->s(c10::attr::name))
    return false;
  for (size_t i = 0; i < na->inputs().size(); ++i)
    if (!jit_may_be_one(na->input(i), nb->input(i), depth + 1)) return false;
  return true;
}

bool is_foldable_comparison(const jit::Node* n) {
  return (n->kind() == c10::aten::eq || n->kind() == c10::aten::ne) && n->inputs().size() == 2 &&
         n->outputs().size() == 1 && jit_folds_self_comparison(n->input(0)->type());
}

bool may_fold_after_passes(const jit::Node* n) {
  return holds_float(n->input(0)->type()) && *n->input(0)->type() == *n->input(1)->type();
}

}  // namespace

// Note [Comparing a value with itself]. Folds the comparisons of one value with itself in b (and
// its nested blocks); false when a comparison may fold only after the executor's CSE (the graph is
// then lifted unprepared).
bool Lifter::fold_jit_self_comparisons(jit::Block* b) {
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sub : n->blocks())
      if (!fold_jit_self_comparisons(sub)) return false;
    if (!is_foldable_comparison(n)) continue;
    if (n->input(0) == n->input(1)) {
      jit::WithInsertPoint guard(n);
      n->output()->replaceAllUsesWith(n->owningGraph()->insertConstant(n->kind() == c10::aten::eq));
    } else if (may_fold_after_passes(n) && jit_may_hold_nan(strip_casts(n->input(0))) &&
               jit_may_hold_nan(strip_casts(n->input(1))) &&
               jit_may_be_one(n->input(0), n->input(1))) {
      return false;
    }
  }
  return true;
}

// Note [Comparing a value with itself]. True when n's result was bound to the constant.
bool Lifter::fold_self_comparison(const jit::Node* n, const std::vector<Value*>& ins, Frame& f) {
  if (!is_foldable_comparison(n)) return false;
  if (n->input(0) == n->input(1)) {
    f.env[n->output()] =
        Binding{add_constant(n->kind() == c10::aten::eq, Type::of(Type::Kind::Bool), f, n), {}};
    return true;
  }
  auto nan_or_unknown = [](const Value* v) {
    return !v->constant() || may_hold_nan(*v->constant());
  };
  if (may_fold_after_passes(n) && nan_or_unknown(ins.at(0)) && nan_or_unknown(ins.at(1)) &&
      self_comparison_may_fold(ins.at(0), ins.at(1)))
    unsupported(n,
                "a comparison of two float values that TorchScript's optimizer may make one "
                "value and then fold (a NaN would compare equal to itself)",
                f, "test for NaN with math.isnan(v) (or v != v on one value) in the model");
  return false;
}

// Whether every use of the string `v` only builds an exception message, a warning or a printed
// line (Note [Text of numbers]).
bool Lifter::only_in_messages(const jit::Value* v) {
  for (const jit::Use& u : v->uses()) {
    const auto k = u.user->kind();
    if (k == c10::prim::RaiseException || k == c10::aten::warn || k == c10::prim::Print) continue;
    static const std::set<std::string> text_ops = {"aten::add", "aten::format", "aten::str",
                                                   "aten::join", "aten::percentFormat"};
    bool builds_text = text_ops.count(k.toQualString()) && u.user->outputs().size() == 1 &&
                       u.user->output()->type()->kind() == c10::TypeKind::StringType;
    if (!builds_text || !only_in_messages(u.user->output())) return false;
  }
  return true;
}

// Note [Text of numbers]
// TorchScript writes a float as C++ does with 17 significant digits and a trailing '.' for
// whole numbers (str(0.1) is "0.10000000000000001", str(1.0) is "1."), Python as the shortest
// text that reads back ("0.1", "1.0"); tensors print differently too. Ints, bools, strings and
// None read the same in both. So str(x) and "...".format(x) of anything else are converted only
// where the text can reach no result: an exception message, a warning, a printed line.
void Lifter::require_exact_text(const jit::Node* n, Frame& f) {
  std::function<bool(const c10::TypePtr&)> same_text = [&](const c10::TypePtr& t) {
    using K = c10::TypeKind;
    switch (t->kind()) {
      case K::IntType:
      case K::BoolType:
      case K::StringType:
      case K::NoneType:
        return true;
      case K::OptionalType:
        return same_text(t->castRaw<c10::OptionalType>()->getElementType());
      case K::ListType:
        return same_text(t->castRaw<c10::ListType>()->getElementType());
      default:
        return false;
    }
  };
  size_t first = n->kind() == c10::aten::format ? 1 : 0;
  for (size_t i = first; i < n->inputs().size(); ++i) {
    if (same_text(n->input(i)->type()) || only_in_messages(n->output())) continue;
    unsupported(n,
                "the text of a " + n->input(i)->type()->repr_str() +
                    " differs between TorchScript and Python, and this text is used beyond a "
                    "message",
                f, "format it from ints or strings in the model");
  }
}

// x.dtype == y.dtype, or x.dtype != torch.bool (the constant is an int in TorchScript).
bool Lifter::is_dtype_comparison(const std::vector<Value*>& ins) {
  bool any = false;
  for (Value* v : ins) {
    Type::Kind k = v->type().kind;
    if (k == Type::Kind::ScalarType)
      any = true;
    else if (!(k == Type::Kind::Int && v->constant()))
      return false;
  }
  return any;
}

// A Python scalar builtin whose inputs are all non-tensor constants, evaluated now (e.g.
// `self.downsample is not None` once the attribute became a constant).
Value* Lifter::fold_scalar(const std::string& op, const std::vector<Value*>& ins,
                           const jit::Node* n, Frame& f) {
  static const std::set<std::string> builtins = {"len", "int", "float", "bool",
                                                 "abs", "max", "min"};
  if (n->outputs().size() != 1 ||
      (op.rfind("operator.", 0) != 0 && op.rfind("math.", 0) != 0 && !builtins.count(op)))
    return nullptr;
  std::vector<IValue> args;
  for (Value* v : ins) {
    const AttrValue* c = v->constant();
    if (!c || std::holds_alternative<at::Tensor>(*c)) return nullptr;
    args.push_back(attr_to_ivalue(*c, v->type()));
  }
  std::optional<std::vector<IValue>> r;
  try {
    r = call_aten(op, args);
  } catch (const std::exception&) {
    return nullptr;  // e.g. a division by zero: left for run time, where it belongs
  }
  if (!r || r->size() != 1) return nullptr;
  const IValue& v = (*r)[0];
  if (!v.isBool() && !v.isInt() && !v.isDouble() && !v.isNone()) return nullptr;
  return constant_value(v, n->output()->type(), f, n);
}

// Note [ATen normalisations]. Returns true (and sets op, rewrites ins) when it applies.
bool Lifter::normalize(const std::string& qual, std::vector<Value*>& ins, const jit::Node* n,
                       Frame& f, std::string& op) {
  auto const_int = [](Value* v) -> std::optional<int64_t> {
    const AttrValue* c = v->constant();
    if (c && std::holds_alternative<int64_t>(*c)) return std::get<int64_t>(*c);
    return std::nullopt;
  };
  auto const_bool = [](Value* v) -> std::optional<bool> {
    const AttrValue* c = v->constant();
    if (c && std::holds_alternative<bool>(*c)) return std::get<bool>(*c);
    return std::nullopt;
  };
  auto is_none = [](Value* v) { return v->is_none_constant(); };
  auto is_cpu = [](Value* v) {
    const AttrValue* c = v->constant();
    return c && std::holds_alternative<DeviceAttr>(*c) && std::get<DeviceAttr>(*c).name == "cpu";
  };
  // Length of a list value (prim.ListConstruct or a constant list), 0 when unknown.
  auto list_len = [](Value* v) -> size_t {
    if (v->node()->is("prim.ListConstruct")) return v->node()->num_inputs();
    const AttrValue* c = v->constant();
    if (c && std::holds_alternative<std::vector<int64_t>>(*c))
      return std::get<std::vector<int64_t>>(*c).size();
    return 0;
  };
  auto all_zero = [&](Value* v) {
    if (v->node()->is("prim.ListConstruct")) {
      for (Value* e : v->node()->inputs())
        if (const_int(e) != std::optional<int64_t>(0)) return false;
      return true;
    }
    const AttrValue* c = v->constant();
    if (c && std::holds_alternative<std::vector<int64_t>>(*c)) {
      const auto& l = std::get<std::vector<int64_t>>(*c);
      return std::all_of(l.begin(), l.end(), [](int64_t x) { return x == 0; });
    }
    return false;
  };
  auto pick = [&](std::initializer_list<size_t> idx) {
    std::vector<Value*> out;
    for (size_t i : idx) out.push_back(ins.at(i));
    ins = std::move(out);
  };

  if (qual == "aten::_convolution" || qual == "aten::_convolution.deprecated") {
    size_t dims = list_len(ins.at(3));
    auto transposed = const_bool(ins.at(6));
    if (dims < 1 || dims > 3 || !transposed) return false;
    std::string nd = std::to_string(dims) + "d";
    if (*transposed) {
      op = "F.conv_transpose" + nd;
      pick({0, 1, 2, 3, 4, 7, 8,
            5});  // (input, weight, bias, stride, padding, output_padding, groups, dilation)
    } else {
      if (!all_zero(ins.at(7))) return false;
      op = "F.conv" + nd;
      pick({0, 1, 2, 3, 4, 5, 8});  // (input, weight, bias, stride, padding, dilation, groups)
    }
    return true;
  }
  if (qual == "aten::_convolution_mode") {
    size_t dims = list_len(ins.at(3));
    if (dims < 1 || dims > 3) return false;
    op = "F.conv" + std::to_string(dims) + "d";  // same layout as conv{N}d.padding
    return true;
  }
  if (qual == "aten::constant_pad_nd") {
    Value* mode = add_constant(std::string("constant"), Type::of(Type::Kind::Str), f, n);
    ins = {ins.at(0), ins.at(1), mode, ins.at(2)};
    op = "F.pad";
    return true;
  }
  for (const char* family : {"reflection", "replication"}) {
    for (int d = 1; d <= 3; ++d) {
      if (qual != std::string("aten::") + family + "_pad" + std::to_string(d) + "d") continue;
      Value* mode = add_constant(std::string(family[2] == 'f' ? "reflect" : "replicate"),
                                 Type::of(Type::Kind::Str), f, n);
      Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
      ins = {ins.at(0), ins.at(1), mode, none};
      op = "F.pad";
      return true;
    }
  }
  {
    // (mode, has align_corners); the _aa kernels are F.interpolate(..., antialias=True).
    static const std::map<std::string, std::pair<const char*, bool>> upsample = {
        {"aten::upsample_nearest1d.vec", {"nearest", false}},
        {"aten::upsample_nearest2d.vec", {"nearest", false}},
        {"aten::upsample_nearest3d.vec", {"nearest", false}},
        {"aten::_upsample_nearest_exact1d.vec", {"nearest-exact", false}},
        {"aten::_upsample_nearest_exact2d.vec", {"nearest-exact", false}},
        {"aten::_upsample_nearest_exact3d.vec", {"nearest-exact", false}},
        {"aten::upsample_linear1d.vec", {"linear", true}},
        {"aten::upsample_bilinear2d.vec", {"bilinear", true}},
        {"aten::upsample_bicubic2d.vec", {"bicubic", true}},
        {"aten::upsample_trilinear3d.vec", {"trilinear", true}},
        {"aten::_upsample_bilinear2d_aa.vec", {"bilinear", true}},
        {"aten::_upsample_bicubic2d_aa.vec", {"bicubic", true}},
    };
    auto antialias = [&](const std::string& q) {
      if (q.find("_aa.vec") != std::string::npos)
        ins.push_back(add_constant(true, Type::of(Type::Kind::Bool), f, n));
    };
    auto it = upsample.find(qual);
    if (it != upsample.end()) {
      Value* mode = add_constant(std::string(it->second.first), Type::of(Type::Kind::Str), f, n);
      if (it->second.second) {
        ins = {ins.at(0), ins.at(1), ins.at(3), mode, ins.at(2)};  // (x, size, scales, mode, align)
      } else {
        Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
        ins = {ins.at(0), ins.at(1), ins.at(2), mode, none};
      }
      antialias(qual);
      op = "F.interpolate";
      return true;
    }
    // The default overloads (torch 2.x traces of size=...): (x, output_size, [align,] scales...)
    // are F.interpolate(x, size) when every scale is None; with scales they stay ATen calls.
    auto base = upsample.find(qual + ".vec");
    if (base != upsample.end()) {
      bool has_align = base->second.second;
      for (size_t i = has_align ? 3 : 2; i < ins.size(); ++i)
        if (!is_none(ins.at(i))) return false;
      Value* mode = add_constant(std::string(base->second.first), Type::of(Type::Kind::Str), f, n);
      Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
      Value* align =
          has_align ? ins.at(2) : add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
      ins = {ins.at(0), ins.at(1), none, mode, align};
      antialias(qual + ".vec");
      op = "F.interpolate";
      return true;
    }
  }
  {
    // The windows' shorter overloads are the full one at torch's defaults (ATen's own
    // delegation): hann_window(N) == hann_window(N, periodic=True), hamming_window(N, p) ==
    // hamming_window(N, p, 0.54, 0.46), kaiser_window(N) == kaiser_window(N, True, 12.0).
    struct Window {
      const char* op;
      std::vector<AttrValue> defaults;  // after window_length, in schema order
    };
    static const std::map<std::string, Window> windows = {
        {"hann", {"torch.hann_window", {true}}},
        {"blackman", {"torch.blackman_window", {true}}},
        {"bartlett", {"torch.bartlett_window", {true}}},
        {"hamming", {"torch.hamming_window", {true, 0.54, 0.46}}},
        {"kaiser", {"torch.kaiser_window", {true, 12.0}}},
    };
    static const std::map<std::string, size_t> given = {
        {"", 0}, {"periodic", 1}, {"periodic_alpha", 2}};  // parameters the overload has
    size_t us = qual.find("_window");
    if (qual.rfind("aten::", 0) == 0 && us != std::string::npos) {
      auto w = windows.find(qual.substr(6, us - 6));
      std::string overload = qual.substr(us + 7);
      if (!overload.empty() && overload[0] == '.') overload.erase(0, 1);
      auto k = given.find(overload);
      if (w != windows.end() && k != given.end() && k->second < w->second.defaults.size()) {
        for (size_t i = k->second; i < w->second.defaults.size(); ++i) {
          const AttrValue& v = w->second.defaults[i];
          Type t = Type::of(std::holds_alternative<bool>(v) ? Type::Kind::Bool : Type::Kind::Float);
          ins.insert(ins.begin() + 1 + i, add_constant(v, t, f, n));
        }
        op = w->second.op;
        return true;
      }
    }
  }
  for (std::string base : {"aten::std", "aten::var", "aten::std_mean", "aten::var_mean"}) {
    // X(self, unbiased) and X.dim(self, dim, unbiased, keepdim) are X.correction(self, dim,
    // correction, keepdim) with correction None (= 1) for unbiased and 0 for biased, as ATen
    // itself maps them.
    if (qual != base && qual != base + ".dim") continue;
    bool dimmed = qual != base;
    auto unbiased = const_bool(ins.at(dimmed ? 2 : 1));
    if (!unbiased || (dimmed && ins.size() != 4)) return false;
    Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
    Value* correction =
        *unbiased ? none : add_constant(int64_t{0}, Type::of(Type::Kind::Int), f, n);
    Value* dim = dimmed ? ins.at(1) : none;
    Value* keepdim = dimmed ? ins.at(3) : add_constant(false, Type::of(Type::Kind::Bool), f, n);
    ins = {ins.at(0), dim, correction, keepdim};
    op = "torch." + base.substr(6);
    return true;
  }
  if (qual == "aten::stft") {
    // torch.stft pads for `center` itself, then calls stft(self, n_fft, hop_length, win_length,
    // window, normalized, onesided, return_complex): stft.center with center=False.
    ins.insert(ins.begin() + 5, add_constant(false, Type::of(Type::Kind::Bool), f, n));
    ins.insert(ins.begin() + 6,
               add_constant(std::string("reflect"), Type::of(Type::Kind::Str), f, n));
    op = "torch.stft";
    return true;
  }
  if (qual == "aten::arange" || qual == "aten::arange.start") {
    // arange(end, ...) == arange(0, end, 1, ...); arange(start, end, ...) == arange(start, end, 1, ...)
    Value* one = add_constant(int64_t{1}, Type::of(Type::Kind::Int), f, n);
    if (qual == "aten::arange") {
      Value* zero = add_constant(int64_t{0}, Type::of(Type::Kind::Int), f, n);
      ins.insert(ins.begin(), zero);
    }
    ins.insert(ins.begin() + 2, one);
    op = "torch.arange";
    return true;
  }
  if (qual == "aten::to.device" && is_cpu(ins.at(1))) {
    // (self, device, dtype, non_blocking, copy, memory_format): every tensor is on the CPU.
    pick({0, 2, 3, 4, 5});
    op = "Tensor.to";
    return true;
  }
  if (qual == "aten::to.device" || qual == "aten::to.prim_Device") {
    // A device known at run time, x.to(y.device[, dtype]): to.prim_Device(self, device, dtype,
    // non_blocking, copy) is to.device without memory_format (None: the input's format).
    // Its dtype is an int in the schema and a torch dtype in Python: a constant, None or a
    // value the IR knows as a dtype (y.dtype); a computed int keeps the ATen call.
    const AttrValue* dtype = ins.at(2)->constant();
    bool dtype_known = ins.at(2)->type().kind == Type::Kind::ScalarType ||
                       (dtype && (std::holds_alternative<NoneAttr>(*dtype) ||
                                  std::holds_alternative<int64_t>(*dtype)));
    if (qual == "aten::to.device") {
      if (!dtype_known || !is_none(ins.at(5))) return false;
      pick({0, 1, 2, 3, 4});
    } else if (!dtype_known) {
      op = qual;  // stays an ATen call (find_op_by_aten would pick the row)
      return true;
    }
    ins.at(2) = typed_int(ins.at(2), IntRole::ScalarType, f, n);
    op = "Tensor.to_device";
    return true;
  }
  if (qual == "aten::to.dtype_layout") {
    // (self, dtype, layout, device, pin_memory, non_blocking, copy, memory_format)
    bool layout_ok = is_none(ins.at(2)) || const_int(ins.at(2)) == std::optional<int64_t>(0);
    bool device_ok = is_none(ins.at(3)) || is_cpu(ins.at(3));
    bool pin_ok = is_none(ins.at(4)) || const_bool(ins.at(4)) == std::optional<bool>(false);
    if (is_none(ins.at(1)) || !layout_ok || !device_ok || !pin_ok) return false;
    pick({0, 1, 5, 6, 7});
    op = "Tensor.to";
    return true;
  }
  return false;
}

}  // namespace tt::ts
