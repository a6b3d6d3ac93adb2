// Leaf recipes of nn.Linear and nn.Embedding.
#include "loaders/torchscript/recipe.h"

namespace tt::ts {

std::optional<LeafMatch> linear_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::linear"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  a.attr(1, "weight");
  bool bias = a.attr_or_none(2, "bias");
  if (!a.ok()) return reject(ctx, a.why());
  at::Tensor w = ctx.tensor("weight");
  if (!w.defined() || w.dim() != 2) return reject(ctx, "unexpected weight shape");
  LeafMatch m;
  m.op = "nn.Linear";
  m.attrs.set("in_features", w.size(1));
  m.attrs.set("out_features", w.size(0));
  m.attrs.set("bias", bias);
  m.weights = {"weight"};
  if (bias) m.weights.insert("bias");
  return m;
}

std::optional<LeafMatch> embedding_recipe(LeafCtx& ctx) {
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1 || kind_str(ops[0]) != "aten::embedding")
    return reject(ctx, "forward is not a single aten::embedding");
  const jit::Node* n = ops[0];
  if (ctx.g.num_inputs() != 2 || ctx.g.returned() != n->output())
    return reject(ctx, "forward does not return the lookup");
  Args a(ctx, n);
  a.attr(0, "weight");
  a.data(1);
  int64_t padding_idx = a.i(2);
  bool scale_grad = a.b(3);
  bool sparse = a.b(4);
  if (!a.ok()) return reject(ctx, a.why());
  at::Tensor w = ctx.tensor("weight");
  if (!w.defined() || w.dim() != 2) return reject(ctx, "unexpected weight shape");
  LeafMatch m;
  m.op = "nn.Embedding";
  m.attrs.set("num_embeddings", w.size(0));
  m.attrs.set("embedding_dim", w.size(1));
  // nn.Embedding turns a negative padding_idx into a non-negative one; -1 means None in ATen.
  if (padding_idx < 0)
    m.attrs.set("padding_idx", NoneAttr{});
  else
    m.attrs.set("padding_idx", padding_idx);
  m.attrs.set("scale_grad_by_freq", scale_grad);
  m.attrs.set("sparse", sparse);
  m.weights = {"weight"};
  return m;
}

}  // namespace tt::ts
