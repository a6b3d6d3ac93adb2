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
// - Outputs are looked through (nested) prim.TupleConstruct / prim.ListConstruct; integer and bool
//   tensors (known dtype) and non-tensors get no stub. A tensor of unknown dtype counts as float
//   unless the op that makes it is known to give integers (argmax, comparisons, the indices of
//   topk, x.long(), ...).
// - Inputs of unknown dtype count as float unless they feed an nn.Embedding (indices). Uses that
//   read only the input's dtype/device/size (x.type_as(input), input.new_zeros(...)) keep the
//   float input.
#include "exec/alias.h"
#include "ir/dtype_analysis.h"
#include "ir/quant.h"
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "passes/quant_stub_util.h"

#include <unordered_set>

namespace tt {
namespace {

// Uses that read only the input's metadata (dtype, device, size): they keep reading the float
// input, as a quantized tensor would change what they make (x.new_zeros(...) of a quantized x
// is quantized) or fail after convert (zeros.type_as(quantized)).
bool reads_metadata_only(const Use& u) {
  const Node* n = u.user;
  for (const auto& b : aten_bases(n->op())) {
    if (b == "aten::type_as" || b == "aten::expand_as" || b == "aten::view_as" ||
        b == "aten::reshape_as")
      return u.index == 1;
    if (b == "aten::to" && u.index == 1) return true;  // x.to(other)
    if (b == "aten::size" || b == "aten::dim" || b == "aten::numel" || b == "aten::new_zeros" ||
        b == "aten::new_ones" || b == "aten::new_empty" || b == "aten::new_full" ||
        b == "aten::zeros_like" || b == "aten::ones_like" || b == "aten::empty_like" ||
        b == "aten::full_like" || b == "aten::rand_like" || b == "aten::randn_like")
      return u.index == 0;
  }
  return n->is("Tensor.dtype") || n->is("Tensor.device");
}

// The tensors a graph output is made of: through (nested) tuple and list constructions that
// nothing else reads, as (user, input index) sites.
void output_sites(Value* v, Node* user, size_t idx, Block* top,
                  std::vector<std::pair<Node*, size_t>>& out) {
  Node* p = v->node();
  bool dict = p->is("prim.DictConstruct");
  if ((p->is("prim.TupleConstruct") || p->is("prim.ListConstruct") || dict) &&
      p->owning_block() == top && has_one_use(v)) {
    for (size_t j = dict ? 1 : 0; j < p->num_inputs(); j += dict ? 2 : 1)  // a dict's values
      output_sites(p->input(j), p, j, top, out);
    return;
  }
  out.emplace_back(user, idx);
}

}  // namespace

// Eager quantization cannot keep an in-place write exact: the written tensor is quantized after
// convert (float ops on it would need a DeQuantStub, a copy, between the view and the write) and
// most in-place ATen ops do not run on quantized tensors. Such a model is refused (exit 4) rather
// than prepared into one that loses the write (Note [In-place writes]).
void refuse_inplace_writes(const Graph& g) {
  for (const Node* n : g.all_nodes()) {
    for (size_t i : written_inputs(*n)) {
      const Type& t = n->input(i)->type();
      if (t.is_tensor() && !may_be_float_tensor(t)) continue;
      throw Error(ExitCode::Unsupported,
                  "--quant-prep: " + describe(*n) +
                      " writes in place into a float tensor that shares memory with other values; "
                      "eager-mode quantization cannot keep that write — rewrite it out of place "
                      "in the model (e.g. torch.cat of the parts), or convert without --quant-prep")
          .at(location_of(*n));
    }
  }
}

bool run_quant_stubs(Graph& g, PassContext& ctx) {
  refuse_inplace_writes(g);
  StubNamer names(g);
  bool changed = false;
  Block* top = g.block();

  // Inputs, in order, right at the start of the graph.
  Node* first = top->front();
  std::vector<Node*> placed;
  for (Value* in : g.inputs()) {
    const Type& t = in->type();
    if (!may_be_float_tensor(t)) continue;
    bool indices = false;
    for (const Use& u : in->uses())
      if (u.user->is("nn.Embedding") || calls_aten(u.user, "aten::embedding")) indices = true;
    if (t.dtype == DType::Unknown && indices) continue;
    Node* s = insert_stub(g, "quant.QuantStub", in, names.fresh("quant"), top, first, nullptr);
    if (!placed.empty()) s->move_after(placed.back());
    placed.push_back(s);
    Value* q = s->output();
    in->replace_uses_with_if(q,
                             [&](const Use& u) { return u.user != s && !reads_metadata_only(u); });
    ctx.rewrite("quant-stub", s);
    changed = true;
  }

  // Outputs: through tuple/list constructions at the top level.
  std::vector<std::pair<Node*, size_t>> sites;  // (user, input index) of each output tensor
  Node* ret = top->return_node();
  for (size_t i = 0; i < ret->num_inputs(); ++i) output_sites(ret->input(i), ret, i, top, sites);
  for (const auto& [user, idx] : sites) {
    Value* v = user->input(idx);
    const Type& t = v->type();
    if (!t.is_tensor() || known_not_float(v)) continue;
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
