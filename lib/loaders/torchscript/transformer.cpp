// Leaf recipes of the attention modules: nn.MultiheadAttention and nn.TransformerEncoderLayer
// (their fused fast-path kernels), and a scripted nn.TransformerEncoderLayer read from its
// attributes.
#include "loaders/torchscript/recipe.h"
#include "ir/module_lowering.h"

namespace tt::ts {

// nn.MultiheadAttention when its fast path ran (eval, batch_first, packed in_proj):
// aten::_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
// proj_weight, proj_bias, mask, need_weights, average_attn_weights, mask_type). The slow path
// is inlined instead. `dropout` only acts in training and is not in the graph: it becomes 0.0.
std::optional<LeafMatch> mha_recipe(LeafCtx& ctx) {
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1 || kind_str(ops[0]) != "aten::_native_multi_head_attention")
    return reject(ctx,
                  "forward does not use the fused attention kernel (only that form is lifted)");
  const jit::Node* n = ops[0];
  Args a(ctx, n);
  int64_t embed_dim = a.i(3), num_heads = a.i(4);
  a.attr(5, "in_proj_weight");
  a.attr(6, "in_proj_bias");
  a.attr(7, "out_proj.weight");
  a.attr(8, "out_proj.bias");
  bool need_weights = a.b(10);
  bool average = a.b(11);
  if (!a.ok()) return reject(ctx, a.why());
  if (!a.none(9) || !a.none(12)) return reject(ctx, "attention with a mask");
  LeafMatch m;
  for (size_t i = 0; i < 3; ++i) {
    auto idx = ctx.g.input_index(n->input(i));
    if (!idx) return reject(ctx, "query/key/value are not the module's inputs");
    m.call_args.push_back(*idx);
  }
  if (!match_flat_results(ctx, n, m)) return std::nullopt;
  at::Tensor w = ctx.tensor("in_proj_weight");
  if (!w.defined() || w.dim() != 2 || w.size(0) != 3 * embed_dim || w.size(1) != embed_dim)
    return reject(ctx, "in_proj_weight does not match embed_dim");
  // forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
  //         average_attn_weights=True)
  if (!need_weights || !average) {
    m.call_args.push_back(0);
    m.call_consts.push_back(IValue());
    m.call_args.push_back(0);
    m.call_consts.push_back(IValue(need_weights));
  }
  if (!average) {
    m.call_args.push_back(0);
    m.call_consts.push_back(IValue());
    m.call_args.push_back(0);
    m.call_consts.push_back(IValue(average));
  }
  m.op = "nn.MultiheadAttention";
  m.attrs.set("embed_dim", embed_dim);
  m.attrs.set("num_heads", num_heads);
  m.attrs.set("dropout", 0.0);
  m.attrs.set("bias", true);
  m.attrs.set("add_bias_kv", false);
  m.attrs.set("add_zero_attn", false);
  m.attrs.set("kdim", embed_dim);
  m.attrs.set("vdim", embed_dim);
  m.attrs.set("batch_first", true);
  m.weights = {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"};
  m.result = LeafMatch::Result::Pair;  // (attn_output, attn_weights or None)
  return m;
}

// nn.TransformerEncoderLayer when its fast path ran (eval under no_grad; the fast path needs
// batch_first=True, no mask, relu or gelu): aten::_transformer_encoder_layer_fwd(src, embed_dim,
// num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first, eps,
// norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2,
// ffn_bias_2, mask, mask_type). The slow path is inlined instead. Dropout only acts in training
// and is not in the graph: it becomes 0.0.
std::optional<LeafMatch> transformer_encoder_layer_recipe(LeafCtx& ctx) {
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1 || kind_str(ops[0]) != "aten::_transformer_encoder_layer_fwd")
    return reject(ctx, "forward does not use the fused encoder kernel (only that form is lifted)");
  const jit::Node* n = ops[0];
  Args a(ctx, n);
  int64_t d_model = a.i(1), nhead = a.i(2);
  for (size_t i = 0; i < 4; ++i) a.attr(3 + i, kTransformerEncoderWeights[i]);
  bool gelu = a.b(7), norm_first = a.b(8);
  double eps = a.f(9);
  for (size_t i = 4; i < 12; ++i) a.attr(6 + i, kTransformerEncoderWeights[i]);
  if (!a.ok()) return reject(ctx, a.why());
  for (size_t i = 18; i < n->inputs().size(); ++i)
    if (!a.none(i)) return reject(ctx, "encoder layer with a mask");
  auto idx = ctx.g.input_index(n->input(0));
  if (!idx || *idx != 1) return reject(ctx, "src is not the module's first input");
  LeafMatch m;
  m.call_args.push_back(*idx);
  if (!match_flat_results(ctx, n, m)) return std::nullopt;
  at::Tensor w_in = ctx.tensor("self_attn.in_proj_weight"), w1 = ctx.tensor("linear1.weight");
  if (!w_in.defined() || w_in.dim() != 2 || w_in.size(0) != 3 * d_model || w_in.size(1) != d_model)
    return reject(ctx, "in_proj_weight does not match d_model");
  if (!w1.defined() || w1.dim() != 2 || w1.size(1) != d_model)
    return reject(ctx, "linear1 does not match d_model");
  m.op = "nn.TransformerEncoderLayer";
  m.attrs.set("d_model", d_model);
  m.attrs.set("nhead", nhead);
  m.attrs.set("dim_feedforward", w1.size(0));
  m.attrs.set("dropout", 0.0);
  m.attrs.set("activation", std::string(gelu ? "gelu" : "relu"));
  m.attrs.set("layer_norm_eps", eps);
  m.attrs.set("batch_first", true);
  m.attrs.set("norm_first", norm_first);
  m.attrs.set("bias", true);
  m.weights =
      std::set<std::string>(kTransformerEncoderWeights.begin(), kTransformerEncoderWeights.end());
  return m;
}

// A scripted nn.TransformerEncoderLayer read from its attributes (its forward, with the fast-path
// checks and their messages, is not lifted): what the fused kernel of
// transformer_encoder_layer_recipe computes, for relu/gelu, packed q/k/v projections with biases
// and no dropout at work. nullopt, with `why`, for any other configuration.
std::optional<LeafMatch> scripted_encoder_layer(const jit::Module& mod, std::string& why) {
  auto sub = [](const jit::Module& m, const char* name) -> std::optional<jit::Module> {
    if (!m.hasattr(name)) return std::nullopt;
    IValue v = m.attr(name);
    if (!v.isObject()) return std::nullopt;
    return jit::Module(v.toObject());
  };
  auto get = [](const jit::Module& m, const char* name) {
    return m.hasattr(name) ? m.attr(name) : IValue();
  };
  auto as_double = [](const IValue& v) -> std::optional<double> {
    if (v.isDouble()) return v.toDouble();
    if (v.isInt()) return static_cast<double>(v.toInt());
    return std::nullopt;
  };
  auto attn = sub(mod, "self_attn"), lin1 = sub(mod, "linear1"), norm1 = sub(mod, "norm1"),
       norm2 = sub(mod, "norm2");
  IValue act = get(mod, "activation_relu_or_gelu"), norm_first = get(mod, "norm_first");
  if (!attn || !lin1 || !norm1 || !norm2 || !act.isInt() || !norm_first.isBool()) {
    why = "its attributes are not those of the torch.nn class";
    return std::nullopt;
  }
  if (act.toInt() != 1 && act.toInt() != 2) {
    why = "an activation other than relu/gelu";
    return std::nullopt;
  }
  IValue d_model = get(*attn, "embed_dim"), nhead = get(*attn, "num_heads"),
         batch_first = get(*attn, "batch_first");
  IValue same = get(*attn, "_qkv_same_embed_dim");
  if (!d_model.isInt() || !nhead.isInt() || !batch_first.isBool() || !same.isBool() ||
      !same.toBool() || !get(*attn, "bias_k").isNone() || !get(*attn, "in_proj_bias").isTensor()) {
    why = "its self_attn is not a packed nn.MultiheadAttention with biases";
    return std::nullopt;
  }
  auto eps1 = as_double(get(*norm1, "eps")), eps2 = as_double(get(*norm2, "eps"));
  if (!eps1 || !eps2 || *eps1 != *eps2) {
    why = "norm1 and norm2 have different eps";
    return std::nullopt;
  }
  std::optional<double> p;
  for (const char* d : {"dropout", "dropout1", "dropout2"}) {
    auto dm = sub(mod, d);
    auto dp = dm ? as_double(get(*dm, "p")) : std::nullopt;
    if (!dp || (p && *p != *dp)) {
      why = "its dropout modules differ";
      return std::nullopt;
    }
    p = dp;
  }
  if (mod.is_training() && *p > 0) {
    why = "dropout at work (training mode)";
    return std::nullopt;
  }
  IValue w1 = get(*lin1, "weight");
  if (!w1.isTensor() || w1.toTensor().dim() != 2 || w1.toTensor().size(1) != d_model.toInt()) {
    why = "linear1 does not match d_model";
    return std::nullopt;
  }
  LeafMatch m;
  m.op = "nn.TransformerEncoderLayer";
  m.attrs.set("d_model", d_model.toInt());
  m.attrs.set("nhead", nhead.toInt());
  m.attrs.set("dim_feedforward", w1.toTensor().size(0));
  m.attrs.set("dropout", *p);
  m.attrs.set("activation", std::string(act.toInt() == 2 ? "gelu" : "relu"));
  m.attrs.set("layer_norm_eps", *eps1);
  m.attrs.set("batch_first", batch_first.toBool());
  m.attrs.set("norm_first", norm_first.toBool());
  m.attrs.set("bias", true);
  m.weights = {kTransformerEncoderWeights.begin(), kTransformerEncoderWeights.end()};
  return m;
}

}  // namespace tt::ts
