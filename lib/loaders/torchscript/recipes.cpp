// The table of leaf recipes (Note [Leaf recipes]) by torch.nn class name, and the shared helpers
// of recipe.h that are not inline.
#include "loaders/torchscript/recipe.h"

#include <algorithm>

namespace tt::ts {

const jit::Node* single_op(LeafCtx& ctx, std::initializer_list<const char*> kinds) {
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1) {
    ctx.why = "forward has " + std::to_string(ops.size()) + " ops, expected 1";
    return nullptr;
  }
  const jit::Node* n = ops[0];
  std::string k = kind_str(n);
  if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) {
    ctx.why = "forward calls " + k;
    return nullptr;
  }
  if (ctx.g.num_inputs() != 2 || n->inputs().empty() || !ctx.g.is_input(n->input(0), 1) ||
      ctx.g.returned() != n->output(0)) {
    ctx.why = "forward does not map its input straight through " + k;
    return nullptr;
  }
  return n;
}

bool match_flat_results(LeafCtx& ctx, const jit::Node* key, LeafMatch& m) {
  auto flat_index = [&](const jit::Value* v) -> std::optional<size_t> {
    for (size_t i = 0; i < key->outputs().size(); ++i)
      if (key->output(i) == v) return i;
    return std::nullopt;
  };
  const jit::Value* rv = ctx.g.returned();
  m.returns_tuple = rv->node()->kind() == c10::prim::TupleConstruct;
  std::vector<const jit::Value*> parts;
  if (m.returns_tuple)
    parts.assign(rv->node()->inputs().begin(), rv->node()->inputs().end());
  else
    parts.push_back(rv);
  for (const jit::Value* v : parts) {
    auto i = flat_index(v);
    if (!i) {
      ctx.why = "forward returns something else than " + kind_str(key) + "'s results";
      return false;
    }
    m.flat_returned.push_back(*i);
  }
  return true;
}

// Keyed by the module's class name without "__torch__." and mangling.
const std::map<std::string, Recipe>& recipes() {
  static const std::map<std::string, Recipe> r = [] {
    std::map<std::string, Recipe> m;
    const std::string mods = "torch.nn.modules.";
    for (int64_t d = 1; d <= 3; ++d) {
      std::string nd = std::to_string(d) + "d";
      m[mods + "conv.Conv" + nd] = conv_recipe(d, false);
      m[mods + "conv.ConvTranspose" + nd] = conv_recipe(d, true);
      m[mods + "batchnorm.BatchNorm" + nd] = norm_recipe("nn.BatchNorm" + nd, "aten::batch_norm");
      m[mods + "instancenorm.InstanceNorm" + nd] =
          norm_recipe("nn.InstanceNorm" + nd, "aten::instance_norm");
      m[mods + "pooling.MaxPool" + nd] = window_pool_recipe(d, /*max=*/true);
      m[mods + "pooling.AvgPool" + nd] = window_pool_recipe(d, /*max=*/false);
      m[mods + "pooling.AdaptiveAvgPool" + nd] = adaptive_pool_recipe(d, false);
      m[mods + "pooling.AdaptiveMaxPool" + nd] = adaptive_pool_recipe(d, true);
    }
    m[mods + "linear.Linear"] = linear_recipe;
    m[mods + "linear.Identity"] = identity_recipe;
    m[mods + "normalization.LayerNorm"] = layer_norm_recipe;
    m[mods + "normalization.GroupNorm"] = group_norm_recipe;
    m[mods + "normalization.RMSNorm"] = rms_norm_recipe;
    m[mods + "sparse.Embedding"] = embedding_recipe;
    m[mods + "activation.ReLU"] = unary_recipe("nn.ReLU", "aten::relu", true);
    m[mods + "activation.SiLU"] = unary_recipe("nn.SiLU", "aten::silu", true);
    m[mods + "activation.Hardswish"] = unary_recipe("nn.Hardswish", "aten::hardswish", true);
    m[mods + "activation.Hardsigmoid"] = unary_recipe("nn.Hardsigmoid", "aten::hardsigmoid", true);
    m[mods + "activation.Sigmoid"] = unary_recipe("nn.Sigmoid", "aten::sigmoid", false);
    m[mods + "activation.Tanh"] = unary_recipe("nn.Tanh", "aten::tanh", false);
    m[mods + "activation.ReLU6"] = hardtanh_recipe(true);
    m[mods + "activation.Hardtanh"] = hardtanh_recipe(false);
    m[mods + "activation.LeakyReLU"] = leaky_relu_recipe;
    m[mods + "activation.PReLU"] = prelu_recipe;
    m[mods + "activation.ELU"] = elu_recipe;
    m[mods + "activation.GELU"] = gelu_recipe;
    m[mods + "activation.Softmax"] = softmax_recipe("nn.Softmax", "aten::softmax");
    m[mods + "activation.LogSoftmax"] = softmax_recipe("nn.LogSoftmax", "aten::log_softmax");
    m[mods + "flatten.Flatten"] = flatten_recipe;
    m[mods + "dropout.Dropout"] = dropout_recipe;
    m[mods + "upsampling.Upsample"] = upsample_recipe;
    m[mods + "pixelshuffle.PixelShuffle"] = pixel_shuffle_recipe;
    m[mods + "padding.ZeroPad2d"] = pad2d_recipe(true);
    m[mods + "padding.ConstantPad2d"] = pad2d_recipe(false);
    m[mods + "rnn.LSTM"] = rnn_recipe(RnnKind::LSTM);
    m[mods + "rnn.GRU"] = rnn_recipe(RnnKind::GRU);
    m[mods + "rnn.RNN"] = rnn_recipe(RnnKind::RNN);
    m[mods + "activation.MultiheadAttention"] = mha_recipe;
    m[mods + "transformer.TransformerEncoderLayer"] = transformer_encoder_layer_recipe;
    return m;
  }();
  return r;
}

}  // namespace tt::ts
