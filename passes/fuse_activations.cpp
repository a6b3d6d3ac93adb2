// fuse-activations: the activations an ONNX exporter writes as several ops, as the one PyTorch
// function (an import pass of the ONNX loader: Note [Import pipeline] in lib/loaders/loader.h).
//
// Before:
//   %s : Tensor = torch.sigmoid(%x)
//   %y : Tensor = torch.mul(%x, %s)
//   %d : Tensor = torch.div(%t, %sqrt2)
//   %e : Tensor = torch.erf(%d)
//   %a : Tensor = torch.add(%e, %one, %alpha)
//   %p : Tensor = torch.mul(%t, %a)
//   %g : Tensor = torch.mul(%p, %half)
// After:
//   %y : Tensor = F.silu(%x)
//   %g : Tensor = F.gelu(%t, %none)
//
// Fires on a torch.mul (in program order, nested blocks included):
// - x * gate or gate * x, both inputs computed (neither a prim.Constant nor a prim.GetAttr), where
//   the gate is torch.sigmoid(x) (-> F.silu(x)) or F.hardsigmoid(x) (-> F.hardswish(x)) and this
//   mul is its only use;
// - p * half, half a one-element constant (a float, a tensor constant or a weight) within 1e-7 of
//   0.5 and p not a constant: GELU's erf form when p = x * q (either order) is used by this mul
//   only, q = torch.add(e, 1.0, ...) used by p only, e = torch.erf(d) used by q only and
//   d = torch.div(x, c) used by e only with c a float within 1e-5 of sqrt(2) -> F.gelu(x, "none").
// The mul is rewritten in place: its output value keeps its name, type and position, the node its
// scope, loc and module. The "none" is the mul's constant turned into a str constant (scope of the
// mul) when the mul is its only use, else a new constant before the mul. The gate, the erf chain
// and whatever only they read lose their last use and are left to dce.
//
// Note [Fusing the ONNX exporter's activations]
// The conditions are the ones the ONNX loader checked while it lifted each Mul (it fused there
// before this pass existed), restated on the lifted IR. "The gate (the product) has no ONNX
// consumer but this Mul and is no graph output" is "the value has one use, this mul": a graph
// output is a use (of the return node or of the output tuple), and an ONNX consumer is an IR
// use once lifted. "erf(..)+1, erf(..), x/sqrt(2) have one IR use so far" (the loader looked
// at the uses lifted before the Mul) is "one use". The loader's Mul with a constant input is the
// mul with a prim.Constant / prim.GetAttr input, as it lifts ONNX constants no other way. The two
// differ only where lifting breaks that correspondence, which no test model does:
// - an ONNX consumer that leaves no IR use (a Shape of the gate folded to a constant) lets the
//   pass fuse where the loader did not;
// - a use lifted after the Mul in file order (an erf result read again further down, or a gate
//   read through an alias such as Identity) keeps the pass from fusing where the loader fused
//   and kept the chain alive for that use;
// - an input a lifting binds to a constant although ONNX computes it (Max of one constant) is a
//   constant here, so x * sigmoid(x) with such an x is left alone;
// - a torch.mul another lifting writes (HardSigmoid's x * alpha, Gemm's alpha/beta scaling) that
//   completes a GELU chain is fused too (F.gelu computes the same).
// The graph the loader lifts for the Mul is the one it lifted before with torch.mul for F.silu /
// F.hardswish / F.gelu: the same values in the same order (the mul's output has the name hint of
// the ONNX Mul's output; GELU's 0.5 takes the place and the number of the "none" it becomes), so
// value names and everything lifted after the Mul are as before. Only when ONNX leaves open the
// rank of GELU's product does the loader read the 0.5 as a tensor constant (a weight, for an
// initializer) rather than a float: if another node reads it too, it is made at this Mul rather
// than at its first other reader, and the "none" is a new value.
//
// Linear: one walk; each match looks at a fixed number of producers.
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <cmath>
#include <optional>
#include <string>

namespace tt {
namespace {

bool computed(const Value* v) {
  return !v->node()->is("prim.Constant") && !v->node()->is("prim.GetAttr");
}

// The value of a one-element constant: a float constant, a tensor constant or a weight.
std::optional<double> scalar_constant(const Graph& g, const Value* v) {
  const Node* p = v->node();
  at::Tensor t;
  if (const AttrValue* c = v->constant()) {
    if (const double* d = std::get_if<double>(c)) return *d;
    if (const at::Tensor* ct = std::get_if<at::Tensor>(c)) t = *ct;
  } else if (p->is("prim.GetAttr")) {
    if (const Weight* w = g.weights().find(p->weight("value"))) t = w->tensor;
  }
  if (!t.defined() || t.numel() != 1) return std::nullopt;
  return t.item<double>();
}

class FuseActivations {
 public:
  FuseActivations(Graph& g, PassContext& ctx) : g_(g), ctx_(ctx) {}
  bool changed() const { return changed_; }

  void visit(Node* n) {
    if (!n->is("torch.mul") || n->num_inputs() != 2) return;
    if (computed(n->input(0)) && computed(n->input(1))) {
      fuse_gated(n);
    } else {
      fuse_erf_gelu(n);
    }
  }

 private:
  // x * sigmoid(x) -> F.silu(x), x * hardsigmoid(x) -> F.hardswish(x).
  void fuse_gated(Node* mul) {
    for (size_t k = 0; k < 2; ++k) {
      size_t xi = k, gi = 1 - k;
      Value* x = mul->input(xi);
      Value* gate = mul->input(gi);
      Node* p = gate->node();
      bool silu = p->is("torch.sigmoid");
      if (!silu && !p->is("F.hardsigmoid")) continue;
      if (p->num_inputs() == 0 || p->input(0) != x) continue;
      if (gate->num_uses() != 1) {
        ctx_.reject(silu ? "silu" : "hardswish", mul, "the gate has other uses");
        continue;
      }
      const char* op = silu ? "F.silu" : "F.hardswish";
      ctx_.rewrite(silu ? "silu" : "hardswish", mul);
      mul->remove_input(gi);  // x keeps its place among its uses
      mul->set_op(op);
      changed_ = true;
      return;
    }
  }

  // ((x * (erf(x / sqrt(2)) + 1)) * 0.5 -> F.gelu(x, "none").
  void fuse_erf_gelu(Node* mul) {
    Value* p = mul->input(0);
    Value* half = mul->input(1);
    auto h = scalar_constant(g_, half);
    if (!h || std::abs(*h - 0.5) >= 1e-7 || !computed(p)) return;
    Node* m = p->node();
    if (!m->is("torch.mul") || m->num_inputs() != 2) return;
    if (p->num_uses() != 1) return ctx_.reject("gelu", mul, "the product has other uses");
    for (size_t k = 0; k < 2; ++k) {
      Value* x = m->input(k);
      Value* q = m->input(1 - k);
      if (q->num_uses() != 1) continue;
      Node* add = q->node();
      if (!add->is("torch.add") || add->num_inputs() < 2 || !add->input(1)->constant()) continue;
      const AttrValue* one = add->input(1)->constant();
      if (!std::holds_alternative<double>(*one) || std::get<double>(*one) != 1.0) continue;
      Node* erf = add->input(0)->node();
      if (!erf->is("torch.erf") || erf->num_inputs() == 0 || add->input(0)->num_uses() != 1)
        continue;
      Node* div = erf->input(0)->node();
      if (!div->is("torch.div") || div->num_inputs() < 2 || div->input(0) != x ||
          erf->input(0)->num_uses() != 1)
        continue;
      const AttrValue* s = div->input(1)->constant();
      if (!s || !std::holds_alternative<double>(*s) ||
          std::abs(std::get<double>(*s) - std::sqrt(2.0)) > 1e-5)
        continue;
      ctx_.rewrite("gelu", mul);
      mul->replace_input(0, x);
      mul->replace_input(1, approximate_none(mul, half));
      mul->set_op("F.gelu");
      changed_ = true;
      return;
    }
  }

  // F.gelu's approximate="none": a str constant with the scope of `mul` right before it, as the
  // ONNX loader makes one. `half` (the mul's own constant, when only the mul reads it) becomes
  // it, so no value is made.
  Value* approximate_none(Node* mul, Value* half) {
    Node* c = half->node();
    if (half->num_uses() == 1 && c->next() == mul) {
      if (c->is("prim.GetAttr")) {
        c->erase_weight("value");
        c->set_op("prim.Constant");
      }
      c->attrs().set("value", std::string("none"));
      c->set_scope(mul->scope());
      half->set_type(Type::of(Type::Kind::Str));
      return half;
    }
    Node* k = g_.create("prim.Constant");
    k->attrs().set("value", std::string("none"));
    Value* v = k->add_output(Type::of(Type::Kind::Str));
    k->set_scope(mul->scope());
    k->insert_before(mul);
    return v;
  }

  Graph& g_;
  PassContext& ctx_;
  bool changed_ = false;
};

}  // namespace

bool run_fuse_activations(Graph& g, PassContext& ctx) {
  FuseActivations f(g, ctx);
  walk_pre(g.block(), [&](Node* n) {
    f.visit(n);
    return true;
  });
  return f.changed();
}

}  // namespace tt
