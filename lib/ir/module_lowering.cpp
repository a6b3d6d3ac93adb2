// Module lowering (Note [Module lowering] in module_lowering.h): one function per module family,
// each building the module's eval-mode computation as IR, registered in lowerings() below.
#include "ir/module_lowering.h"

#include "ir/quant.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <unordered_map>

namespace tt {
namespace {

// A lowering that cannot express the node's attributes or inputs; lower_module reports `why`.
struct Refuse {
  std::string why;
};

using Ints = std::vector<int64_t>;

// Builds the lowered graph: constants, weight reads, ATen calls and control flow, appended to
// the current block. One part (of a composite module) at a time: op(), a() and w() refer to it.
class Builder {
 public:
  Builder(Graph& g, const Node& n) : g_(g), n_(n), blk_(g.block()) {}

  // ---- the part being lowered
  void set_part(const std::string& op, const Attrs& attrs, std::string weight_prefix,
                std::vector<Value*> inputs, bool first) {
    op_ = &op;
    attrs_ = &attrs;
    prefix_ = std::move(weight_prefix);
    in_ = std::move(inputs);
    first_ = first;
  }
  const std::string& op() const { return *op_; }
  const Attrs& a() const { return *attrs_; }
  size_t num_inputs() const { return in_.size(); }
  Value* x(size_t i = 0) const {
    if (i >= in_.size()) throw Refuse{"a module call needs an input"};
    return in_[i];
  }
  // The constant the caller passes as input `i` (the first part only; nullptr otherwise).
  const AttrValue* const_input(size_t i) const {
    return first_ && i < n_.num_inputs() ? n_.input(i)->constant() : nullptr;
  }
  // True when input `i` is absent or the constant None.
  bool none_input(size_t i) const {
    if (i >= in_.size()) return true;
    const AttrValue* c = const_input(i);
    return c && std::holds_alternative<NoneAttr>(*c);
  }
  // Attribute list `key` with `rank` entries: absent -> `def` each, one entry -> repeated.
  Ints ints(const char* key, size_t rank, int64_t def) const {
    Ints v = a().get_ints(key, {});
    if (v.empty()) v.assign(rank, def);
    if (v.size() == 1 && rank > 1) v.assign(rank, v[0]);
    return v;
  }

  // ---- values
  Value* constant(AttrValue v, Type t) {
    Node* c = g_.create("prim.Constant");
    c->attrs().set("value", std::move(v));
    Value* out = c->add_output(std::move(t));
    blk_->append(c);
    return out;
  }
  Value* i(int64_t v) { return constant(v, Type::of(Type::Kind::Int)); }
  Value* f(double v) { return constant(v, Type::of(Type::Kind::Float)); }
  Value* b(bool v) { return constant(v, Type::of(Type::Kind::Bool)); }
  Value* s(const std::string& v) { return constant(v, Type::of(Type::Kind::Str)); }
  Value* none() { return constant(NoneAttr{}, Type::of(Type::Kind::None)); }
  Value* ints(const Ints& v) { return constant(v, Type::list(Type::of(Type::Kind::Int))); }
  Value* floats(const std::vector<double>& v) {
    return constant(v, Type::list(Type::of(Type::Kind::Float)));
  }

  // Whether the part has weight `key`.
  bool has_w(const std::string& key) const { return !n_.weight(prefix_ + key).empty(); }
  // The part's weight `key` (a read of the parent graph's weight), or None when it has none.
  Value* w(const std::string& key) {
    std::string name = n_.weight(prefix_ + key);
    if (name.empty()) return none();
    Node* r = g_.create("prim.GetAttr");
    r->set_weight("value", name);
    Value* out = r->add_output(Type::tensor(), "w");
    blk_->append(r);
    return out;
  }

  std::vector<Value*> call_n(const std::string& op, const std::vector<Value*>& inputs,
                             const std::vector<Type>& types, const std::string& hint = "") {
    Node* c = g_.create(op, inputs);
    std::vector<Value*> outs;
    for (const Type& t : types) outs.push_back(c->add_output(t, hint));
    blk_->append(c);
    return outs;
  }
  Value* call(const std::string& op, const std::vector<Value*>& inputs, Type t = Type::tensor(),
              const std::string& hint = "") {
    return call_n(op, inputs, {std::move(t)}, hint)[0];
  }
  Value* list(const std::vector<Value*>& items, Type elem) {
    return call("prim.ListConstruct", items, Type::list(std::move(elem)));
  }
  Value* tuple(const std::vector<Value*>& items) {
    std::vector<Type> types;
    for (Value* v : items) types.push_back(v->type());
    return call("prim.TupleConstruct", items, Type::tuple(std::move(types)));
  }
  Value* dim_is(Value* t, int64_t rank) {
    Value* d = call("aten::dim", {t}, Type::of(Type::Kind::Int), "rank");
    return call("operator.eq", {d, i(rank)}, Type::of(Type::Kind::Bool), "batched");
  }

  // if cond: then_() else: else_(); each branch returns its values (same count and types).
  using Branch = std::function<std::vector<Value*>()>;
  std::vector<Value*> if_(Value* cond, const Branch& then_, const Branch& else_) {
    Node* node = g_.create("prim.If", {cond});
    Block* saved = blk_;
    std::vector<Value*> outs;
    for (const Branch* branch : {&then_, &else_}) {
      blk_ = node->add_block();
      std::vector<Value*> vals = (*branch)();
      for (Value* v : vals) blk_->add_output(v);
      if (outs.empty())
        for (Value* v : vals) outs.push_back(node->add_output(v->type(), v->name()));
    }
    blk_ = saved;
    blk_->append(node);
    return outs;
  }

 private:
  Graph& g_;
  const Node& n_;
  Block* blk_;
  const std::string* op_ = nullptr;
  const Attrs* attrs_ = nullptr;
  std::string prefix_;
  std::vector<Value*> in_;
  bool first_ = true;
};

using Lowering = Value* (*)(Builder&);

// "nn.Conv2d" -> 2, "nn.BatchNorm1d" -> 1; 0 when the name has no NNd suffix.
size_t rank_of(const std::string& op) {
  if (op.size() >= 2 && op.back() == 'd' &&
      std::isdigit(static_cast<unsigned char>(op[op.size() - 2])))
    return static_cast<size_t>(op[op.size() - 2] - '0');
  return 0;
}

std::string nd(const char* stem, size_t r) { return std::string(stem) + std::to_string(r) + "d"; }

// ---- convolution, linear, normalisation, embedding -------------------------------------------

// The input of a convolution of rank `r` and its padding: non-zero padding modes pad explicitly,
// then convolve with padding 0 (as torch.nn and torch.ao.nn.quantized do).
std::pair<Value*, Ints> padded_input(Builder& l, size_t r) {
  std::string mode = l.a().get_str("padding_mode", "zeros");
  Value* x = l.x();
  Ints pad = l.ints("padding", r, 0);
  if (mode != "zeros") {
    Ints p;
    for (size_t k = r; k-- > 0;) {
      p.push_back(pad[k]);
      p.push_back(pad[k]);
    }
    x = l.call("aten::pad", {x, l.ints(p), l.s(mode), l.none()}, Type::tensor(), "padded");
    pad.assign(r, 0);
  }
  return {x, pad};
}

// aten::conv<r>d, the call torch.nn.Conv<r>d's forward makes (not the general aten::convolution):
// LibTorch's frozen-graph folds (BatchNorm, add, mul into the conv), which
// --optimize-for-inference runs on NAME.pt, match only these (Note [Optimizing NAME.pt for
// inference] in lib/loaders/torchscript_save.cpp).
Value* conv(Builder& l) {
  size_t r = rank_of(l.op());
  auto [x, pad] = padded_input(l, r);
  return l.call(nd("aten::conv", r),
                {x, l.w("weight"), l.w("bias"), l.ints(l.ints("stride", r, 1)), l.ints(pad),
                 l.ints(l.ints("dilation", r, 1)), l.i(l.a().get_int("groups", 1))});
}

Value* conv_transpose(Builder& l) {
  size_t r = rank_of(l.op());
  return l.call("aten::convolution",
                {l.x(), l.w("weight"), l.w("bias"), l.ints(l.ints("stride", r, 1)),
                 l.ints(l.ints("padding", r, 0)), l.ints(l.ints("dilation", r, 1)), l.b(true),
                 l.ints(l.ints("output_padding", r, 0)), l.i(l.a().get_int("groups", 1))});
}

Value* linear(Builder& l) { return l.call("aten::linear", {l.x(), l.w("weight"), l.w("bias")}); }

// BatchNorm / InstanceNorm: without running statistics they always normalise with the batch's.
Value* batch_or_instance_norm(Builder& l, const char* aten) {
  bool batch_stats = l.a().get_bool("training", false) || !l.has_w("running_mean");
  return l.call(aten, {l.x(), l.w("weight"), l.w("bias"), l.w("running_mean"), l.w("running_var"),
                       l.b(batch_stats), l.f(l.a().get_float("momentum", 0.1)),
                       l.f(l.a().get_float("eps", 1e-5)), l.b(false)});
}
Value* batch_norm(Builder& l) { return batch_or_instance_norm(l, "aten::batch_norm"); }
Value* instance_norm(Builder& l) { return batch_or_instance_norm(l, "aten::instance_norm"); }

Value* layer_norm(Builder& l) {
  return l.call("aten::layer_norm",
                {l.x(), l.ints(l.a().get_ints("normalized_shape")), l.w("weight"), l.w("bias"),
                 l.f(l.a().get_float("eps", 1e-5))});
}

Value* rms_norm(Builder& l) {
  // eps=None: the dtype's machine epsilon, decided inside ATen.
  const AttrValue* e = l.a().find("eps");
  Value* eps = e && !std::holds_alternative<NoneAttr>(*e) ? l.f(l.a().get_float("eps")) : l.none();
  return l.call("aten::rms_norm",
                {l.x(), l.ints(l.a().get_ints("normalized_shape")), l.w("weight"), eps});
}

Value* group_norm(Builder& l) {
  return l.call("aten::group_norm", {l.x(), l.i(l.a().get_int("num_groups")), l.w("weight"),
                                     l.w("bias"), l.f(l.a().get_float("eps", 1e-5))});
}

Value* embedding(Builder& l) {
  return l.call("aten::embedding", {l.w("weight"), l.x(), l.i(l.a().get_int("padding_idx", -1)),
                                    l.b(false), l.b(false)});
}

// nn.EmbeddingBag, as F.embedding_bag computes it: a 2-d input (offsets None) is one bag per
// row, offsets 0, L, 2L, ...; the first of aten::embedding_bag's four results.
Value* embedding_bag(Builder& l) {
  static const std::map<std::string, int64_t> modes = {{"sum", 0}, {"mean", 1}, {"max", 2}};
  const Attrs& a = l.a();
  auto mode = modes.find(a.get_str("mode", "mean"));
  if (mode == modes.end()) throw Refuse{"nn.EmbeddingBag mode '" + a.get_str("mode", "") + "'"};
  Value* x = l.x();
  Value* offsets = l.none_input(1) ? nullptr : l.x(1);
  Value* weights = l.none_input(2) ? l.none() : l.x(2);
  if (!offsets) {
    const Type int_t = Type::of(Type::Kind::Int);
    Value* n = l.call("aten::numel", {x}, int_t, "n");
    Value* len = l.call("aten::size.int", {x, l.i(1)}, int_t, "bag_size");
    offsets =
        l.call("aten::arange.start_step", {l.i(0), n, len, l.none(), l.none(), l.none(), l.none()},
               Type::tensor(), "offsets");
    x = l.call("aten::reshape", {x, l.ints({-1})});
    if (!l.none_input(2)) weights = l.call("aten::reshape", {weights, l.ints({-1})});
  }
  Value* pad = a.has("padding_idx") && std::holds_alternative<int64_t>(a.at("padding_idx"))
                   ? l.i(a.get_int("padding_idx"))
                   : l.none();
  const Type t = Type::tensor();
  return l.call_n("aten::embedding_bag.padding_idx",
                  {l.w("weight"), x, offsets, l.b(false), l.i(mode->second), l.b(false), weights,
                   l.b(a.get_bool("include_last_offset", false)), pad},
                  {t, t, t, t}, "bag")[0];
}

// nn.TransformerEncoderLayer (eval, no masks): the fused kernel its fast path runs, on (batch,
// seq, feature); a sequence-first input is transposed around it. The kernel itself refuses an
// input that is not 3-d.
Value* transformer_encoder_layer(Builder& l) {
  const Attrs& a = l.a();
  if (l.num_inputs() > 1) throw Refuse{"nn.TransformerEncoderLayer only without masks"};
  const bool batch_first = a.get_bool("batch_first", false);
  auto transposed = [&](Value* t) { return l.call("aten::transpose.int", {t, l.i(0), l.i(1)}); };
  std::vector<Value*> args = {batch_first ? l.x() : transposed(l.x()), l.i(a.get_int("d_model")),
                              l.i(a.get_int("nhead"))};
  for (size_t k = 0; k < 4; ++k) args.push_back(l.w(kTransformerEncoderWeights[k]));
  args.push_back(l.b(a.get_str("activation", "relu") == "gelu"));
  args.push_back(l.b(a.get_bool("norm_first", false)));
  args.push_back(l.f(a.get_float("layer_norm_eps", 1e-5)));
  for (size_t k = 4; k < 12; ++k) args.push_back(l.w(kTransformerEncoderWeights[k]));
  args.push_back(l.none());
  args.push_back(l.none());
  Value* y = l.call("aten::_transformer_encoder_layer_fwd", args);
  return batch_first ? y : transposed(y);
}

// ---- activations and shape modules ---------------------------------------------------------

Value* unary(Builder& l, const char* aten) { return l.call(aten, {l.x()}); }
Value* relu(Builder& l) { return unary(l, "aten::relu"); }
Value* silu(Builder& l) { return unary(l, "aten::silu"); }
Value* hardswish(Builder& l) { return unary(l, "aten::hardswish"); }
Value* hardsigmoid(Builder& l) { return unary(l, "aten::hardsigmoid"); }
Value* sigmoid(Builder& l) { return unary(l, "aten::sigmoid"); }
Value* tanh_(Builder& l) { return unary(l, "aten::tanh"); }
Value* relu6(Builder& l) { return l.call("aten::hardtanh", {l.x(), l.f(0.0), l.f(6.0)}); }
Value* hardtanh(Builder& l) {
  return l.call("aten::hardtanh", {l.x(), l.f(l.a().get_float("min_val", -1.0)),
                                   l.f(l.a().get_float("max_val", 1.0))});
}
Value* leaky_relu(Builder& l) {
  return l.call("aten::leaky_relu", {l.x(), l.f(l.a().get_float("negative_slope", 0.01))});
}
Value* prelu(Builder& l) { return l.call("aten::prelu", {l.x(), l.w("weight")}); }
Value* elu(Builder& l) { return l.call("aten::elu", {l.x(), l.f(l.a().get_float("alpha", 1.0))}); }
Value* gelu(Builder& l) {
  return l.call("aten::gelu", {l.x(), l.s(l.a().get_str("approximate", "none"))});
}
Value* softmax(Builder& l) {
  const AttrValue* dim = l.a().find("dim");
  if (!dim || !std::holds_alternative<int64_t>(*dim))
    throw Refuse{"nn.Softmax without dim (implicit dim)"};
  return l.call("aten::softmax.int", {l.x(), l.i(std::get<int64_t>(*dim))});
}
// Eval-mode identities (nn.Identity, dropout) and the quantization stubs before convert.
Value* identity(Builder& l) { return l.x(); }
Value* flatten(Builder& l) {
  return l.call("aten::flatten.using_ints",
                {l.x(), l.i(l.a().get_int("start_dim", 1)), l.i(l.a().get_int("end_dim", -1))});
}
Value* pixel_shuffle(Builder& l) {
  return l.call("aten::pixel_shuffle", {l.x(), l.i(l.a().get_int("upscale_factor"))});
}
Value* pixel_unshuffle(Builder& l) {
  return l.call("aten::pixel_unshuffle", {l.x(), l.i(l.a().get_int("downscale_factor"))});
}

// ---- pooling, padding, upsampling ----------------------------------------------------------

Value* max_pool(Builder& l) {
  size_t r = rank_of(l.op());
  Ints k = l.ints("kernel_size", r, 1);
  Ints s = l.a().get_ints("stride", {}).empty() ? k : l.ints("stride", r, 1);
  return l.call(nd("aten::max_pool", r),
                {l.x(), l.ints(k), l.ints(s), l.ints(l.ints("padding", r, 0)),
                 l.ints(l.ints("dilation", r, 1)), l.b(l.a().get_bool("ceil_mode", false))});
}

Value* avg_pool(Builder& l) {
  size_t r = rank_of(l.op());
  Ints k = l.ints("kernel_size", r, 1);
  Ints s = l.a().get_ints("stride", {}).empty() ? k : l.ints("stride", r, 1);
  std::vector<Value*> args = {l.x(),
                              l.ints(k),
                              l.ints(s),
                              l.ints(l.ints("padding", r, 0)),
                              l.b(l.a().get_bool("ceil_mode", false)),
                              l.b(l.a().get_bool("count_include_pad", true))};
  if (r > 1) {  // avg_pool1d has no divisor_override
    const AttrValue* v = l.a().find("divisor_override");
    const auto* div = v ? std::get_if<int64_t>(v) : nullptr;
    args.push_back(div ? l.i(*div) : l.none());
  }
  return l.call(nd("aten::avg_pool", r), args);
}

// output_size entries may be None (keep that input dim), encoded as -1 by the loader: read from
// the input at run time.
Value* output_size(Builder& l, size_t r) {
  Ints o = l.ints("output_size", r, 1);
  bool all_known = std::all_of(o.begin(), o.end(), [](int64_t d) { return d >= 0; });
  if (all_known) return l.ints(o);
  std::vector<Value*> items;
  for (size_t k = 0; k < o.size(); ++k)
    items.push_back(o[k] >= 0
                        ? l.i(o[k])
                        : l.call("aten::size.int",
                                 {l.x(), l.i(static_cast<int64_t>(k) - static_cast<int64_t>(r))},
                                 Type::of(Type::Kind::Int), "size"));
  return l.list(items, Type::of(Type::Kind::Int));
}

Value* adaptive_avg_pool(Builder& l) {
  size_t r = rank_of(l.op());
  return l.call(nd("aten::adaptive_avg_pool", r), {l.x(), output_size(l, r)});
}

Value* adaptive_max_pool(Builder& l) {
  size_t r = rank_of(l.op());
  auto res = l.call_n(nd("aten::adaptive_max_pool", r), {l.x(), output_size(l, r)},
                      {Type::tensor(), Type::tensor(DType::I64)});
  return l.a().get_bool("return_indices", false) ? l.tuple(res) : res[0];
}

Value* constant_pad(Builder& l) {
  // An int padding pads every side of the last `rank` dims equally.
  Ints pad = l.a().get_ints("padding");
  if (pad.size() == 1) pad.assign(2 * rank_of(l.op()), pad[0]);
  return l.call("aten::constant_pad_nd", {l.x(), l.ints(pad), l.f(l.a().get_float("value", 0.0))});
}

// nn.Upsample is F.interpolate with the module's size/scale_factor/mode/align_corners: the rank
// of the input, known at run time, picks the kernel.
Value* upsample(Builder& l) {
  const Attrs& a = l.a();
  Value* size = nullptr;
  if (const AttrValue* v = a.find("size")) {
    if (const auto* k = std::get_if<int64_t>(v)) size = l.i(*k);
    if (const auto* k = std::get_if<Ints>(v)) size = k->size() == 1 ? l.i((*k)[0]) : l.ints(*k);
  }
  Value* scale = nullptr;
  if (const AttrValue* v = a.find("scale_factor")) {
    if (const auto* d = std::get_if<double>(v)) scale = l.f(*d);
    if (const auto* k = std::get_if<int64_t>(v)) scale = l.f(static_cast<double>(*k));
    if (const auto* d = std::get_if<std::vector<double>>(v))
      scale = d->size() == 1 ? l.f((*d)[0]) : l.floats(*d);
  }
  std::string mode = a.get_str("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear" && mode != "bicubic" &&
      mode != "trilinear")
    throw Refuse{"nn.Upsample mode '" + mode + "'"};
  bool corners = mode != "nearest";
  return l.call("F.interpolate",
                {l.x(), size ? size : l.none(), scale ? scale : l.none(), l.s(mode),
                 corners ? l.b(a.get_bool("align_corners", false)) : l.none()});
}

// ---- recurrent layers and attention --------------------------------------------------------

// nn.LSTM / nn.GRU / nn.RNN: flat weights in PyTorch's order; zero initial state when none is
// given; an unbatched input gets a batch dim of 1 (decided at run time, like the module).
// nnqd.LSTM / nnqd.GRU (`dynamic`, Note [Dynamic quantized LSTM and GRU] in the TorchScript
// lifter): the same, with one packed cell per layer and direction in place of the flat weights.
Value* rnn(Builder& l, bool lstm, const char* aten_op, bool dynamic = false) {
  const Attrs& a = l.a();
  int64_t layers = a.get_int("num_layers", 1), hidden = a.get_int("hidden_size"),
          proj = a.get_int("proj_size", 0);
  bool bidir = a.get_bool("bidirectional", false), bias = a.get_bool("bias", true);
  bool bf = a.get_bool("batch_first", false);
  std::vector<Value*> params;
  for (int64_t k = 0; k < layers; ++k)
    for (int d = 0; d < (bidir ? 2 : 1); ++d) {
      std::string sfx = "_l" + std::to_string(k) + (d ? "_reverse" : "");
      if (dynamic) {
        auto packed = [&](const char* part) {
          return l.call(
              "quantized::linear_prepack",
              {l.w(std::string("weight_") + part + sfx), l.w(std::string("bias_") + part + sfx)},
              Type::any(), "packed");
        };
        Value* ih = packed("ih");
        Value* hh = packed("hh");
        params.push_back(l.call("quantized::make_quantized_cell_params_dynamic",
                                {ih, hh, l.w("bias_ih" + sfx), l.w("bias_hh" + sfx), l.b(true)},
                                Type::any(), "cell"));
        continue;
      }
      params.push_back(l.w("weight_ih" + sfx));
      params.push_back(l.w("weight_hh" + sfx));
      if (bias) {
        params.push_back(l.w("bias_ih" + sfx));
        params.push_back(l.w("bias_hh" + sfx));
      }
      if (proj > 0) params.push_back(l.w("weight_hr" + sfx));
    }
  const int64_t bd = bf ? 0 : 1;  // the batch dim of the input
  Value* batched = l.dim_is(l.x(), 3);
  auto unsqueezed = [&](Value* t, int64_t d) { return l.call("aten::unsqueeze", {t, l.i(d)}); };
  auto squeezed = [&](Value* t, int64_t d) { return l.call("aten::squeeze.dim", {t, l.i(d)}); };
  Value* x = l.if_(
      batched, [&] { return std::vector<Value*>{l.x()}; },
      [&] { return std::vector<Value*>{unsqueezed(l.x(), bd)}; })[0];
  std::vector<Value*> state;  // h0 (and c0)
  if (!l.none_input(1)) {
    std::vector<Value*> given = {l.x(1)};
    if (lstm)
      given = l.call_n("prim.TupleUnpack", {l.x(1)}, {Type::tensor(), Type::tensor()}, "h0");
    state = l.if_(
        batched, [&] { return given; },
        [&] {
          std::vector<Value*> out;
          for (Value* t : given) out.push_back(unsqueezed(t, 1));
          return out;
        });
  } else {
    Value* states = l.i(layers * (bidir ? 2 : 1));
    Value* batch = l.call("aten::size.int", {x, l.i(bd)}, Type::of(Type::Kind::Int), "batch");
    auto zeros = [&](int64_t features) {
      return l.call("aten::new_zeros",
                    {x, l.list({states, batch, l.i(features)}, Type::of(Type::Kind::Int))},
                    Type::tensor(), "h0");
    };
    state.push_back(zeros(lstm && proj > 0 ? proj : hidden));
    if (lstm) state.push_back(zeros(hidden));
  }
  std::vector<Value*> tail = {l.list(params, dynamic ? Type::any() : Type::tensor()),
                              l.b(bias),
                              l.i(layers),
                              l.f(0.0),
                              l.b(false),
                              l.b(bidir),
                              l.b(bf)};
  if (dynamic && lstm) {  // dtype=torch.qint8, use_dynamic=True
    tail.push_back(l.constant(DType::QI8, Type::of(Type::Kind::ScalarType)));
    tail.push_back(l.b(true));
  }
  std::vector<Value*> args = {x, lstm ? l.list(state, Type::tensor()) : state[0]};
  args.insert(args.end(), tail.begin(), tail.end());
  std::vector<Type> types(lstm ? 3 : 2, Type::tensor());
  std::vector<Value*> res = l.call_n(aten_op, args, types, "rnn");
  res = l.if_(
      batched, [&] { return res; },
      [&] {
        std::vector<Value*> out = {squeezed(res[0], bd)};
        for (size_t k = 1; k < res.size(); ++k) out.push_back(squeezed(res[k], 1));
        return out;
      });
  return lstm ? l.tuple({res[0], l.tuple({res[1], res[2]})}) : l.tuple({res[0], res[1]});
}
Value* lstm(Builder& l) { return rnn(l, true, "aten::lstm.input"); }
Value* gru(Builder& l) { return rnn(l, false, "aten::gru.input"); }
Value* qlstm(Builder& l) { return rnn(l, true, "aten::quantized_lstm.input", true); }
Value* qgru(Builder& l) { return rnn(l, false, "aten::quantized_gru.input", true); }
Value* rnn_plain(Builder& l) {
  std::string f = l.a().get_str("nonlinearity", "tanh");
  if (f != "tanh" && f != "relu") throw Refuse{"nn.RNN nonlinearity '" + f + "'"};
  return rnn(l, false, f == "tanh" ? "aten::rnn_tanh.input" : "aten::rnn_relu.input");
}

// A bool input given as a constant (absent or None: `def`).
bool const_bool_input(const Builder& l, size_t i, bool def, const char* what) {
  if (l.none_input(i)) return def;
  const AttrValue* c = l.const_input(i);
  if (c && std::holds_alternative<bool>(*c)) return std::get<bool>(*c);
  if (c && std::holds_alternative<int64_t>(*c)) return std::get<int64_t>(*c) != 0;
  throw Refuse{std::string("nn.MultiheadAttention's ") + what + " is not a constant"};
}

// nn.MultiheadAttention (eval): the fused kernel computes exactly what the module's forward does
// for packed in-projection weights; inputs are (query, key, value[, key_padding_mask,
// need_weights[, attn_mask, average_attn_weights]]) as in the module's forward signature.
// need_weights must be a constant: it decides whether the second result is None.
Value* multihead_attention(Builder& l) {
  const Attrs& a = l.a();
  int64_t e = a.get_int("embed_dim");
  if (a.get_bool("add_bias_kv", false) || a.get_bool("add_zero_attn", false) ||
      a.get_int("kdim", e) != e || a.get_int("vdim", e) != e || !l.has_w("in_proj_weight"))
    throw Refuse{
        "nn.MultiheadAttention only with packed q/k/v projections (no add_bias_kv, "
        "add_zero_attn or kdim/vdim != embed_dim)"};
  if (l.num_inputs() < 3) throw Refuse{"nn.MultiheadAttention needs query, key and value"};
  if (!l.none_input(5)) throw Refuse{"nn.MultiheadAttention with an attn_mask"};
  bool need_weights = const_bool_input(l, 4, true, "need_weights");
  bool average = const_bool_input(l, 6, true, "average_attn_weights");
  bool batch_first = a.get_bool("batch_first", false);
  Value* batched = l.dim_is(l.x(0), 3);
  auto each = [&](std::vector<Value*> ts, const char* aten, std::vector<int64_t> dims) {
    for (Value*& t : ts) {
      std::vector<Value*> args = {t};
      for (int64_t d : dims) args.push_back(l.i(d));
      t = l.call(aten, args);
    }
    return ts;
  };
  std::vector<Value*> qkv = {l.x(0), l.x(1), l.x(2)};
  qkv = l.if_(
      batched,
      [&] {
        return batch_first ? qkv : each(qkv, "aten::transpose.int", {0, 1});
      },
      [&] { return each(qkv, "aten::unsqueeze", {0}); });
  bool masked = !l.none_input(3);
  auto res = l.call_n(
      "aten::_native_multi_head_attention",
      {qkv[0], qkv[1], qkv[2], l.i(e), l.i(a.get_int("num_heads")), l.w("in_proj_weight"),
       l.w("in_proj_bias"), l.w("out_proj.weight"), l.w("out_proj.bias"),
       masked ? l.x(3) : l.none(), l.b(need_weights), l.b(average), masked ? l.i(1) : l.none()},
      {Type::tensor(), Type::tensor()}, "mha");
  if (!need_weights) res.pop_back();
  res = l.if_(
      batched,
      [&] {
        std::vector<Value*> out = res;
        if (!batch_first) out[0] = each({res[0]}, "aten::transpose.int", {0, 1})[0];
        return out;
      },
      [&] { return each(res, "aten::squeeze.dim", {0}); });
  return l.tuple({res[0], need_weights ? res[1] : l.none()});
}

// ---- torch.ao.nn.quantized.FloatFunctional methods ------------------------------------------
// Float mode: plain arithmetic (the module's activation_post_process is the identity until
// prepare). Inputs are the method's arguments.

Value* ff_add(Builder& l) { return l.call("aten::add.Tensor", {l.x(0), l.x(1)}); }
Value* ff_add_scalar(Builder& l) { return l.call("aten::add.Scalar", {l.x(0), l.x(1)}); }
Value* ff_mul(Builder& l) { return l.call("aten::mul.Tensor", {l.x(0), l.x(1)}); }
Value* ff_mul_scalar(Builder& l) { return l.call("aten::mul.Scalar", {l.x(0), l.x(1)}); }
Value* ff_cat(Builder& l) {
  return l.call("aten::cat", {l.x(0), l.none_input(1) ? l.i(0) : l.x(1)});
}
Value* ff_add_relu(Builder& l) { return l.call("aten::relu", {ff_add(l)}); }

// ---- quantized modules (Note [Quantized modules] in lib/loaders/torchscript/lifter_quantized.cpp)
// What the torch.ao.nn.quantized module's forward calls, with its state: the weight is packed
// again for the engine in use (as the module's set_weight_bias does), scale and zero point are
// read from the module's state where it has them (what load_state_dict sets), else from its
// constructor's attributes.

Value* q_number(Builder& l, const char* key, bool is_float) {
  if (l.has_w(key))
    return l.call("aten::item", {l.w(key)},
                  Type::of(is_float ? Type::Kind::Float : Type::Kind::Int), key);
  return is_float ? l.f(l.a().get_float(key)) : l.i(l.a().get_int(key));
}
Value* q_scale(Builder& l) { return q_number(l, "scale", true); }
Value* q_zero_point(Builder& l) { return q_number(l, "zero_point", false); }

Value* quantize(Builder& l) {
  return l.call("aten::quantize_per_tensor",
                {l.x(), q_scale(l), q_zero_point(l),
                 l.constant(l.a().at("dtype"), Type::of(Type::Kind::ScalarType))});
}
Value* dequantize(Builder& l) { return l.call("aten::dequantize.self", {l.x()}); }

// (Note [Padding modes of quantized convolutions] in the TorchScript lifter.)
Value* qconv(Builder& l) {
  size_t r = rank_of(l.op());
  const std::string mode = l.a().get_str("padding_mode", "zeros");
  if (mode != "zeros" && mode != "reflect")
    throw Refuse{l.op() + " with padding_mode '" + mode + "'"};
  auto [x, padding] = padded_input(l, r);
  std::string base = "quantized::conv" + std::to_string(r) + "d";
  Value* packed =
      l.call(base + "_prepack",
             {l.w("weight"), l.w("bias"), l.ints(l.ints("stride", r, 1)), l.ints(padding),
              l.ints(l.ints("dilation", r, 1)), l.i(l.a().get_int("groups", 1))},
             Type::any(), "packed");
  bool relu = l.op().find("ReLU") != std::string::npos;
  std::string op = base + (relu ? "_relu" : "") + (r == 1 ? "" : ".new");
  return l.call(op, {x, packed, q_scale(l), q_zero_point(l)});
}

Value* qconv_transpose(Builder& l) {
  size_t r = rank_of(l.op());
  if (l.a().get_str("padding_mode", "zeros") != "zeros")
    throw Refuse{l.op() + " with padding_mode other than 'zeros'"};
  std::string base = "quantized::conv_transpose" + std::to_string(r) + "d";
  Value* packed = l.call(base + "_prepack",
                         {l.w("weight"), l.w("bias"), l.ints(l.ints("stride", r, 1)),
                          l.ints(l.ints("padding", r, 0)), l.ints(l.ints("output_padding", r, 0)),
                          l.ints(l.ints("dilation", r, 1)), l.i(l.a().get_int("groups", 1))},
                         Type::any(), "packed");
  return l.call(base, {l.x(), packed, q_scale(l), q_zero_point(l)});
}

// nnq.Embedding / nnq.EmbeddingBag: the 8-bit weight packed as the module packs it, then the
// module's lookup. The eager EmbeddingBag always passes mode 0 (sum) and, unpruned, ignores
// compressed_indices_mapping; its inputs here are (indices, offsets, per_sample_weights).
Value* qembedding(Builder& l) {
  Value* packed =
      l.call("quantized::embedding_bag_prepack", {l.w("weight")}, Type::any(), "packed");
  if (l.op() == "nnq.Embedding")
    return l.call("quantized::embedding_byte", {packed, l.x(), l.b(false)});
  auto opt = [&](size_t i) { return l.none_input(i) ? l.none() : l.x(i); };
  return l.call("quantized::embedding_bag_byte",
                {packed, l.x(), opt(1), l.b(false), l.i(0), l.b(false), opt(2), l.none(),
                 l.b(l.a().get_bool("include_last_offset", false))});
}

Value* qlinear(Builder& l) {
  Value* packed =
      l.call("quantized::linear_prepack", {l.w("weight"), l.w("bias")}, Type::any(), "packed");
  if (l.op() == "nnqd.Linear")
    return l.call("quantized::linear_dynamic", {l.x(), packed, l.b(true)});
  bool relu = l.op() == "nniq.LinearReLU";
  return l.call(relu ? "quantized::linear_relu" : "quantized::linear",
                {l.x(), packed, q_scale(l), q_zero_point(l)});
}

Value* qbatch_norm(Builder& l) {
  size_t r = rank_of(l.op());
  bool relu = l.op().find("ReLU") != std::string::npos;
  return l.call("quantized::batch_norm" + std::to_string(r) + "d" + (relu ? "_relu" : ""),
                {l.x(), l.w("weight"), l.w("bias"), l.w("running_mean"), l.w("running_var"),
                 l.f(l.a().get_float("eps", 1e-5)), q_scale(l), q_zero_point(l)});
}

Value* qhardswish(Builder& l) {
  return l.call("quantized::hardswish", {l.x(), q_scale(l), q_zero_point(l)});
}
Value* qelu(Builder& l) {
  return l.call("quantized::elu",
                {l.x(), q_scale(l), q_zero_point(l), l.f(l.a().get_float("alpha", 1.0))});
}
Value* qleaky_relu(Builder& l) {
  return l.call("quantized::leaky_relu", {l.x(), l.f(l.a().get_float("negative_slope", 0.01)),
                                          l.b(false), q_scale(l), q_zero_point(l)});
}
Value* qsigmoid(Builder& l) {
  return l.call("quantized::sigmoid", {l.x(), l.f(l.a().get_float("output_scale")),
                                       l.i(l.a().get_int("output_zero_point"))});
}
Value* qrelu6(Builder& l) { return l.call("quantized::relu6", {l.x(), l.b(false)}); }
Value* qsoftmax(Builder& l) {
  return l.call("quantized::softmax",
                {l.x(), l.i(l.a().get_int("dim")), q_scale(l), q_zero_point(l)});
}

// QFunctional's methods: inputs are the method's arguments.
Value* qf_binary(Builder& l, const char* op) {
  return l.call(op, {l.x(0), l.x(1), q_scale(l), q_zero_point(l)});
}
Value* qf_add(Builder& l) { return qf_binary(l, "quantized::add"); }
Value* qf_add_relu(Builder& l) { return qf_binary(l, "quantized::add_relu"); }
Value* qf_mul(Builder& l) { return qf_binary(l, "quantized::mul"); }
Value* qf_cat(Builder& l) {
  return l.call("quantized::cat",
                {l.x(0), l.none_input(1) ? l.i(0) : l.x(1), q_scale(l), q_zero_point(l)});
}
Value* qf_add_scalar(Builder& l) { return l.call("quantized::add_scalar", {l.x(0), l.x(1)}); }
Value* qf_mul_scalar(Builder& l) { return l.call("quantized::mul_scalar", {l.x(0), l.x(1)}); }

const std::unordered_map<std::string_view, Lowering>& lowerings() {
  static const std::unordered_map<std::string_view, Lowering> table = {
      {"nn.Conv1d", conv},
      {"nn.Conv2d", conv},
      {"nn.Conv3d", conv},
      {"nn.ConvTranspose1d", conv_transpose},
      {"nn.ConvTranspose2d", conv_transpose},
      {"nn.ConvTranspose3d", conv_transpose},
      {"nn.Linear", linear},
      {"nn.BatchNorm1d", batch_norm},
      {"nn.BatchNorm2d", batch_norm},
      {"nn.BatchNorm3d", batch_norm},
      {"nn.InstanceNorm1d", instance_norm},
      {"nn.InstanceNorm2d", instance_norm},
      {"nn.InstanceNorm3d", instance_norm},
      {"nn.LayerNorm", layer_norm},
      {"nn.RMSNorm", rms_norm},
      {"nn.TransformerEncoderLayer", transformer_encoder_layer},
      {"nn.GroupNorm", group_norm},
      {"nn.Embedding", embedding},
      {"nn.EmbeddingBag", embedding_bag},
      {"nn.ReLU", relu},
      {"nn.ReLU6", relu6},
      {"nn.Hardtanh", hardtanh},
      {"nn.LeakyReLU", leaky_relu},
      {"nn.PReLU", prelu},
      {"nn.ELU", elu},
      {"nn.GELU", gelu},
      {"nn.SiLU", silu},
      {"nn.Hardswish", hardswish},
      {"nn.Hardsigmoid", hardsigmoid},
      {"nn.Sigmoid", sigmoid},
      {"nn.Tanh", tanh_},
      {"nn.Softmax", softmax},
      {"nn.Identity", identity},
      {"nn.Dropout", identity},
      {"nn.Dropout2d", identity},
      {"quant.QuantStub", identity},
      {"quant.DeQuantStub", identity},
      {"nn.Flatten", flatten},
      {"nn.PixelShuffle", pixel_shuffle},
      {"nn.PixelUnshuffle", pixel_unshuffle},
      {"nn.MaxPool1d", max_pool},
      {"nn.MaxPool2d", max_pool},
      {"nn.MaxPool3d", max_pool},
      {"nn.AvgPool1d", avg_pool},
      {"nn.AvgPool2d", avg_pool},
      {"nn.AvgPool3d", avg_pool},
      {"nn.AdaptiveAvgPool1d", adaptive_avg_pool},
      {"nn.AdaptiveAvgPool2d", adaptive_avg_pool},
      {"nn.AdaptiveAvgPool3d", adaptive_avg_pool},
      {"nn.AdaptiveMaxPool1d", adaptive_max_pool},
      {"nn.AdaptiveMaxPool2d", adaptive_max_pool},
      {"nn.AdaptiveMaxPool3d", adaptive_max_pool},
      {"nn.ZeroPad2d", constant_pad},
      {"nn.ConstantPad1d", constant_pad},
      {"nn.ConstantPad2d", constant_pad},
      {"nn.ConstantPad3d", constant_pad},
      {"nn.Upsample", upsample},
      {"nn.LSTM", lstm},
      {"nn.GRU", gru},
      {"nn.RNN", rnn_plain},
      {"nn.MultiheadAttention", multihead_attention},
      {"FloatFunctional.add", ff_add},
      {"FloatFunctional.add_scalar", ff_add_scalar},
      {"FloatFunctional.mul", ff_mul},
      {"FloatFunctional.mul_scalar", ff_mul_scalar},
      {"FloatFunctional.cat", ff_cat},
      {"FloatFunctional.add_relu", ff_add_relu},
      {"nnq.Quantize", quantize},
      {"nnq.DeQuantize", dequantize},
      {"nnq.Conv1d", qconv},
      {"nnq.Conv2d", qconv},
      {"nnq.Conv3d", qconv},
      {"nniq.ConvReLU1d", qconv},
      {"nniq.ConvReLU2d", qconv},
      {"nniq.ConvReLU3d", qconv},
      {"nnq.ConvTranspose1d", qconv_transpose},
      {"nnq.ConvTranspose2d", qconv_transpose},
      {"nnq.Linear", qlinear},
      {"nniq.LinearReLU", qlinear},
      {"nnqd.Linear", qlinear},
      {"nnq.Embedding", qembedding},
      {"nnq.EmbeddingBag", qembedding},
      {"nnqd.LSTM", qlstm},
      {"nnqd.GRU", qgru},
      {"nnq.BatchNorm2d", qbatch_norm},
      {"nnq.BatchNorm3d", qbatch_norm},
      {"nniq.BNReLU2d", qbatch_norm},
      {"nniq.BNReLU3d", qbatch_norm},
      {"nnq.Hardswish", qhardswish},
      {"nnq.ELU", qelu},
      {"nnq.LeakyReLU", qleaky_relu},
      {"nnq.Sigmoid", qsigmoid},
      {"nnq.ReLU6", qrelu6},
      {"nnq.Softmax", qsoftmax},
      {"nnq.Dropout", identity},
      {"QFunctional.add", qf_add},
      {"QFunctional.add_relu", qf_add_relu},
      {"QFunctional.mul", qf_mul},
      {"QFunctional.cat", qf_cat},
      {"QFunctional.add_scalar", qf_add_scalar},
      {"QFunctional.mul_scalar", qf_mul_scalar},
  };
  return table;
}

}  // namespace

const std::array<const char*, 12> kTransformerEncoderWeights = {"self_attn.in_proj_weight",
                                                                "self_attn.in_proj_bias",
                                                                "self_attn.out_proj.weight",
                                                                "self_attn.out_proj.bias",
                                                                "norm1.weight",
                                                                "norm1.bias",
                                                                "norm2.weight",
                                                                "norm2.bias",
                                                                "linear1.weight",
                                                                "linear1.bias",
                                                                "linear2.weight",
                                                                "linear2.bias"};

bool has_module_lowering(std::string_view op) {
  return lowerings().count(op) != 0 || composite_parts(op) != nullptr;
}

std::unique_ptr<Graph> lower_module(const Node& n, std::string& why) {
  auto g = std::make_unique<Graph>();
  std::vector<Value*> cur;
  for (Value* v : n.inputs()) cur.push_back(g->add_input(v->type(), "in"));
  Builder l(*g, n);
  try {
    // A composite runs its parts in order (conv, then BN in eval semantics, then the activation),
    // each with its own attributes and weights.
    const auto* parts = composite_parts(n.op());
    std::vector<Attrs> part_attrs;
    if (parts)
      for (size_t k = 0; k < parts->size(); ++k) part_attrs.push_back(composite_part_attrs(n, k));
    size_t count = parts ? parts->size() : 1;
    for (size_t k = 0; k < count; ++k) {
      const std::string& op = parts ? (*parts)[k].op : n.op();
      auto it = lowerings().find(op);
      if (it == lowerings().end()) {
        why = parts ? "composite " + n.op() + " has a part without lowering: " + op
                    : "module op " + op + " has no lowering";
        return nullptr;
      }
      l.set_part(op, parts ? part_attrs[k] : n.attrs(), parts ? composite_weight_key(k, "") : "",
                 cur, k == 0);
      cur = {it->second(l)};
    }
  } catch (const Refuse& r) {
    why = r.why;
    return nullptr;
  }
  g->add_output(cur.at(0));
  return g;
}

}  // namespace tt
