// float-functional: rewrite elementwise tensor arithmetic into calls of
// torch.ao.nn.quantized.FloatFunctional modules, one instance per call site, so that eager-mode
// quantization can observe and later quantize them (DESIGN.md §5, --quant-prep).
//
// Before:
//   %s : Tensor = torch.add(%a, %b, %one) #scope=layer1.0
//   %r : Tensor = nn.ReLU[inplace=true](%s) #module=layer1.0.relu_1 #scope=layer1.0
//   %h : Tensor = torch.mul(%r, %half)                    // %half = 0.5 (a number or a 0-dim tensor constant)
//   %d : Tensor = torch.sub(%h, %c, %one)                 // %c a float tensor
// After:
//   %r : Tensor = FloatFunctional.add_relu(%a, %b) #module=layer1.0.ff_add_relu #scope=layer1.0
//   %h : Tensor = FloatFunctional.mul_scalar(%r, %0) #module=ff_mul_scalar   // %0 = 0.5 (float)
//   %1 : Tensor = FloatFunctional.mul_scalar(%c, %2) #module=ff_mul_scalar_1 // %2 = -1.0
//   %d : Tensor = FloatFunctional.add(%h, %1) #module=ff_add
//
// Rules (t, u float tensors; c a Python number or a 0-dim tensor constant; k a number value):
//   t + u (alpha 1)      -> add(t, u); add_relu(t, u) when the sum's only use is a ReLU (nn.ReLU
//                           module or F.relu) in the same block, which then goes away
//   t + c, c + t         -> add_scalar(t, float(c));  t + k -> add_scalar(t, k)
//   t * u                -> mul(t, u)
//   t * c, c * t         -> mul_scalar(t, float(c));  t * k -> mul_scalar(t, k)
//   t - u (alpha 1)      -> add(t, mul_scalar(u, -1.0))   (add_relu as above)
//   t - c (alpha 1)      -> add_scalar(t, -c)
//   c - t, u - t (rsub)  -> add_scalar(mul_scalar(t, -1.0), c), add(u, mul_scalar(t, -1.0))
//   t / c (c != 0, no rounding_mode) -> mul_scalar(t, 1/c)
//   -t                   -> mul_scalar(t, -1.0)
//   torch.cat(ts, d)     -> cat(ts, d)
//   torch.stack(ts, d)   -> cat([t.unsqueeze(d) for t in ts], d)   (ts built by prim.ListConstruct,
//                           d a constant)
// What stays: tensor-by-tensor div (float-fallback's job), alpha != 1, arithmetic on ints and
// sizes, non-float tensors (bool masks, int64 indices, sizes turned into tensors), a subtraction
// or division by a scalar that is not a constant.
//
// Which tensors are float: the value's dtype when its Type knows it; otherwise (traced and
// scripted graphs usually carry plain `Tensor`) it is propagated forward along the walk from
// what is known: weights and tensor constants by their dtype, module outputs are float,
// NumToTensor of an int, comparisons and integer aranges are not, Tensor.to(dtype) by the dtype,
// elementwise ops follow their tensor operands (true division is float). Values nothing is known
// about (graph inputs without --input-shape, loop-carried values) count as float: the rewrite
// computes the same thing in float either way (FloatFunctional before prepare is plain torch
// arithmetic).
//
// Each rewrite changes the node in place (same output value, name and position), so later uses
// are untouched; helper nodes (mul_scalar, unsqueeze, constants) are inserted right before it in
// the same block: nothing crosses a block boundary. Every FloatFunctional node gets a fresh
// module path "<scope>.ff_<method>" (passes/module_paths.h).
//
// Linear: one walk; the float-kind table is filled as the walk goes (O(1) per node).
#include "passes/module_paths.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace tt {
namespace {

enum class FK : int8_t { Unknown, Float, NotFloat };

bool is_float_dtype(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16;
}

// Float-ness of tensor values, propagated along the walk (see the banner).
class FloatKinds {
 public:
  explicit FloatKinds(const Graph& g) : g_(g) {}

  FK of(const Value* v) const {
    const Type& t = v->type();
    if (t.kind != Type::Kind::Tensor && t.kind != Type::Kind::Any) return FK::NotFloat;
    if (t.is_tensor() && t.dtype != DType::Unknown)
      return is_float_dtype(t.dtype) ? FK::Float : FK::NotFloat;
    auto it = kind_.find(v);
    return it == kind_.end() ? FK::Unknown : it->second;
  }
  void set(const Value* v, FK k) { kind_[v] = k; }

  // Records the kinds of n's outputs from its inputs (call before n is rewritten).
  void visit(const Node* n) {
    if (n->num_outputs() == 0) return;
    FK k = compute(n);
    for (const Value* o : n->outputs())
      if (k != FK::Unknown) kind_[o] = k;
  }

 private:
  FK compute(const Node* n) const {
    const std::string& op = n->op();
    if (op == "prim.Constant") {
      const AttrValue* a = n->output()->constant();
      if (const auto* t = a ? std::get_if<at::Tensor>(a) : nullptr)
        return t->defined() && t->is_floating_point() ? FK::Float : FK::NotFloat;
      return FK::NotFloat;
    }
    if (op == "prim.GetAttr") {
      const Weight* w = g_.weights().find(n->weight("value"));
      if (!w || !w->tensor.defined()) return FK::Unknown;
      return w->tensor.is_floating_point() ? FK::Float : FK::NotFloat;
    }
    if (op == "prim.NumToTensor") {
      Type::Kind k = n->input(0)->type().kind;
      return k == Type::Kind::Float ? FK::Float : k == Type::Kind::Any ? FK::Unknown : FK::NotFloat;
    }
    if (op.rfind("prim.", 0) == 0) return FK::Unknown;
    if (is_module_op(n)) return n->num_outputs() == 1 ? FK::Float : FK::Unknown;
    for (const char* cmp : {"aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge",
                            "aten::logical_not", "aten::logical_and", "aten::logical_or",
                            "aten::isnan", "aten::argmax", "aten::argmin"})
      if (calls_aten(n, cmp)) return FK::NotFloat;
    if (calls_aten(n, "aten::to") && n->num_inputs() > 1) {
      if (auto d = const_dtype(n->input(1))) return is_float_dtype(*d) ? FK::Float : FK::NotFloat;
      if (n->input(1)->type().kind == Type::Kind::Tensor) return of(n->input(1));
      return FK::Unknown;
    }
    if (calls_aten(n, "aten::type_as") && n->num_inputs() == 2) return of(n->input(1));
    // arange(start, end, step, dtype, ...): int64 unless a dtype or a float bound says float.
    if (calls_aten(n, "aten::arange")) {
      if (n->num_inputs() > 3)
        if (auto d = const_dtype(n->input(3))) return is_float_dtype(*d) ? FK::Float : FK::NotFloat;
      for (size_t i = 0; i < std::min<size_t>(3, n->num_inputs()); ++i)
        if (n->input(i)->type().kind == Type::Kind::Float) return FK::Float;
      return FK::NotFloat;
    }
    if (calls_aten(n, "aten::div"))
      return FK::Float;  // true division; floor/trunc modes too
                         // keep float inputs float
    // Elementwise and shape ops follow their tensor operands (type promotion: any float operand
    // makes the result float; a float number does too for arithmetic).
    bool any_unknown = false, any_tensor = false, float_number = false;
    for (const Value* v : n->inputs()) {
      Type::Kind k = v->type().kind;
      if (k == Type::Kind::Float) float_number = true;
      if (k != Type::Kind::Tensor && k != Type::Kind::Any) continue;
      any_tensor = true;
      FK f = of(v);
      if (f == FK::Float) return FK::Float;
      if (f == FK::Unknown) any_unknown = true;
    }
    if (!any_tensor || any_unknown) return FK::Unknown;
    bool arith = calls_aten(n, "aten::add") || calls_aten(n, "aten::sub") ||
                 calls_aten(n, "aten::mul") || calls_aten(n, "aten::rsub");
    return arith && float_number ? FK::Float : FK::NotFloat;
  }

  const Graph& g_;
  std::unordered_map<const Value*, FK> kind_;
};

// A scalar operand: a number constant, a 0-dim tensor constant (traced Python numbers), or a
// non-constant int/float value (value unknown).
struct Scalar {
  std::optional<double> value;
  Value* v = nullptr;  // the operand itself
};

std::optional<Scalar> scalar_of(Value* v) {
  if (auto c = const_float(v)) return Scalar{*c, v};
  if (const AttrValue* a = v->constant()) {
    if (const auto* t = std::get_if<at::Tensor>(a))
      if (t->defined() && t->dim() == 0 && !t->is_complex() && t->scalar_type() != at::kBool)
        return Scalar{t->item<double>(), v};
    return std::nullopt;
  }
  Type::Kind k = v->type().kind;
  if (k == Type::Kind::Int || k == Type::Kind::Float) return Scalar{std::nullopt, v};
  return std::nullopt;
}

class Rewriter {
 public:
  Rewriter(Graph& g, PassContext& ctx) : g_(g), ctx_(ctx), kinds_(g) {}

  // Returns false when it destroyed n (add_relu).
  bool visit(Node* n) {
    kinds_.visit(n);
    if (is_module_op(n) || n->num_outputs() != 1 || !n->blocks().empty() || n->num_inputs() == 0)
      return true;
    if (calls_aten(n, "aten::add")) return add_like(n, "add", false);
    if (calls_aten(n, "aten::sub")) return add_like(n, "sub", true);
    if (calls_aten(n, "aten::rsub")) return rsub(n);
    if (calls_aten(n, "aten::mul")) return mul(n);
    if (calls_aten(n, "aten::div")) return div(n);
    if (calls_aten(n, "aten::neg")) return neg(n);
    if (calls_aten(n, "aten::cat")) return cat(n);
    if (calls_aten(n, "aten::stack")) return stack(n);
    return true;
  }

  bool changed() const { return changed_; }

 private:
  bool is_float_tensor(const Value* v) const {
    Type::Kind k = v->type().kind;
    if (k != Type::Kind::Tensor && k != Type::Kind::Any) return false;
    if (v->constant() && scalar_of(const_cast<Value*>(v))) return false;  // a wrapped number
    return kinds_.of(v) != FK::NotFloat;
  }

  bool reject(const char* rule, const Node* n, const char* why) {
    ctx_.reject(rule, n, why);
    return true;
  }

  bool alpha_is_one(const Node* n, size_t i) const {
    if (n->num_inputs() <= i) return true;
    auto a = const_float(n->input(i));
    return a && *a == 1.0;
  }

  // ----- building blocks

  std::string fresh(const Node* n, const std::string& method) {
    if (!paths_) paths_.emplace(g_);
    return paths_->fresh(n->scope(), "ff_" + method);
  }

  // n becomes FloatFunctional.<method>(inputs) in place.
  void become(Node* n, const std::string& method, const std::vector<Value*>& inputs) {
    n->remove_all_inputs();
    for (Value* v : inputs) n->add_input(v);
    n->set_op("FloatFunctional." + method);
    while (!n->attrs().empty()) {
      std::string key = n->attrs().items().front().first;
      n->attrs().erase(key);
    }
    n->set_module(fresh(n, method));
    kinds_.set(n->output(), FK::Float);
    changed_ = true;
  }

  Value* float_const(double v, Node* before) {
    return g_.constant(v, Type::of(Type::Kind::Float), before);
  }

  // A scalar operand as FloatFunctional wants it: a float constant (ints and 0-dim tensors are
  // converted), or the value itself when it is a non-constant number.
  Value* scalar_input(const Scalar& s, Node* before) {
    if (!s.value) return s.v;
    if (s.v->type().kind == Type::Kind::Float) return s.v;
    return float_const(*s.value, before);
  }

  // A new `mul_scalar(x, c)` node right before `before`, with its provenance.
  Value* insert_mul_scalar(Value* x, double c, Node* before) {
    Value* k = float_const(c, before);
    Node* m = g_.create("FloatFunctional.mul_scalar", {x, k}, 0);
    Type t = Type::tensor(x->type().is_tensor() ? x->type().dtype : DType::Unknown);
    if (x->type().is_tensor()) t.shape = x->type().shape;
    m->add_output(t);
    m->copy_provenance(before);
    m->set_module(fresh(before, "mul_scalar"));
    m->insert_before(before);
    kinds_.set(m->output(), FK::Float);
    return m->output();
  }

  // The ReLU consuming `sum` when it is the sum's only use, in the same block.
  Node* sole_relu_user(const Node* sum) const {
    const Value* out = sum->output();
    if (out->num_uses() != 1) return nullptr;
    Node* u = out->uses()[0].user;
    if (u->owning_block() != sum->owning_block() || u->num_outputs() != 1 || u->num_inputs() != 1)
      return nullptr;
    if (u->is("nn.ReLU") && u->weights().empty()) return u;
    if (!is_module_op(u) && calls_aten(u, "aten::relu")) return u;
    return nullptr;
  }

  // t + u as add, or add_relu folded into the ReLU that follows. Returns false when n is gone.
  bool emit_add(Node* n, Value* a, Value* b, const char* rule) {
    if (Node* relu = sole_relu_user(n)) {
      relu->remove_all_inputs();
      relu->add_input(a);
      relu->add_input(b);
      relu->set_op("FloatFunctional.add_relu");
      while (!relu->attrs().empty()) {
        std::string key = relu->attrs().items().front().first;
        relu->attrs().erase(key);
      }
      relu->copy_provenance(n);
      relu->set_module(fresh(n, "add_relu"));
      kinds_.set(relu->output(), FK::Float);
      ctx_.rewrite("add_relu", relu);
      n->destroy();
      changed_ = true;
      return false;
    }
    become(n, "add", {a, b});
    ctx_.rewrite(rule, n);
    return true;
  }

  // ----- rules

  // torch.add / torch.sub (self, other, alpha).
  bool add_like(Node* n, const char* rule, bool negate) {
    if (n->num_inputs() < 2 || n->num_inputs() > 3) return reject(rule, n, "unexpected inputs");
    Value* a = n->input(0);
    Value* b = n->input(1);
    if (!negate && !is_float_tensor(a) && is_float_tensor(b)) std::swap(a, b);  // c + t
    if (!is_float_tensor(a)) return reject(rule, n, "the tensor operand is not a float tensor");
    if (!alpha_is_one(n, 2)) return reject(rule, n, "alpha is not a constant 1");
    if (auto s = scalar_of(b)) {
      if (negate) {
        if (!s->value) return reject(rule, n, "subtracting a number that is not a constant");
        Value* c = float_const(-*s->value, n);
        become(n, "add_scalar", {a, c});
        ctx_.rewrite("sub_scalar", n);
        return true;
      }
      Value* c = scalar_input(*s, n);
      become(n, "add_scalar", {a, c});
      ctx_.rewrite("add_scalar", n);
      return true;
    }
    if (!is_float_tensor(b)) return reject(rule, n, "the other operand is not a float tensor");
    if (negate) b = insert_mul_scalar(b, -1.0, n);
    return emit_add(n, a, b, rule);
  }

  // torch.rsub(self, other, alpha) = other - alpha * self.
  bool rsub(Node* n) {
    const char* rule = "rsub";
    if (n->num_inputs() < 2 || n->num_inputs() > 3) return reject(rule, n, "unexpected inputs");
    Value* t = n->input(0);
    Value* other = n->input(1);
    if (!is_float_tensor(t)) return reject(rule, n, "self is not a float tensor");
    if (!alpha_is_one(n, 2)) return reject(rule, n, "alpha is not a constant 1");
    if (auto s = scalar_of(other)) {
      Value* c = scalar_input(*s, n);
      Value* neg_t = insert_mul_scalar(t, -1.0, n);
      become(n, "add_scalar", {neg_t, c});
      ctx_.rewrite(rule, n);
      return true;
    }
    if (!is_float_tensor(other)) return reject(rule, n, "other is not a float tensor");
    return emit_add(n, other, insert_mul_scalar(t, -1.0, n), rule);
  }

  bool mul(Node* n) {
    const char* rule = "mul";
    if (n->num_inputs() != 2) return reject(rule, n, "unexpected inputs");
    Value* a = n->input(0);
    Value* b = n->input(1);
    if (!is_float_tensor(a) && is_float_tensor(b)) std::swap(a, b);  // c * t
    if (!is_float_tensor(a)) return reject(rule, n, "no float tensor operand");
    if (auto s = scalar_of(b)) {
      Value* c = scalar_input(*s, n);
      become(n, "mul_scalar", {a, c});
      ctx_.rewrite("mul_scalar", n);
      return true;
    }
    if (!is_float_tensor(b)) return reject(rule, n, "the other operand is not a float tensor");
    become(n, "mul", {a, b});
    ctx_.rewrite(rule, n);
    return true;
  }

  bool div(Node* n) {
    const char* rule = "div_scalar";
    if (n->num_inputs() < 2 || n->num_inputs() > 3) return reject(rule, n, "unexpected inputs");
    if (n->num_inputs() == 3 && !const_is_none(n->input(2)))
      return reject(rule, n, "rounding_mode is set");
    Value* a = n->input(0);
    if (!is_float_tensor(a)) return reject(rule, n, "the dividend is not a float tensor");
    auto s = scalar_of(n->input(1));
    if (!s) return reject(rule, n, "the divisor is not a number (tensor / tensor stays float)");
    if (!s->value) return reject(rule, n, "the divisor is not a constant");
    if (*s->value == 0.0) return reject(rule, n, "division by zero");
    Value* c = float_const(1.0 / *s->value, n);
    become(n, "mul_scalar", {a, c});
    ctx_.rewrite(rule, n);
    return true;
  }

  bool neg(Node* n) {
    const char* rule = "neg";
    if (n->num_inputs() != 1) return reject(rule, n, "unexpected inputs");
    if (!is_float_tensor(n->input(0))) return reject(rule, n, "not a float tensor");
    Value* c = float_const(-1.0, n);
    become(n, "mul_scalar", {n->input(0), c});
    ctx_.rewrite(rule, n);
    return true;
  }

  // Elements of a tensor list are float: checked on its ListConstruct, else on its type.
  bool float_list(const Value* list) const {
    if (const Node* lc = producer_is(list, "prim.ListConstruct")) {
      for (const Value* v : lc->inputs())
        if (!is_float_tensor(v)) return false;
      return true;
    }
    const Type& t = list->type();
    if (t.kind != Type::Kind::List) return t.kind == Type::Kind::Any;
    const Type& e = t.elems.at(0);
    if (e.kind != Type::Kind::Tensor) return false;
    return e.dtype == DType::Unknown || is_float_dtype(e.dtype);
  }

  Value* dim_input(Node* n) {
    if (n->num_inputs() >= 2) return n->input(1);
    return g_.constant(int64_t{0}, Type::of(Type::Kind::Int), n);
  }

  bool cat(Node* n) {
    const char* rule = "cat";
    if (n->num_inputs() < 1 || n->num_inputs() > 2) return reject(rule, n, "unexpected inputs");
    if (n->num_inputs() == 2 && n->input(1)->type().kind != Type::Kind::Int &&
        !const_int(n->input(1)))
      return reject(rule, n, "dim is not an int");
    if (!float_list(n->input(0))) return reject(rule, n, "not a list of float tensors");
    Value* dim = dim_input(n);
    become(n, "cat", {n->input(0), dim});
    ctx_.rewrite(rule, n);
    return true;
  }

  bool stack(Node* n) {
    const char* rule = "stack";
    if (n->num_inputs() < 1 || n->num_inputs() > 2) return reject(rule, n, "unexpected inputs");
    const Node* lc = producer_is(n->input(0), "prim.ListConstruct");
    if (!lc) return reject(rule, n, "the tensors are not a literal list (prim.ListConstruct)");
    if (n->num_inputs() == 2 && !const_int(n->input(1)))
      return reject(rule, n, "dim is not a constant");
    if (!float_list(n->input(0))) return reject(rule, n, "not a list of float tensors");
    Value* dim = dim_input(n);
    std::vector<Value*> items;
    for (Value* v : lc->inputs()) {
      Node* u = g_.create("Tensor.unsqueeze", {v, dim}, 0);
      u->add_output(Type::tensor(v->type().is_tensor() ? v->type().dtype : DType::Unknown));
      u->copy_provenance(n);
      u->insert_before(n);
      kinds_.set(u->output(), kinds_.of(v));
      items.push_back(u->output());
    }
    Node* list = g_.create("prim.ListConstruct", items, 0);
    list->add_output(n->input(0)->type());
    list->insert_before(n);
    become(n, "cat", {list->output(), dim});
    ctx_.rewrite(rule, n);
    return true;
  }

  Graph& g_;
  PassContext& ctx_;
  FloatKinds kinds_;
  std::optional<ModulePaths> paths_;  // built on the first rewrite
  bool changed_ = false;
};

}  // namespace

bool run_float_functional(Graph& g, PassContext& ctx) {
  Rewriter r(g, ctx);
  walk_pre(g.block(), [&](Node* n) { return r.visit(n); });
  return r.changed();
}

}  // namespace tt
