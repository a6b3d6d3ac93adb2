// quant-stubs: a quant.QuantStub after each floating-point graph input and a quant.DeQuantStub
// before each floating-point tensor output (step 5 of --quant-prep). Before convert both are
// identities; convert turns them into Quantize / DeQuantize.
//
// Before:                                   After:
//   graph @m(%x : f32[1,3,8,8]) {             graph @m(%x : f32[1,3,8,8]) {
//     %c = nn.Conv2d[...](%x) ...               %quant = quant.QuantStub(%x) #module=quant
//     return %c                                 %c = nn.Conv2d[...](%quant) ...
//   }                                           %dequant = quant.DeQuantStub(%c) #module=dequant
//                                               return %dequant
// - Every stub is its own module instance with a fresh path ("quant", "quant_1", ...; never a
//   path or weight prefix the model already uses).
// - Outputs are looked through prim.TupleConstruct / prim.ListConstruct; integer and bool tensors
//   (known dtype) and non-tensors get no stub. A tensor of unknown dtype counts as float unless
//   the op that makes it is known to give integers (argmax, comparisons, size, ...).
// - Inputs of unknown dtype count as float unless they feed an nn.Embedding (indices).
#include "ir/quant.h"
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "passes/quant_stub_util.h"

#include <unordered_set>

namespace tt {
namespace {

bool is_float_dtype(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16;
}

// Ops whose tensor results are never floating point.
bool makes_non_float(const Node* p) {
  static const std::unordered_set<std::string> ints = {
      "aten::argmax", "aten::argmin", "aten::eq", "aten::ne",  "aten::gt",  "aten::ge",
      "aten::lt",     "aten::le",     "aten::logical_not",     "aten::logical_and",
      "aten::logical_or", "aten::isnan", "aten::nonzero", "aten::arange"};
  for (const auto& b : aten_bases(p->op()))
    if (ints.count(b)) return true;
  return false;
}

}  // namespace

bool run_quant_stubs(Graph& g, PassContext& ctx) {
  StubNamer names(g);
  bool changed = false;
  Block* top = g.block();

  // Inputs, in order, right at the start of the graph.
  Node* first = top->front();
  std::vector<Node*> placed;
  for (Value* in : g.inputs()) {
    const Type& t = in->type();
    if (!t.is_tensor()) continue;
    if (t.dtype != DType::Unknown && !is_float_dtype(t.dtype)) continue;
    bool indices = false;
    for (const Use& u : in->uses())
      if (u.user->is("nn.Embedding") || calls_aten(u.user, "aten::embedding")) indices = true;
    if (t.dtype == DType::Unknown && indices) continue;
    Node* s = insert_stub(g, "quant.QuantStub", in, names.fresh("quant"), top, first, nullptr);
    if (!placed.empty()) s->move_after(placed.back());
    placed.push_back(s);
    Value* q = s->output();
    in->replace_uses_with_if(q, [&](const Use& u) { return u.user != s; });
    ctx.rewrite("quant-stub", s);
    changed = true;
  }

  // Outputs: through tuple/list constructions at the top level.
  std::vector<std::pair<Node*, size_t>> sites;  // (user, input index) of each output tensor
  Node* ret = top->return_node();
  for (size_t i = 0; i < ret->num_inputs(); ++i) {
    Value* v = ret->input(i);
    Node* p = v->node();
    if ((p->is("prim.TupleConstruct") || p->is("prim.ListConstruct")) && p->owning_block() == top &&
        has_one_use(v)) {
      for (size_t j = 0; j < p->num_inputs(); ++j) sites.emplace_back(p, j);
    } else {
      sites.emplace_back(ret, i);
    }
  }
  for (const auto& [user, idx] : sites) {
    Value* v = user->input(idx);
    const Type& t = v->type();
    if (!t.is_tensor()) continue;
    if (t.dtype != DType::Unknown ? !is_float_dtype(t.dtype) : makes_non_float(v->node())) continue;
    Node* s = insert_stub(g, "quant.DeQuantStub", v, names.fresh("dequant"), top,
                          user == ret ? nullptr : user,
                          v->node() != top->param_node() ? v->node() : nullptr);
    user->replace_input(idx, s->output());
    ctx.rewrite("dequant-stub", s);
    changed = true;
  }
  return changed;
}

}  // namespace tt
