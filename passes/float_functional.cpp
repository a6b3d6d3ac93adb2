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
// Each rule is a check (rejections name the rule: "add", "sub", "rsub", "mul", "div_scalar",
// "neg", "cat", "stack") that returns the rewrite to make; it runs only after the check passed
// (Note [Rewrite toolkit] in lib/ir/rewrite.h). Which tensors are float is the shared analysis
// (FloatAnalysis, Note [Float analysis] in lib/ir/dtype_analysis.h).
//
// Linear: one walk; the float-kind table is filled as the walk goes (O(1) per node).
#include "ir/dtype_analysis.h"
#include "passes/module_paths.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <ATen/ATen.h>

#include <functional>
#include <optional>
#include <utility>

namespace tt {
namespace {

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

// A rule's rewrite, made after its check passed; returns false when it destroyed the node.
using Apply = std::function<bool()>;

class Functionalizer {
 public:
  Functionalizer(Graph& g, PassContext& ctx) : g_(g), rw_(ctx), kinds_(g) {}

  // Returns false when it destroyed n (add_relu).
  bool visit(Node* n) {
    kinds_.visit(n);
    if (is_module_op(n) || n->num_outputs() != 1 || !n->blocks().empty() || n->num_inputs() == 0)
      return true;
    const char* rule = nullptr;
    Match<Apply> m;
    if (calls_aten(n, "aten::add"))
      rule = "add", m = add_like(n, false);
    else if (calls_aten(n, "aten::sub"))
      rule = "sub", m = add_like(n, true);
    else if (calls_aten(n, "aten::rsub"))
      rule = "rsub", m = rsub(n);
    else if (calls_aten(n, "aten::mul"))
      rule = "mul", m = mul(n);
    else if (calls_aten(n, "aten::div"))
      rule = "div_scalar", m = div(n);
    else if (calls_aten(n, "aten::neg"))
      rule = "neg", m = neg(n);
    else if (calls_aten(n, "aten::cat"))
      rule = "cat", m = cat(n);
    else if (calls_aten(n, "aten::stack"))
      rule = "stack", m = stack(n);
    bool alive = true;
    rw_.run(rule, n, std::move(m), [&](Apply& apply) { alive = apply(); });
    return alive;
  }

  bool changed() const { return changed_; }

 private:
  bool is_float_tensor(const Value* v) const {
    Type::Kind k = v->type().kind;
    if (k != Type::Kind::Tensor && k != Type::Kind::Any) return false;
    if (v->constant() && scalar_of(const_cast<Value*>(v))) return false;  // a wrapped number
    return kinds_.of(v) != FloatKind::NotFloat;
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

  // n becomes FloatFunctional.<method>(inputs) in place, recorded as `rule`. `origin` (default:
  // n itself) is the node n takes the place of: its provenance and its scope's fresh module name.
  // Returns true (n is still there), what the rules' apply steps return.
  bool become(Node* n, const std::string& method, const std::vector<Value*>& inputs,
              const char* rule, const Node* origin = nullptr) {
    n->remove_all_inputs();
    for (Value* v : inputs) n->add_input(v);
    n->set_op("FloatFunctional." + method);
    while (!n->attrs().empty()) {
      std::string key = n->attrs().items().front().first;
      n->attrs().erase(key);
    }
    if (origin) n->copy_provenance(origin);
    n->set_module(fresh(origin ? origin : n, method));
    kinds_.set(n->output(), FloatKind::Float);
    changed_ = true;
    rw_.rewrite(rule, n);
    return true;
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
    kinds_.set(m->output(), FloatKind::Float);
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
      become(relu, "add_relu", {a, b}, "add_relu", /*origin=*/n);
      n->destroy();
      return false;
    }
    return become(n, "add", {a, b}, rule);
  }

  // ----- rules

  // torch.add / torch.sub (self, other, alpha).
  Match<Apply> add_like(Node* n, bool negate) {
    if (n->num_inputs() < 2 || n->num_inputs() > 3) return Reject("unexpected inputs");
    Value* a = n->input(0);
    Value* b = n->input(1);
    if (!negate && !is_float_tensor(a) && is_float_tensor(b)) std::swap(a, b);  // c + t
    if (!is_float_tensor(a)) return Reject("the tensor operand is not a float tensor");
    if (!alpha_is_one(n, 2)) return Reject("alpha is not a constant 1");
    if (auto s = scalar_of(b)) {
      if (negate) {
        if (!s->value) return Reject("subtracting a number that is not a constant");
        return Apply([=] {
          Value* c = float_const(-*s->value, n);
          return become(n, "add_scalar", {a, c}, "sub_scalar");
        });
      }
      return Apply([=] {
        Value* c = scalar_input(*s, n);
        return become(n, "add_scalar", {a, c}, "add_scalar");
      });
    }
    if (!is_float_tensor(b)) return Reject("the other operand is not a float tensor");
    return Apply([=] {
      Value* x = negate ? insert_mul_scalar(b, -1.0, n) : b;
      return emit_add(n, a, x, negate ? "sub" : "add");
    });
  }

  // torch.rsub(self, other, alpha) = other - alpha * self.
  Match<Apply> rsub(Node* n) {
    if (n->num_inputs() < 2 || n->num_inputs() > 3) return Reject("unexpected inputs");
    Value* t = n->input(0);
    Value* other = n->input(1);
    if (!is_float_tensor(t)) return Reject("self is not a float tensor");
    if (!alpha_is_one(n, 2)) return Reject("alpha is not a constant 1");
    if (auto s = scalar_of(other)) {
      return Apply([=] {
        Value* c = scalar_input(*s, n);
        Value* neg_t = insert_mul_scalar(t, -1.0, n);
        return become(n, "add_scalar", {neg_t, c}, "rsub");
      });
    }
    if (!is_float_tensor(other)) return Reject("other is not a float tensor");
    return Apply([=] { return emit_add(n, other, insert_mul_scalar(t, -1.0, n), "rsub"); });
  }

  Match<Apply> mul(Node* n) {
    if (n->num_inputs() != 2) return Reject("unexpected inputs");
    Value* a = n->input(0);
    Value* b = n->input(1);
    if (!is_float_tensor(a) && is_float_tensor(b)) std::swap(a, b);  // c * t
    if (!is_float_tensor(a)) return Reject("no float tensor operand");
    if (auto s = scalar_of(b)) {
      return Apply([=] {
        Value* c = scalar_input(*s, n);
        return become(n, "mul_scalar", {a, c}, "mul_scalar");
      });
    }
    if (!is_float_tensor(b)) return Reject("the other operand is not a float tensor");
    return Apply([=] { return become(n, "mul", {a, b}, "mul"); });
  }

  Match<Apply> div(Node* n) {
    if (n->num_inputs() < 2 || n->num_inputs() > 3) return Reject("unexpected inputs");
    if (n->num_inputs() == 3 && !const_is_none(n->input(2))) return Reject("rounding_mode is set");
    Value* a = n->input(0);
    if (!is_float_tensor(a)) return Reject("the dividend is not a float tensor");
    auto s = scalar_of(n->input(1));
    if (!s) return Reject("the divisor is not a number (tensor / tensor stays float)");
    if (!s->value) return Reject("the divisor is not a constant");
    if (*s->value == 0.0) return Reject("division by zero");
    return Apply([=] {
      Value* c = float_const(1.0 / *s->value, n);
      return become(n, "mul_scalar", {a, c}, "div_scalar");
    });
  }

  Match<Apply> neg(Node* n) {
    if (n->num_inputs() != 1) return Reject("unexpected inputs");
    if (!is_float_tensor(n->input(0))) return Reject("not a float tensor");
    return Apply([=] {
      Value* c = float_const(-1.0, n);
      return become(n, "mul_scalar", {n->input(0), c}, "neg");
    });
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

  Match<Apply> cat(Node* n) {
    if (n->num_inputs() < 1 || n->num_inputs() > 2) return Reject("unexpected inputs");
    if (n->num_inputs() == 2 && n->input(1)->type().kind != Type::Kind::Int &&
        !const_int(n->input(1)))
      return Reject("dim is not an int");
    if (!float_list(n->input(0))) return Reject("not a list of float tensors");
    return Apply([=] {
      Value* dim = dim_input(n);
      return become(n, "cat", {n->input(0), dim}, "cat");
    });
  }

  Match<Apply> stack(Node* n) {
    if (n->num_inputs() < 1 || n->num_inputs() > 2) return Reject("unexpected inputs");
    const Node* lc = producer_is(n->input(0), "prim.ListConstruct");
    if (!lc) return Reject("the tensors are not a literal list (prim.ListConstruct)");
    if (n->num_inputs() == 2 && !const_int(n->input(1))) return Reject("dim is not a constant");
    if (!float_list(n->input(0))) return Reject("not a list of float tensors");
    return Apply([=] { return stack_to_cat(n, lc); });
  }

  // torch.stack(ts, d) -> cat([t.unsqueeze(d) for t in ts], d).
  bool stack_to_cat(Node* n, const Node* lc) {
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
    return become(n, "cat", {list->output(), dim}, "stack");
  }

  Graph& g_;
  Rewriter rw_;
  FloatAnalysis kinds_;
  std::optional<ModulePaths> paths_;  // built on the first rewrite
  bool changed_ = false;
};

}  // namespace

bool run_float_functional(Graph& g, PassContext& ctx) {
  Functionalizer r(g, ctx);
  walk_pre(g.block(), [&](Node* n) { return r.visit(n); });
  return r.changed();
}

}  // namespace tt
