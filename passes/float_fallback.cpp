// float-fallback: keep the ops eager quantization cannot run in float (step 6 of --quant-prep).
//
// The "domain" of each tensor value (quantized after convert, or float) propagates from the
// QuantStubs through the graph (lib/ir/quant.h domain_rule): Native/Shape/prim ops keep the domain
// of their inputs, Conv/Linear/BN modules, FloatFunctional and intrinsic modules need quantized
// inputs, float-only ops (matmul, softmax, exp, sub/div of two tensors, ATen fallbacks, ops of
// unknown class) need float inputs.
// - A float-only op gets a DeQuantStub on each quantized input; a quantized consumer of a float
//   value gets a QuantStub in front. Stubs are made on demand, one per value and block, so
//   consecutive float ops share one region and there are no DeQuant->Quant pairs; a value read by
//   float and quantized ops alike keeps its quantized form for the quantized readers.
// - A QuantStub of a value that is already quantized is removed (quantizing a quantized tensor
//   fails after convert); a DeQuantStub of a float value (the output DeQuantStub after a final
//   softmax) stays, as nnq.DeQuantize is the identity on float tensors.
// - prim.If / prim.Loop: branches and loop-carried values are made to agree (a DeQuantStub /
//   QuantStub before the block's return); nothing moves across a block boundary.
//
// Before:                                       After:
//   %q = quant.QuantStub(%x)                      %q = quant.QuantStub(%x)
//   %l = nn.Linear(%q)                            %l = nn.Linear(%q)
//   %s = F.softmax(%l, %1, %none)                 %d = quant.DeQuantStub(%l) #module=dequant_1
//   %o = nn.Linear(%s)                            %s = F.softmax(%d, %1, %none)
//                                                 %q1 = quant.QuantStub(%s) #module=quant_1
//                                                 %o = nn.Linear(%q1)
// A FloatFunctional add/mul whose inputs are float and whose users are all float ops becomes the
// plain torch.add / torch.mul again (it runs inside the float region).
// The report lists each float region with its nodes and ops (float_fallback_regions).
#include "ir/dtype_analysis.h"
#include "ir/quant.h"
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "passes/quant_stub_util.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

namespace tt {
namespace {

enum class Dom : int8_t { Float, Quant };

class FloatFallback {
 public:
  FloatFallback(Graph& g, PassContext& ctx) : g_(g), ctx_(ctx), names_(g) {}

  bool run() {
    // Nested blocks are walked between visit (which seeds a loop's carried values) and leave
    // (which makes branches and loop-carried values agree).
    walk(
        g_.block(), [&](Node* n) { return visit(n); }, [&](Node* n) { leave(n); });
    return changed_;
  }

 private:
  Dom dom(const Value* v) const {
    auto it = dom_.find(v);
    return it == dom_.end() ? Dom::Float : it->second;
  }

  // The value in the other domain, made once per value and block, right before `pos` (at the
  // end of block `end` when pos is nullptr).
  Value* convert(Value* v, Dom to, Node* pos, Block* end = nullptr) {
    auto& cache = to == Dom::Float ? dequant_ : quant_;
    Block* b = pos ? pos->owning_block() : end;
    auto key = std::make_pair(v, b);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    const char* op = to == Dom::Float ? "quant.DeQuantStub" : "quant.QuantStub";
    Node* s = insert_stub(g_, op, v, names_.fresh(to == Dom::Float ? "dequant" : "quant"), b, pos,
                          pos ? pos : v->node());
    dom_[s->output()] = to;
    cache.emplace(key, s->output());
    ctx_.rewrite(to == Dom::Float ? "dequant-before-float" : "quant-after-float", s);
    changed_ = true;
    return s->output();
  }

  // Makes block output i have domain `to` (a stub before the block's return).
  void coerce_output(Block* b, size_t i, Dom to) {
    Value* v = b->outputs()[i];
    if (dom(v) == to || !v->type().is_tensor()) return;
    b->replace_output(i, convert(v, to, nullptr, b));
  }

  // Returns whether to walk n's nested blocks (prim.If, prim.Loop: then leave(n) runs).
  bool visit(Node* n) {
    switch (domain_rule(n)) {
      case DomainRule::ToQuant:
        if (dom(n->input(0)) == Dom::Quant) return drop(n, "redundant-quant-stub"), false;
        dom_[n->output()] = Dom::Quant;
        return false;
      case DomainRule::ToFloat:
        // A DeQuantStub of a float value (an output computed in float) stays: after convert it
        // is the identity on float tensors, and every output keeps its DeQuantStub.
        dom_[n->output()] = Dom::Float;
        return false;
      case DomainRule::Float:
        for (size_t i = 0; i < n->num_inputs(); ++i) {
          Value* v = n->input(i);
          if (dom(v) == Dom::Quant && v->type().is_tensor())
            n->replace_input(i, convert(v, Dom::Float, n));
          else if (dom(v) == Dom::Quant)
            dequant_list(n, i);
        }
        return false;  // outputs float (absent = float)
      case DomainRule::NeedsQuant:
        if (demote(n)) return false;
        for (size_t i = 0; i < n->num_inputs(); ++i) quant_input(n, i);
        for (Value* o : n->outputs()) dom_[o] = Dom::Quant;
        return false;
      case DomainRule::Keep:
        break;
    }
    if (n->is("prim.If")) return true;
    if (n->is("prim.Loop")) return enter_loop(n), true;
    share_quant_stub(n);
    // Sizes, dims and numbers read off a quantized tensor are plain values, not quantized ones.
    bool q = false;
    for (const Value* v : n->inputs())
      q = q || (dom(v) == Dom::Quant && may_hold_tensor(v->type()));
    if (q)
      for (Value* o : n->outputs())
        if (may_hold_tensor(o->type())) dom_[o] = Dom::Quant;
    return false;
  }

  void leave(Node* n) {
    if (n->is("prim.If")) leave_if(n);
    if (n->is("prim.Loop")) leave_loop(n);
  }

  // A FloatFunctional add/mul between float ops (x / c inside attention, rewritten to
  // mul_scalar) runs in float as the plain function instead: no QuantStub/DeQuantStub pair around
  // it, and the float region stays one region.
  bool demote(Node* n) {
    static const std::map<std::string, std::string> plain = {
        {"FloatFunctional.add", "torch.add"},
        {"FloatFunctional.add_scalar", "torch.add"},
        {"FloatFunctional.mul", "torch.mul"},
        {"FloatFunctional.mul_scalar", "torch.mul"}};
    auto it = plain.find(n->op());
    if (it == plain.end() || n->num_inputs() != 2 || n->num_outputs() != 1) return false;
    for (const Value* v : n->inputs())
      if (dom(v) == Dom::Quant) return false;
    if (!n->output()->has_uses()) return false;
    for (const Use& u : n->output()->uses())
      if (domain_rule(u.user) != DomainRule::Float) return false;
    ctx_.rewrite("float-functional-in-float-region", n);
    n->set_op(it->second);
    n->set_module("");
    if (it->second == "torch.add")
      n->add_input(g_.constant(int64_t{1}, Type::of(Type::Kind::Int), n));
    changed_ = true;
    return true;  // a float op now; its inputs are float already
  }

  // A Native op (pooling, view, ...) reading the result of a float op that a quantized op reads
  // too runs on the quantized value, so one QuantStub serves all of them (efficientnet's SE
  // block: silu -> avgpool -> conv and silu -> FloatFunctional.mul).
  void share_quant_stub(Node* n) {
    if (n->op().rfind("prim.", 0) == 0 || n->blocks().size()) return;
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      Value* v = n->input(i);
      if (dom(v) == Dom::Quant || !may_be_float_tensor(v->type()) || known_complex(v) ||
          domain_rule(v->node()) != DomainRule::Float)
        continue;
      bool quantized_reader = false;
      for (const Use& u : v->uses())
        if (u.user->owning_block() == n->owning_block() &&
            domain_rule(u.user) == DomainRule::NeedsQuant)
          quantized_reader = true;
      if (quantized_reader) n->replace_input(i, convert(v, Dom::Quant, n));
    }
  }

  // A float op reading a list of quantized tensors (torch.stack of quantized values, ...).
  void dequant_list(Node* n, size_t i) {
    Node* l = n->input(i)->node();
    if (!l->is("prim.ListConstruct") || !has_one_use(n->input(i))) return;
    for (size_t j = 0; j < l->num_inputs(); ++j)
      if (dom(l->input(j)) == Dom::Quant) l->replace_input(j, convert(l->input(j), Dom::Float, l));
    dom_.erase(n->input(i));
  }

  void quant_input(Node* n, size_t i) {
    Value* v = n->input(i);
    Node* p = v->node();
    if (p->is("prim.ListConstruct") && has_one_use(v)) {  // FloatFunctional.cat([a, b])
      for (size_t j = 0; j < p->num_inputs(); ++j) quant_input(p, j);
      dom_[v] = Dom::Quant;
      return;
    }
    // Complex values stay as they are (Note [Complex values]).
    if (dom(v) == Dom::Quant || !may_be_float_tensor(v->type()) || known_complex(v)) return;
    if (n->is("nn.Embedding") || p->is("prim.Constant")) return;  // indices; scalar constants
    // Only values that are float because of the model (float ops, graph inputs without a stub,
    // weights read directly) need a QuantStub; anything else stays as it is.
    n->replace_input(i, convert(v, Dom::Quant, n));
  }

  void leave_if(Node* n) {
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      bool any_float = false;
      for (const auto& b : n->blocks())
        if (i < b->outputs().size() && dom(b->outputs()[i]) == Dom::Float) any_float = true;
      Dom d = any_float ? Dom::Float : Dom::Quant;
      for (const auto& b : n->blocks())
        if (i < b->outputs().size()) coerce_output(b.get(), i, d);
      if (d == Dom::Quant) dom_[n->output(i)] = Dom::Quant;
    }
  }

  // prim.Loop: node inputs (max, cond, carried...), block inputs (iter, carried...), block
  // outputs (cond, carried...), node outputs (carried...).
  void enter_loop(Node* n) {
    Block* b = n->block(0);
    for (size_t i = 1; i < b->inputs().size() && i + 1 < n->num_inputs(); ++i)
      if (dom(n->input(i + 1)) == Dom::Quant) dom_[b->inputs()[i]] = Dom::Quant;
  }

  void leave_loop(Node* n) {
    Block* b = n->block(0);
    for (size_t i = 1; i < b->outputs().size() && i < b->inputs().size(); ++i) {
      Dom d = dom(b->inputs()[i]);
      coerce_output(b, i, d);
      if (d == Dom::Quant && i - 1 < n->num_outputs()) dom_[n->output(i - 1)] = Dom::Quant;
    }
  }

  void drop(Node* n, const char* rule) {
    ctx_.rewrite(rule, n);
    n->output()->replace_all_uses_with(n->input(0));
    n->destroy();
    changed_ = true;
  }

  Graph& g_;
  PassContext& ctx_;
  StubNamer names_;
  bool changed_ = false;
  std::unordered_map<const Value*, Dom> dom_;
  std::map<std::pair<Value*, Block*>, Value*> dequant_, quant_;
};

}  // namespace

bool run_float_fallback(Graph& g, PassContext& ctx) { return FloatFallback(g, ctx).run(); }

}  // namespace tt
