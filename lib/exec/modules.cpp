// Module op lowerings: what each torch.nn module computes in eval mode, as ATen calls on the
// node's attributes (the constructor kwargs) and weights. One table, one function per module.
#include "exec/interpreter.h"

#include "ir/quant.h"
#include "support/diag.h"

#include <ATen/ATen.h>

#include <unordered_map>

namespace tt {
namespace {

struct Call {
  const Node& n;
  const WeightStore& weights;
  const std::vector<c10::IValue>& in;
  // One part of a composite module (nni.ConvReLU2d's conv; lib/ir/quant.h): the part's op, its
  // attributes and the prefix of its weight keys ("0.").
  const std::string* part_op = nullptr;
  const Attrs* part_attrs = nullptr;
  std::string weight_prefix;

  const std::string& op() const { return part_op ? *part_op : n.op(); }
  at::Tensor x(size_t i = 0) const { return in.at(i).toTensor(); }
  // Optional weight: undefined tensor when the node has no such weight.
  at::Tensor w(const char* key) const {
    std::string name = n.weight(weight_prefix + key);
    if (name.empty()) return at::Tensor();
    const Weight* wt = weights.find(name);
    if (!wt)
      throw Error(ExitCode::Internal, "module " + n.module() + " refers to missing weight '" + name + "'");
    return wt->tensor;
  }
  const Attrs& a() const { return part_attrs ? *part_attrs : n.attrs(); }
  std::vector<int64_t> ints(const char* key, size_t rank, int64_t def) const {
    auto v = a().get_ints(key, {});
    if (v.empty()) v.assign(rank, def);
    if (v.size() == 1 && rank > 1) v.assign(rank, v[0]);
    return v;
  }
};

using Lowering = std::vector<c10::IValue> (*)(const Call&);
using Out = std::vector<c10::IValue>;

int64_t rank_of(const std::string& op) {
  // "nn.Conv2d" -> 2, "nn.BatchNorm1d" -> 1; 0 when the name has no NNd suffix.
  if (op.size() >= 2 && op.back() == 'd' && std::isdigit(static_cast<unsigned char>(op[op.size() - 2])))
    return op[op.size() - 2] - '0';
  return 0;
}

at::Tensor padded_for_mode(const Call& c, at::Tensor x, size_t rank) {
  std::string mode = c.a().get_str("padding_mode", "zeros");
  if (mode == "zeros") return x;
  // Non-zero padding modes pad explicitly, then convolve with padding 0 (as torch.nn does).
  auto pad = c.ints("padding", rank, 0);
  std::vector<int64_t> p;
  for (size_t i = rank; i-- > 0;) {
    p.push_back(pad[i]);
    p.push_back(pad[i]);
  }
  return at::pad(x, p, mode == "circular" ? "circular" : mode, c10::nullopt);
}

Out conv(const Call& c) {
  size_t r = static_cast<size_t>(rank_of(c.op()));
  bool zeros = c.a().get_str("padding_mode", "zeros") == "zeros";
  at::Tensor x = padded_for_mode(c, c.x(), r);
  std::vector<int64_t> pad = zeros ? c.ints("padding", r, 0) : std::vector<int64_t>(r, 0);
  return {at::convolution(x, c.w("weight"), c.w("bias"), c.ints("stride", r, 1), pad,
                          c.ints("dilation", r, 1), false, std::vector<int64_t>(r, 0),
                          c.a().get_int("groups", 1))};
}

Out conv_transpose(const Call& c) {
  size_t r = static_cast<size_t>(rank_of(c.op()));
  return {at::convolution(c.x(), c.w("weight"), c.w("bias"), c.ints("stride", r, 1),
                          c.ints("padding", r, 0), c.ints("dilation", r, 1), true,
                          c.ints("output_padding", r, 0), c.a().get_int("groups", 1))};
}

Out linear(const Call& c) { return {at::linear(c.x(), c.w("weight"), c.w("bias"))}; }

Out batch_norm(const Call& c) {
  at::Tensor rm = c.w("running_mean"), rv = c.w("running_var");
  // Without running statistics BatchNorm always normalises with batch statistics.
  bool use_batch_stats = c.a().get_bool("training", false) || !rm.defined();
  return {at::batch_norm(c.x(), c.w("weight"), c.w("bias"), rm, rv, use_batch_stats,
                         c.a().get_float("momentum", 0.1), c.a().get_float("eps", 1e-5), false)};
}

Out instance_norm(const Call& c) {
  at::Tensor rm = c.w("running_mean"), rv = c.w("running_var");
  bool use_input_stats = c.a().get_bool("training", false) || !rm.defined();
  return {at::instance_norm(c.x(), c.w("weight"), c.w("bias"), rm, rv, use_input_stats,
                            c.a().get_float("momentum", 0.1), c.a().get_float("eps", 1e-5), false)};
}

Out layer_norm(const Call& c) {
  return {at::layer_norm(c.x(), c.a().get_ints("normalized_shape"), c.w("weight"), c.w("bias"),
                         c.a().get_float("eps", 1e-5))};
}

// nn.TransformerEncoderLayer (eval, 3-d input, no masks): the fused kernel its fast path runs, on
// (batch, seq, feature); a sequence-first input is transposed around it.
Out transformer_encoder_layer(const Call& c) {
  const Attrs& a = c.a();
  if (c.x().dim() != 3 || c.in.size() > 1)
    throw Error(ExitCode::Unsupported, "the interpreter runs nn.TransformerEncoderLayer only "
                                       "on 3-d input without masks: " + c.n.module());
  const bool batch_first = a.get_bool("batch_first", false);
  at::Tensor x = batch_first ? c.x() : c.x().transpose(0, 1);
  at::Tensor y = at::_transformer_encoder_layer_fwd(
      x, a.get_int("d_model"), a.get_int("nhead"), c.w("self_attn.in_proj_weight"),
      c.w("self_attn.in_proj_bias"), c.w("self_attn.out_proj.weight"), c.w("self_attn.out_proj.bias"),
      a.get_str("activation", "relu") == "gelu", a.get_bool("norm_first", false),
      a.get_float("layer_norm_eps", 1e-5), c.w("norm1.weight"), c.w("norm1.bias"), c.w("norm2.weight"),
      c.w("norm2.bias"), c.w("linear1.weight"), c.w("linear1.bias"), c.w("linear2.weight"),
      c.w("linear2.bias"), std::nullopt, std::nullopt);
  return {batch_first ? y : y.transpose(0, 1)};
}

Out rms_norm(const Call& c) {
  // eps=None: the dtype's machine epsilon, decided inside ATen.
  std::optional<double> eps;
  const AttrValue* e = c.a().find("eps");
  if (e && !std::holds_alternative<NoneAttr>(*e)) eps = c.a().get_float("eps");
  // An undefined weight must be nullopt: rms_norm multiplies by any tensor it is given.
  at::Tensor w = c.w("weight");
  return {at::rms_norm(c.x(), c.a().get_ints("normalized_shape"),
                       w.defined() ? std::optional<at::Tensor>(w) : std::nullopt, eps)};
}

Out group_norm(const Call& c) {
  return {at::group_norm(c.x(), c.a().get_int("num_groups"), c.w("weight"), c.w("bias"),
                         c.a().get_float("eps", 1e-5))};
}

Out embedding(const Call& c) {
  return {at::embedding(c.w("weight"), c.x(), c.a().get_int("padding_idx", -1), false, false)};
}

Out relu(const Call& c) { return {at::relu(c.x())}; }
Out relu6(const Call& c) { return {at::hardtanh(c.x(), 0.0, 6.0)}; }
Out hardtanh(const Call& c) {
  return {at::hardtanh(c.x(), c.a().get_float("min_val", -1.0), c.a().get_float("max_val", 1.0))};
}
Out leaky_relu(const Call& c) { return {at::leaky_relu(c.x(), c.a().get_float("negative_slope", 0.01))}; }
Out prelu(const Call& c) { return {at::prelu(c.x(), c.w("weight"))}; }
Out elu(const Call& c) { return {at::elu(c.x(), c.a().get_float("alpha", 1.0))}; }
Out gelu(const Call& c) { return {at::gelu(c.x(), c.a().get_str("approximate", "none"))}; }
Out silu(const Call& c) { return {at::silu(c.x())}; }
Out hardswish(const Call& c) { return {at::hardswish(c.x())}; }
Out hardsigmoid(const Call& c) { return {at::hardsigmoid(c.x())}; }
Out sigmoid(const Call& c) { return {at::sigmoid(c.x())}; }
Out tanh_(const Call& c) { return {at::tanh(c.x())}; }
Out softmax(const Call& c) {
  const AttrValue* dim = c.a().find("dim");
  if (!dim || std::holds_alternative<NoneAttr>(*dim))
    throw Error(ExitCode::Unsupported, "nn.Softmax without dim (implicit dim) cannot be run — set dim");
  return {at::softmax(c.x(), std::get<int64_t>(*dim))};
}
Out identity(const Call& c) { return {c.in.at(0)}; }
Out flatten(const Call& c) {
  return {at::flatten(c.x(), c.a().get_int("start_dim", 1), c.a().get_int("end_dim", -1))};
}
Out pixel_shuffle(const Call& c) { return {at::pixel_shuffle(c.x(), c.a().get_int("upscale_factor"))}; }
Out pixel_unshuffle(const Call& c) {
  return {at::pixel_unshuffle(c.x(), c.a().get_int("downscale_factor"))};
}

Out max_pool(const Call& c) {
  size_t r = static_cast<size_t>(rank_of(c.op()));
  auto k = c.ints("kernel_size", r, 1);
  auto s = c.ints("stride", r, 0);
  if (c.a().get_ints("stride", {}).empty()) s = k;
  auto p = c.ints("padding", r, 0), d = c.ints("dilation", r, 1);
  bool ceil = c.a().get_bool("ceil_mode", false);
  if (r == 1) return {at::max_pool1d(c.x(), k, s, p, d, ceil)};
  if (r == 2) return {at::max_pool2d(c.x(), k, s, p, d, ceil)};
  return {at::max_pool3d(c.x(), k, s, p, d, ceil)};
}

Out avg_pool(const Call& c) {
  size_t r = static_cast<size_t>(rank_of(c.op()));
  auto k = c.ints("kernel_size", r, 1);
  auto s = c.a().get_ints("stride", {}).empty() ? k : c.ints("stride", r, 1);
  auto p = c.ints("padding", r, 0);
  bool ceil = c.a().get_bool("ceil_mode", false);
  bool cip = c.a().get_bool("count_include_pad", true);
  c10::optional<int64_t> div;
  if (const AttrValue* v = c.a().find("divisor_override"))
    if (const auto* i = std::get_if<int64_t>(v)) div = *i;
  if (r == 1) return {at::avg_pool1d(c.x(), k, s, p, ceil, cip)};
  if (r == 2) return {at::avg_pool2d(c.x(), k, s, p, ceil, cip, div)};
  return {at::avg_pool3d(c.x(), k, s, p, ceil, cip, div)};
}

std::vector<int64_t> output_size(const Call& c, size_t r) {
  // output_size entries may be None (keep that input dim): encoded as -1 by the loader.
  auto o = c.ints("output_size", r, 1);
  at::Tensor x = c.x();
  for (size_t i = 0; i < o.size(); ++i)
    if (o[i] < 0) o[i] = x.size(x.dim() - static_cast<int64_t>(r) + static_cast<int64_t>(i));
  return o;
}

Out adaptive_avg_pool(const Call& c) {
  size_t r = static_cast<size_t>(rank_of(c.op()));
  auto o = output_size(c, r);
  if (r == 1) return {at::adaptive_avg_pool1d(c.x(), o)};
  if (r == 2) return {at::adaptive_avg_pool2d(c.x(), o)};
  return {at::adaptive_avg_pool3d(c.x(), o)};
}

Out adaptive_max_pool(const Call& c) {
  size_t r = static_cast<size_t>(rank_of(c.op()));
  auto o = output_size(c, r);
  auto res = r == 1 ? at::adaptive_max_pool1d(c.x(), o)
             : r == 2 ? at::adaptive_max_pool2d(c.x(), o)
                      : at::adaptive_max_pool3d(c.x(), o);
  if (c.a().get_bool("return_indices", false))
    return {c10::ivalue::Tuple::create({std::get<0>(res), std::get<1>(res)})};
  return {std::get<0>(res)};
}

Out constant_pad(const Call& c) {
  // An int padding pads every side of the last `rank` dims equally.
  auto pad = c.a().get_ints("padding");
  if (pad.size() == 1) pad.assign(static_cast<size_t>(2 * rank_of(c.op())), pad[0]);
  return {at::constant_pad_nd(c.x(), pad, c.a().get_float("value", 0.0))};
}

Out upsample(const Call& c) {
  at::Tensor x = c.x();
  int64_t r = x.dim() - 2;
  std::string mode = c.a().get_str("mode", "nearest");
  c10::optional<at::IntArrayRef> size;
  std::vector<int64_t> size_v = c.a().get_ints("size", {});
  if (!size_v.empty()) {
    if (size_v.size() == 1) size_v.assign(static_cast<size_t>(r), size_v[0]);
    size = size_v;
  }
  c10::optional<at::ArrayRef<double>> scales;
  std::vector<double> scale_v;
  if (const AttrValue* v = c.a().find("scale_factor")) {
    if (const auto* d = std::get_if<double>(v)) scale_v.assign(static_cast<size_t>(r), *d);
    if (const auto* i = std::get_if<int64_t>(v)) scale_v.assign(static_cast<size_t>(r), double(*i));
    if (const auto* l = std::get_if<std::vector<double>>(v)) scale_v = *l;
  }
  if (!scale_v.empty()) scales = scale_v;
  bool align = c.a().get_bool("align_corners", false);
  if (mode == "nearest") {
    if (r == 1) return {at::upsample_nearest1d(x, size, scales)};
    if (r == 2) return {at::upsample_nearest2d(x, size, scales)};
    return {at::upsample_nearest3d(x, size, scales)};
  }
  if (mode == "linear") return {at::upsample_linear1d(x, size, align, scales)};
  if (mode == "bilinear") return {at::upsample_bilinear2d(x, size, align, scales)};
  if (mode == "bicubic") return {at::upsample_bicubic2d(x, size, align, scales)};
  if (mode == "trilinear") return {at::upsample_trilinear3d(x, size, align, scales)};
  throw Error(ExitCode::Unsupported, "nn.Upsample mode '" + mode + "' is not supported by the interpreter");
}

// nn.LSTM / nn.GRU: flat weights in PyTorch's order; zero initial state when not given.
Out rnn(const Call& c, bool lstm) {
  const Attrs& a = c.a();
  int64_t layers = a.get_int("num_layers", 1);
  bool bidir = a.get_bool("bidirectional", false);
  bool bias = a.get_bool("bias", true);
  bool batch_first = a.get_bool("batch_first", false);
  int64_t hidden = a.get_int("hidden_size");
  int64_t proj = a.get_int("proj_size", 0);
  std::vector<at::Tensor> params;
  for (int64_t l = 0; l < layers; ++l)
    for (int d = 0; d < (bidir ? 2 : 1); ++d) {
      std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      params.push_back(c.w(("weight_ih" + sfx).c_str()));
      params.push_back(c.w(("weight_hh" + sfx).c_str()));
      if (bias) {
        params.push_back(c.w(("bias_ih" + sfx).c_str()));
        params.push_back(c.w(("bias_hh" + sfx).c_str()));
      }
      if (proj > 0) params.push_back(c.w(("weight_hr" + sfx).c_str()));
    }
  at::Tensor x = c.x();
  bool batched = x.dim() == 3;
  if (!batched) x = x.unsqueeze(batch_first ? 0 : 1);
  int64_t batch = x.size(batch_first ? 0 : 1);
  int64_t dirs = bidir ? 2 : 1;
  auto opts = x.options();
  if (lstm) {
    at::Tensor h0, c0;
    if (c.in.size() > 1 && !c.in[1].isNone()) {
      const auto& hc = c.in[1].toTupleRef().elements();
      h0 = hc.at(0).toTensor();
      c0 = hc.at(1).toTensor();
      if (!batched) {
        h0 = h0.unsqueeze(1);
        c0 = c0.unsqueeze(1);
      }
    } else {
      h0 = at::zeros({layers * dirs, batch, proj > 0 ? proj : hidden}, opts);
      c0 = at::zeros({layers * dirs, batch, hidden}, opts);
    }
    auto res = at::lstm(x, {h0, c0}, params, bias, layers, 0.0, false, bidir, batch_first);
    at::Tensor out = std::get<0>(res), hn = std::get<1>(res), cn = std::get<2>(res);
    if (!batched) {
      out = out.squeeze(batch_first ? 0 : 1);
      hn = hn.squeeze(1);
      cn = cn.squeeze(1);
    }
    return {c10::ivalue::Tuple::create({out, c10::ivalue::Tuple::create({hn, cn})})};
  }
  at::Tensor h0;
  if (c.in.size() > 1 && !c.in[1].isNone()) {
    h0 = c.in[1].toTensor();
    if (!batched) h0 = h0.unsqueeze(1);
  } else {
    h0 = at::zeros({layers * dirs, batch, hidden}, opts);
  }
  auto res = at::gru(x, h0, params, bias, layers, 0.0, false, bidir, batch_first);
  at::Tensor out = std::get<0>(res), hn = std::get<1>(res);
  if (!batched) {
    out = out.squeeze(batch_first ? 0 : 1);
    hn = hn.squeeze(1);
  }
  return {c10::ivalue::Tuple::create({out, hn})};
}
// nn.MultiheadAttention (eval): the fused kernel computes exactly what the module's forward does
// for packed in-projection weights; inputs are (query, key, value[, key_padding_mask,
// need_weights[, attn_mask, average_attn_weights]]) as in the module's forward signature.
Out multihead_attention(const Call& c) {
  const Attrs& a = c.a();
  int64_t e = a.get_int("embed_dim");
  if (a.get_bool("add_bias_kv", false) || a.get_bool("add_zero_attn", false) ||
      a.get_int("kdim", e) != e || a.get_int("vdim", e) != e || c.w("in_proj_weight").numel() == 0)
    throw Error(ExitCode::Unsupported,
                "the interpreter runs nn.MultiheadAttention only with packed q/k/v projections "
                "(no add_bias_kv, add_zero_attn or kdim/vdim != embed_dim): " + c.n.module());
  auto arg = [&](size_t i) -> c10::IValue { return i < c.in.size() ? c.in[i] : c10::IValue(); };
  bool need_weights = arg(4).isNone() ? true : arg(4).toBool();
  bool average = arg(6).isNone() ? true : arg(6).toBool();
  if (!arg(5).isNone())
    throw Error(ExitCode::Unsupported, "the interpreter does not run nn.MultiheadAttention with an "
                                       "attn_mask: " + c.n.module());
  c10::optional<at::Tensor> mask;
  c10::optional<int64_t> mask_type;
  if (!arg(3).isNone()) {
    mask = arg(3).toTensor();
    mask_type = 1;  // key padding mask
  }
  bool batch_first = a.get_bool("batch_first", false);
  at::Tensor q = c.x(0), k = c.x(1), v = c.x(2);
  bool batched = q.dim() == 3;
  if (!batched) {
    q = q.unsqueeze(0);
    k = k.unsqueeze(0);
    v = v.unsqueeze(0);
  } else if (!batch_first) {
    q = q.transpose(0, 1);
    k = k.transpose(0, 1);
    v = v.transpose(0, 1);
  }
  auto res = at::_native_multi_head_attention(q, k, v, e, a.get_int("num_heads"), c.w("in_proj_weight"),
                                              c.w("in_proj_bias"), c.w("out_proj.weight"),
                                              c.w("out_proj.bias"), mask, need_weights, average,
                                              mask_type);
  at::Tensor out = std::get<0>(res);
  if (!batched)
    out = out.squeeze(0);
  else if (!batch_first)
    out = out.transpose(0, 1);
  c10::IValue weights;
  if (need_weights) {
    at::Tensor w = std::get<1>(res);
    weights = batched ? w : w.squeeze(0);
  }
  return {c10::ivalue::Tuple::create({out, weights})};
}

Out lstm(const Call& c) { return rnn(c, true); }
Out gru(const Call& c) { return rnn(c, false); }

// torch.ao.nn.quantized.FloatFunctional methods (float mode: plain arithmetic; the module's
// activation_post_process is the identity until prepare). Inputs are the method's arguments.
Out ff_add(const Call& c) { return {at::add(c.x(0), c.x(1))}; }
Out ff_add_scalar(const Call& c) { return {at::add(c.x(0), c.in.at(1).toScalar())}; }
Out ff_mul(const Call& c) { return {at::mul(c.x(0), c.x(1))}; }
Out ff_mul_scalar(const Call& c) { return {at::mul(c.x(0), c.in.at(1).toScalar())}; }
Out ff_cat(const Call& c) {
  int64_t dim = c.in.size() > 1 && !c.in[1].isNone() ? c.in[1].toInt() : 0;
  return {at::cat(c.in.at(0).toTensorVector(), dim)};
}
Out ff_add_relu(const Call& c) { return {at::relu(at::add(c.x(0), c.x(1)))}; }

const std::unordered_map<std::string, Lowering>& lowerings() {
  static const std::unordered_map<std::string, Lowering> table = {
      {"nn.Conv1d", conv},           {"nn.Conv2d", conv},
      {"nn.Conv3d", conv},           {"nn.ConvTranspose1d", conv_transpose},
      {"nn.ConvTranspose2d", conv_transpose}, {"nn.ConvTranspose3d", conv_transpose},
      {"nn.Linear", linear},         {"nn.BatchNorm1d", batch_norm},
      {"nn.BatchNorm2d", batch_norm}, {"nn.BatchNorm3d", batch_norm},
      {"nn.InstanceNorm1d", instance_norm}, {"nn.InstanceNorm2d", instance_norm},
      {"nn.InstanceNorm3d", instance_norm}, {"nn.LayerNorm", layer_norm}, {"nn.RMSNorm", rms_norm},
      {"nn.TransformerEncoderLayer", transformer_encoder_layer},
      {"nn.GroupNorm", group_norm},  {"nn.Embedding", embedding},
      {"nn.ReLU", relu},             {"nn.ReLU6", relu6},
      {"nn.Hardtanh", hardtanh},     {"nn.LeakyReLU", leaky_relu},
      {"nn.PReLU", prelu},           {"nn.ELU", elu},
      {"nn.GELU", gelu},             {"nn.SiLU", silu},
      {"nn.Hardswish", hardswish},   {"nn.Hardsigmoid", hardsigmoid},
      {"nn.Sigmoid", sigmoid},       {"nn.Tanh", tanh_},
      {"nn.Softmax", softmax},       {"nn.Identity", identity},
      {"nn.Dropout", identity},      {"nn.Dropout2d", identity},
      {"nn.Flatten", flatten},       {"nn.PixelShuffle", pixel_shuffle},
      {"nn.PixelUnshuffle", pixel_unshuffle},
      {"nn.MaxPool1d", max_pool},    {"nn.MaxPool2d", max_pool},
      {"nn.MaxPool3d", max_pool},    {"nn.AvgPool1d", avg_pool},
      {"nn.AvgPool2d", avg_pool},    {"nn.AvgPool3d", avg_pool},
      {"nn.AdaptiveAvgPool1d", adaptive_avg_pool}, {"nn.AdaptiveAvgPool2d", adaptive_avg_pool},
      {"nn.AdaptiveAvgPool3d", adaptive_avg_pool}, {"nn.AdaptiveMaxPool1d", adaptive_max_pool},
      {"nn.AdaptiveMaxPool2d", adaptive_max_pool}, {"nn.AdaptiveMaxPool3d", adaptive_max_pool},
      {"nn.ZeroPad2d", constant_pad}, {"nn.ConstantPad1d", constant_pad},
      {"nn.ConstantPad2d", constant_pad}, {"nn.ConstantPad3d", constant_pad},
      {"nn.Upsample", upsample},     {"nn.LSTM", lstm},
      {"nn.GRU", gru},               {"nn.MultiheadAttention", multihead_attention},
      {"FloatFunctional.add", ff_add}, {"FloatFunctional.add_scalar", ff_add_scalar},
      {"FloatFunctional.mul", ff_mul}, {"FloatFunctional.mul_scalar", ff_mul_scalar},
      {"FloatFunctional.cat", ff_cat}, {"FloatFunctional.add_relu", ff_add_relu},
  };
  return table;
}

}  // namespace

namespace {

// Composite modules (nni.ConvReLU2d, nni.ConvBnReLU2d, ...): the parts in order, each with its
// own attributes and weights; ConvBn runs in eval semantics (conv, then BN with running stats).
Out run_composite(const Node& n, const WeightStore& weights, const std::vector<c10::IValue>& inputs,
                  const std::vector<CompositePart>& parts) {
  std::vector<c10::IValue> cur = inputs;
  for (size_t i = 0; i < parts.size(); ++i) {
    auto it = lowerings().find(parts[i].op);
    if (it == lowerings().end())
      throw Error(ExitCode::Internal, "composite " + n.op() + " has a part without lowering: " + parts[i].op);
    Attrs attrs = composite_part_attrs(n, i);
    Call c{n, weights, cur, &parts[i].op, &attrs, composite_weight_key(i, "")};
    cur = it->second(c);
  }
  return cur;
}

bool is_stub(const std::string& op) { return op == "quant.QuantStub" || op == "quant.DeQuantStub"; }

}  // namespace

bool has_module_lowering(const std::string& op) {
  return lowerings().count(op) != 0 || composite_parts(op) != nullptr || is_stub(op);
}

std::vector<c10::IValue> run_module_op(const Node& n, const WeightStore& weights,
                                       const std::vector<c10::IValue>& inputs) {
  // Quant/DeQuant stubs are identities until torch.ao.quantization.convert swaps them.
  if (is_stub(n.op())) return {inputs.at(0)};
  if (const auto* parts = composite_parts(n.op())) return run_composite(n, weights, inputs, *parts);
  auto it = lowerings().find(n.op());
  if (it == lowerings().end())
    throw Error(ExitCode::Unsupported, "the interpreter has no lowering for module op " + n.op() +
                                           " (" + n.module() + ")");
  return it->second(Call{n, weights, inputs, nullptr, nullptr, {}});
}

}  // namespace tt
