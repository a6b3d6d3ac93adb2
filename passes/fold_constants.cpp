// fold-constants: evaluate nodes whose inputs are all known at conversion time.
//
// Before:
//   %x : f32[2,3,4] = ...
//   %0 : int = prim.Constant[value=0]()
//   %n : int = Tensor.size(%x, %0)
//   %t : i64[] = prim.NumToTensor(%n)
//   %two : int = prim.Constant[value=2]()
//   %m : i64[] = torch.mul(%t, %two)
//   %i : int = int(%m)
//   %l : List[int] = prim.ListConstruct(%i, %minus1)
//   %y : Tensor = Tensor.view(%x, %l)
// After:
//   %l : List[int] = prim.Constant[value=[4,-1]]()
//   %y : Tensor = Tensor.view(%x, %l)
//   (the old constants are left for dce)
//
// What folds:
// - prim.ListConstruct of int / float / bool / str constants -> one List constant (lists of
//   tensors and tuples stay: a constant cannot hold them);
// - prim.ListUnpack of a constant list -> one constant per element; prim.TupleUnpack /
//   prim.TupleIndex of a prim.TupleConstruct -> its inputs (no constants needed);
// - int / float / bool arithmetic and comparisons on constants (aten::add.int, floordiv, ...,
//   with Python semantics; see exec/dispatch.h);
// - Tensor.size(x[, dim]) / Tensor.dim(x) / Tensor.numel(x) when x's type knows enough (the dim
//   asked for, the rank, or the complete shape);
// - int(prim.NumToTensor(%i)) -> %i (and float(...) of a float), whatever %i is;
// - prim.NumToTensor of a constant number -> a 0-dim tensor constant;
// - any other function/method/aten op whose inputs are all constants, evaluated with ATen through
//   the c10 dispatcher, when every tensor in and out has at most max-numel elements (option,
//   default 4096) — except random ops, torch.empty*, ops with side effects and module ops.
// A node whose evaluation fails (ATen error, no matching overload) is left as it is.
//
// Control flow (nodes inside blocks fold like any other):
// - prim.If on a constant condition -> the taken branch's nodes move into the parent block in
//   place of the If, whose outputs become the branch's returned values (rule "constant-branch");
//   the taken branch is folded first, the other one is dropped;
// - prim.Loop with a constant trip count <= 0 or a constant false initial condition never runs
//   its body -> its outputs are the initial values (rule "constant-loop").
//     %y : Tensor = prim.If(%true) { block0() { %r = F.relu(%x) return %r } block1() { ... } }
//   becomes
//     %r : Tensor = F.relu(%x)        (uses of %y now use %r)
//
// A single-output node is turned into a prim.Constant in place (its result keeps its name);
// multi-output nodes get one new constant per output.
//
// Linear: one walk in program order; a node that becomes constant makes its users foldable when
// the walk reaches them.
#include "passes/pass.h"
#include "passes/pass_util.h"

#include "exec/alias.h"
#include "exec/dispatch.h"
#include "exec/interpreter.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <unordered_set>

namespace tt {
namespace {

constexpr int64_t kDefaultMaxNumel = 4096;

// A folded result as a constant attribute and its type; nullopt when a constant cannot hold it.
std::optional<std::pair<AttrValue, Type>> to_constant(const c10::IValue& v, const Type& declared,
                                                      int64_t max_numel) {
  using K = Type::Kind;
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined() || t.numel() > max_numel || t.is_quantized() || t.is_complex() ||
        !t.is_cpu() || t.layout() != at::kStrided)
      return std::nullopt;
    DType d = dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type()));
    if (d == DType::Unknown) return std::nullopt;
    at::Tensor owned = t.detach().clone().contiguous();
    return std::make_pair(AttrValue(owned), Type::tensor(d, t.sizes().vec()));
  }
  if (v.isInt()) {
    // Keep a ScalarType / Layout / MemoryFormat reading of the int when the graph said so.
    bool keep = declared.kind == K::ScalarType || declared.kind == K::Layout ||
                declared.kind == K::MemoryFormat || declared.kind == K::Int;
    return std::make_pair(AttrValue(v.toInt()), keep ? declared : Type::of(K::Int));
  }
  if (v.isDouble()) return std::make_pair(AttrValue(v.toDouble()), Type::of(K::Float));
  if (v.isComplexDouble()) {  // Note [Complex scalars]
    c10::complex<double> z = v.toComplexDouble();
    return std::make_pair(AttrValue(std::complex<double>(z.real(), z.imag())),
                          Type::of(K::Complex));
  }
  if (v.isBool()) return std::make_pair(AttrValue(v.toBool()), Type::of(K::Bool));
  if (v.isNone()) return std::make_pair(AttrValue(NoneAttr{}), Type::of(K::None));
  if (v.isString()) return std::make_pair(AttrValue(v.toStringRef()), Type::of(K::Str));
  if (v.isDevice())
    return std::make_pair(AttrValue(DeviceAttr{v.toDevice().str()}), Type::of(K::Device));
  if (v.isIntList())
    return std::make_pair(AttrValue(v.toIntVector()), Type::list(Type::of(K::Int)));
  if (v.isDoubleList())
    return std::make_pair(AttrValue(v.toDoubleVector()), Type::list(Type::of(K::Float)));
  if (v.isBoolList()) {
    std::vector<int64_t> l;
    for (bool b : v.toBoolList()) l.push_back(b);
    return std::make_pair(AttrValue(l), Type::list(Type::of(K::Bool)));
  }
  return std::nullopt;
}

class Folder {
 public:
  Folder(Graph& g, PassContext& ctx) : g_(g), ctx_(ctx), rw_(ctx), mutated_(mutated_memory(g)) {
    max_numel_ = ctx.option_int("max-numel", kDefaultMaxNumel);
  }
  bool changed() const { return changed_; }

  // Returns false when `n` was destroyed.
  bool visit(Node* n) {
    if (n->is("prim.If")) return fold_if(n);
    if (n->is("prim.Loop")) return fold_loop(n);
    if (!n->blocks().empty() || n->num_outputs() == 0 || n->is("prim.Constant") ||
        n->is("prim.GetAttr") || n->is("prim.Param"))
      return true;
    if (forward_structural(n)) return false;
    if (fold_shape_query(n)) return true;
    return fold_all_constant(n);
  }

 private:
  // ------------------------------------------------------------------------------------------
  // rewrites

  void make_constant(Node* n, AttrValue v, Type t) {
    n->set_op("prim.Constant");
    n->remove_all_inputs();
    n->attrs() = Attrs();
    n->attrs().set("value", std::move(v));
    while (!n->weights().empty()) n->erase_weight(n->weights().front().first);
    n->set_module("");
    n->output()->set_type(std::move(t));
    changed_ = true;
  }

  void forward(Node* n, const std::vector<Value*>& srcs, const char* rule) {
    ctx_.rewrite(rule, n);
    for (size_t i = 0; i < srcs.size(); ++i) n->output(i)->replace_all_uses_with(srcs[i]);
    n->destroy();
    changed_ = true;
  }

  // prim.If on a constant condition: the taken branch replaces it. Returns false when `n` was
  // destroyed (its nodes were folded before they moved, so the walk need not see them again).
  bool fold_if(Node* n) {
    auto c = n->num_inputs() == 1 ? const_bool(n->input(0)) : std::nullopt;
    if (!c) return true;  // folds inside both branches
    if (n->blocks().size() != 2) return rw_.reject("constant-branch", n, "not two blocks"), true;
    Block* taken = n->block(*c ? 0 : 1);
    if (taken->outputs().size() != n->num_outputs() || !taken->inputs().empty())
      return rw_.reject("constant-branch", n, "the branch does not return one value per output"),
             true;
    walk_pre(taken, [&](Node* m) { return visit(m); });
    ctx_.rewrite("constant-branch", n);
    for (Node* m = taken->front(); m;) {
      Node* nx = m->next();
      m->move_before(n);
      m = nx;
    }
    for (size_t i = 0; i < n->num_outputs(); ++i)
      n->output(i)->replace_all_uses_with(taken->outputs()[i]);
    n->destroy();
    changed_ = true;
    return false;
  }

  // prim.Loop that never runs its body: its outputs are the initial carried values.
  bool fold_loop(Node* n) {
    if (n->num_inputs() < 2 || n->num_outputs() != n->num_inputs() - 2) return true;
    auto trips = const_int(n->input(0));
    auto cond = const_bool(n->input(1));
    if (!(trips && *trips <= 0) && !(cond && !*cond)) return true;
    ctx_.rewrite("constant-loop", n);
    for (size_t i = 0; i < n->num_outputs(); ++i)
      n->output(i)->replace_all_uses_with(n->input(i + 2));
    n->destroy();
    changed_ = true;
    return false;
  }

  // Results that are some other value of the graph: no constants needed.
  bool forward_structural(Node* n) {
    if ((calls_aten(n, "aten::Int") || calls_aten(n, "aten::Float")) && n->num_inputs() == 1) {
      Node* p = producer_is(n->input(0), "prim.NumToTensor");
      if (!p || p->num_inputs() != 1) return false;
      Type::Kind want = calls_aten(n, "aten::Int") ? Type::Kind::Int : Type::Kind::Float;
      if (p->input(0)->type().kind != want) {
        rw_.reject("num-to-tensor-pair", n, "the number's type differs from the conversion");
        return false;
      }
      forward(n, {p->input(0)}, "num-to-tensor-pair");
      return true;
    }
    if (n->is("prim.TupleUnpack") && n->num_inputs() == 1) {
      Node* t = producer_is(n->input(0), "prim.TupleConstruct");
      if (!t || t->num_inputs() != n->num_outputs()) return false;
      forward(n, t->inputs(), "tuple-unpack");
      return true;
    }
    if (n->is("prim.TupleIndex") && n->num_inputs() == 2) {
      Node* t = producer_is(n->input(0), "prim.TupleConstruct");
      auto i = const_int(n->input(1));
      if (!t || !i) return false;
      int64_t k = *i < 0 ? *i + static_cast<int64_t>(t->num_inputs()) : *i;
      if (k < 0 || k >= static_cast<int64_t>(t->num_inputs())) return false;
      forward(n, {t->input(static_cast<size_t>(k))}, "tuple-index");
      return true;
    }
    return false;
  }

  // size / dim / numel answered from the static type.
  bool fold_shape_query(Node* n) {
    if (n->num_inputs() == 0 || n->num_outputs() != 1 || !n->input(0)->type().is_tensor())
      return false;
    const auto& shape = shape_of(n->input(0));
    if (calls_aten(n, "aten::size")) {
      if (!shape) return rw_.reject("size", n, "rank unknown"), false;
      if (n->num_inputs() == 1) {
        if (!has_complete_shape(n->input(0)))
          return rw_.reject("size", n, "shape not fully known"), false;
        ctx_.rewrite("size", n);
        make_constant(n, *shape, Type::list(Type::of(Type::Kind::Int)));
        return true;
      }
      auto dim = const_int(n->input(1));
      if (!dim || n->num_inputs() != 2)
        return rw_.reject("size", n, "dim is not a constant"), false;
      int64_t rank = static_cast<int64_t>(shape->size());
      int64_t d = *dim < 0 ? *dim + rank : *dim;
      if (d < 0 || d >= rank) return rw_.reject("size", n, "dim out of range"), false;
      int64_t v = (*shape)[static_cast<size_t>(d)];
      if (v < 0) return rw_.reject("size", n, "that dim is not known"), false;
      ctx_.rewrite("size", n);
      make_constant(n, v, Type::of(Type::Kind::Int));
      return true;
    }
    if (calls_aten(n, "aten::dim") && n->num_inputs() == 1) {
      if (!shape) return rw_.reject("dim", n, "rank unknown"), false;
      ctx_.rewrite("dim", n);
      make_constant(n, static_cast<int64_t>(shape->size()), Type::of(Type::Kind::Int));
      return true;
    }
    if (calls_aten(n, "aten::numel") && n->num_inputs() == 1) {
      if (!has_complete_shape(n->input(0)))
        return rw_.reject("numel", n, "shape not fully known"), false;
      int64_t p = 1;
      for (int64_t d : *shape) p *= d;
      ctx_.rewrite("numel", n);
      make_constant(n, p, Type::of(Type::Kind::Int));
      return true;
    }
    return false;
  }

  bool fold_all_constant(Node* n) {
    for (const Value* v : n->inputs())
      if (!v->constant()) return true;  // the common case: not foldable, not worth a log line
    // A value whose memory is written in place holds different data before and after the write
    // (Note [In-place writes]): evaluated now, it would be the data before.
    for (const Value* v : n->inputs())
      if (mutated_.contains(v)) return true;
    for (const Value* v : n->outputs())
      if (mutated_.contains(v)) return true;
    if (is_module_op(n)) return true;
    if (has_side_effects(n)) return true;
    if (is_nondeterministic(n)) {
      rw_.reject("constant-op", n, "random or uninitialised result");
      return true;
    }
    if (n->is("prim.ListConstruct")) {
      fold_list(n);
      return true;
    }
    if (n->is("prim.ListUnpack")) return fold_list_unpack(n);
    if (n->is("prim.NumToTensor")) {
      fold_num_to_tensor(n);
      return true;
    }
    if (n->op().rfind("prim.", 0) == 0) return true;
    return evaluate(n);
  }

  void fold_list(Node* n) {
    using K = Type::Kind;
    const Type& t = n->output()->type();
    K elem = t.kind == K::List && !t.elems.empty() ? t.elems[0].kind : K::Any;
    if (elem == K::Any && n->num_inputs() > 0) {
      const AttrValue& f = *n->input(0)->constant();
      elem = std::holds_alternative<int64_t>(f)       ? K::Int
             : std::holds_alternative<double>(f)      ? K::Float
             : std::holds_alternative<bool>(f)        ? K::Bool
             : std::holds_alternative<std::string>(f) ? K::Str
                                                      : K::Any;
    }
    if (elem == K::Int || elem == K::Bool) {
      std::vector<int64_t> l;
      for (const Value* v : n->inputs()) {
        const AttrValue& a = *v->constant();
        if (const auto* i = std::get_if<int64_t>(&a))
          l.push_back(*i);
        else if (const auto* b = std::get_if<bool>(&a))
          l.push_back(*b);
        else
          return (void)rw_.reject("list", n, "element is not an int");
      }
      ctx_.rewrite("list", n);
      make_constant(n, l, Type::list(Type::of(elem)));
    } else if (elem == K::Float) {
      std::vector<double> l;
      for (const Value* v : n->inputs()) {
        auto d = const_float(v);
        if (!d) return (void)rw_.reject("list", n, "element is not a number");
        l.push_back(*d);
      }
      ctx_.rewrite("list", n);
      make_constant(n, l, Type::list(Type::of(K::Float)));
    } else if (elem == K::Str) {
      std::vector<std::string> l;
      for (const Value* v : n->inputs()) {
        const auto* s = std::get_if<std::string>(v->constant());
        if (!s) return (void)rw_.reject("list", n, "element is not a string");
        l.push_back(*s);
      }
      ctx_.rewrite("list", n);
      make_constant(n, l, Type::list(Type::of(K::Str)));
    } else {
      rw_.reject("list", n,
                 "a constant cannot hold this list (tensors, tuples, unknown element type)");
    }
  }

  bool fold_list_unpack(Node* n) {
    if (n->num_inputs() != 1) return true;
    const AttrValue& a = *n->input(0)->constant();
    std::vector<AttrValue> items;
    Type::Kind kind = Type::Kind::Int;
    if (const auto* l = std::get_if<std::vector<int64_t>>(&a)) {
      const Type& lt = n->input(0)->type();
      bool bools =
          lt.kind == Type::Kind::List && !lt.elems.empty() && lt.elems[0].kind == Type::Kind::Bool;
      kind = bools ? Type::Kind::Bool : Type::Kind::Int;
      for (int64_t x : *l) items.push_back(bools ? AttrValue(x != 0) : AttrValue(x));
    } else if (const auto* l = std::get_if<std::vector<double>>(&a)) {
      kind = Type::Kind::Float;
      for (double x : *l) items.push_back(x);
    } else if (const auto* l = std::get_if<std::vector<std::string>>(&a)) {
      kind = Type::Kind::Str;
      for (const auto& x : *l) items.push_back(x);
    } else {
      return true;
    }
    if (items.size() != n->num_outputs())
      return rw_.reject("list-unpack", n, "length differs"), true;
    std::vector<Value*> consts;
    for (auto& it : items) {
      Value* c = g_.constant(std::move(it), Type::of(kind), n);
      c->node()->copy_provenance(n);
      consts.push_back(c);
    }
    forward(n, consts, "list-unpack");
    return false;
  }

  void fold_num_to_tensor(Node* n) {
    if (n->num_inputs() != 1) return;
    const AttrValue& a = *n->input(0)->constant();
    at::Tensor t;
    if (const auto* i = std::get_if<int64_t>(&a))
      t = at::scalar_to_tensor(at::Scalar(*i));
    else if (const auto* d = std::get_if<double>(&a))
      t = at::scalar_to_tensor(at::Scalar(*d));
    else if (const auto* b = std::get_if<bool>(&a))
      t = at::scalar_to_tensor(at::Scalar(*b));
    else
      return (void)rw_.reject("num-to-tensor", n, "not a number");
    DType d = dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type()));
    ctx_.rewrite("num-to-tensor", n);
    make_constant(n, t, Type::tensor(d, {}));
  }

  // Everything else: run the op with ATen on the constant inputs.
  bool evaluate(Node* n) {
    bool any_tensor_in = false;
    std::vector<c10::IValue> in;
    in.reserve(n->num_inputs());
    for (const Value* v : n->inputs()) {
      const AttrValue& a = *v->constant();
      if (const auto* t = std::get_if<at::Tensor>(&a)) {
        if (t->defined() && t->numel() > max_numel_)
          return rw_.reject("constant-op", n, "input tensor too large"), true;
        any_tensor_in = true;
      }
      in.push_back(attr_to_ivalue(a, v->type()));
    }
    // Factories with constant sizes (torch.zeros([1,3,224,224])): fold only when the result is
    // known to be small, before allocating it.
    for (const Value* o : n->outputs()) {
      if (!o->type().is_tensor() || any_tensor_in) continue;
      if (!has_complete_shape(o)) return rw_.reject("constant-op", n, "result size unknown"), true;
      int64_t numel = 1;
      for (int64_t d : *shape_of(o)) numel *= d;
      if (numel > max_numel_) return rw_.reject("constant-op", n, "result too large"), true;
    }
    std::optional<std::vector<c10::IValue>> out;
    try {
      out = call_aten(n->op(), std::move(in));
    } catch (const std::exception& e) {
      if (spdlog_trace_enabled()) rw_.reject("constant-op", n, Reject(first_line(e.what())));
      return true;
    }
    if (!out) return rw_.reject("constant-op", n, "no ATen overload fits the inputs"), true;
    if (out->size() != n->num_outputs())
      return rw_.reject("constant-op", n, "unexpected number of results"), true;
    std::vector<std::pair<AttrValue, Type>> consts;
    for (size_t i = 0; i < out->size(); ++i) {
      auto c = to_constant((*out)[i], n->output(i)->type(), max_numel_);
      if (!c)
        return rw_.reject("constant-op", n,
                          "a constant cannot hold the result (or it is too large)"),
               true;
      consts.push_back(std::move(*c));
    }
    if (n->num_outputs() == 1) {
      ctx_.rewrite("constant-op", n);
      make_constant(n, std::move(consts[0].first), std::move(consts[0].second));
      return true;
    }
    std::vector<Value*> vals;
    for (auto& c : consts) {
      Value* v = g_.constant(std::move(c.first), std::move(c.second), n);
      v->node()->copy_provenance(n);
      vals.push_back(v);
    }
    forward(n, vals, "constant-op");
    return false;
  }

  static bool spdlog_trace_enabled() { return spdlog::should_log(spdlog::level::trace); }
  static std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

  Graph& g_;
  PassContext& ctx_;
  Rewriter rw_;  // rejections
  int64_t max_numel_ = kDefaultMaxNumel;
  MutatedMemory mutated_;  // memory written in place (exec/alias.h)
  bool changed_ = false;
};

}  // namespace

bool run_fold_constants(Graph& g, PassContext& ctx) {
  Folder f(g, ctx);
  walk_pre(g.block(), [&](Node* n) { return f.visit(n); });
  return f.changed();
}

}  // namespace tt
