// The TorchScript lifter (lifter.h): quantized modules of eager-mode quantization.
//
// Note [Quantized modules]
// A model converted by torch.ao.quantization.convert holds torch.ao.nn.quantized modules
// (nnq.Conv2d, nniq.ConvReLU2d, nnq.Linear, nnq.Quantize, nnq.QFunctional, ...). TorchScript keeps
// their weights inside packed-params objects (Conv2dPackedParamsBase, LinearPackedParamsBase) and
// their output scale and zero point as plain attributes, so a generic lift cannot read them. These
// modules are lifted by class, for traced and scripted models alike, as one module op each:
// - the op is the module's class (`nnq.Conv2d`, `nniq.ConvReLU2d`, `nnqd.Linear`), its attributes
//   the constructor's keywords read from the module's attributes;
// - its weights are the module's eager state_dict entries (Note [State of quantized modules] in
//   lib/ir/quant.h): the packed weight and bias, unpacked by LibTorch's own quantized::*_unpack
//   ops, the scale and zero point as 0-dim tensors (quantized_state below), next to the module's
//   real buffers (nnq.Quantize's scale, nnq.BatchNorm2d's statistics);
// - a traced module is lifted only when its recorded forward calls the op its class calls with
//   the module's own scale and zero point (a module changed after tracing is inlined instead);
// - QFunctional's methods: a scripted `self.add_relu.add_relu(a, b)` is the module-method op
//   QFunctional.add_relu; in a trace the method was inlined into the caller, so a
//   quantized::add_relu whose result the QFunctional's activation_post_process next observes,
//   with that QFunctional's scale and zero point, is lifted as the same op.
// The module lowering (lib/ir/module_lowering.cpp) computes what the eager module computes: it
// packs the weight again with the engine in use and calls the same quantized op.
#include "loaders/torchscript/lifter.h"

#include "exec/dispatch.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace tt::ts {
namespace {

enum class QKind {
  Quantize,
  DeQuantize,
  Conv,
  ConvTranspose,
  Linear,
  DynamicLinear,
  DynamicRnn,
  BatchNorm,
  Hardswish,
  Elu,
  LeakyRelu,
  Sigmoid,
  Relu6,
  Softmax,
  Dropout,
  Functional,
  Embedding,
  EmbeddingBag,
};

struct QClass {
  QKind kind;
  std::string op;                    // "nnq.Conv2d"
  int64_t dims = 0;                  // convolutions and batch norm
  bool relu = false;                 // the intrinsic fused ReLU
  std::vector<std::string> key_ops;  // what a trace of its forward calls
  int scale_arg = -1;                // where the key op takes the output scale (zero point next)
};

// By class name below "torch.ao.nn." (archives of torch 1.x may name "torch.nn.quantized...").
const std::map<std::string, QClass>& quant_classes() {
  static const std::map<std::string, QClass> m = [] {
    std::map<std::string, QClass> t;
    const std::string q = "quantized.modules.", iq = "intrinsic.quantized.modules.";
    t[q + "Quantize"] = {QKind::Quantize, "nnq.Quantize", 0, false, {"aten::quantize_per_tensor"}};
    t[q + "DeQuantize"] = {QKind::DeQuantize, "nnq.DeQuantize", 0, false, {"aten::dequantize"}};
    for (int64_t d = 1; d <= 3; ++d) {
      std::string nd = std::to_string(d) + "d";
      std::string conv = d == 1 ? "quantized::conv1d" : "quantized::conv" + nd;
      t[q + "conv.Conv" + nd] = {QKind::Conv, "nnq.Conv" + nd, d, false, {conv}, 2};
      t[iq + "conv_relu.ConvReLU" + nd] = {QKind::Conv, "nniq.ConvReLU" + nd, d,
                                           true,        {conv + "_relu"},     2};
    }
    // (qnnpack and LibTorch 2.6 have transposed convolutions in 1d and 2d only.)
    for (int64_t d = 1; d <= 2; ++d) {
      std::string nd = std::to_string(d) + "d";
      t[q + "conv.ConvTranspose" + nd] = {QKind::ConvTranspose,
                                          "nnq.ConvTranspose" + nd,
                                          d,
                                          false,
                                          {"quantized::conv_transpose" + nd},
                                          2};
    }
    for (int64_t d = 2; d <= 3; ++d) {
      std::string nd = std::to_string(d) + "d";
      t[q + "batchnorm.BatchNorm" + nd] = {
          QKind::BatchNorm, "nnq.BatchNorm" + nd, d, false, {"quantized::batch_norm" + nd}, 6};
      t[iq + "bn_relu.BNReLU" + nd] = {QKind::BatchNorm,
                                       "nniq.BNReLU" + nd,
                                       d,
                                       true,
                                       {"quantized::batch_norm" + nd + "_relu"},
                                       6};
    }
    t[q + "linear.Linear"] = {QKind::Linear, "nnq.Linear", 0, false, {"quantized::linear"}, 2};
    t[iq + "linear_relu.LinearReLU"] = {QKind::Linear, "nniq.LinearReLU",          0,
                                        true,          {"quantized::linear_relu"}, 2};
    t["quantized.dynamic.modules.linear.Linear"] = {
        QKind::DynamicLinear, "nnqd.Linear", 0, false, {"quantized::linear_dynamic"}};
    for (const char* rnn : {"LSTM", "GRU"})
      t[std::string("quantized.dynamic.modules.rnn.") + rnn] = {
          QKind::DynamicRnn,
          std::string("nnqd.") + rnn,
          0,
          false,
          {std::string("aten::quantized_") + (rnn[0] == 'L' ? "lstm" : "gru")}};
    t[q + "activation.Hardswish"] = {
        QKind::Hardswish, "nnq.Hardswish", 0, false, {"quantized::hardswish"}, 1};
    t[q + "activation.ELU"] = {QKind::Elu, "nnq.ELU", 0, false, {"quantized::elu"}, 1};
    t[q + "activation.LeakyReLU"] = {
        QKind::LeakyRelu, "nnq.LeakyReLU", 0, false, {"quantized::leaky_relu"}, 3};
    t[q + "activation.Sigmoid"] = {QKind::Sigmoid, "nnq.Sigmoid",          0,
                                   false,          {"quantized::sigmoid"}, 1};
    t[q + "activation.ReLU6"] = {QKind::Relu6, "nnq.ReLU6", 0, false, {"quantized::relu6"}};
    t[q + "activation.Softmax"] = {QKind::Softmax, "nnq.Softmax",          0,
                                   false,          {"quantized::softmax"}, 2};
    t[q + "dropout.Dropout"] = {QKind::Dropout, "nnq.Dropout", 0, false, {}};
    t[q + "embedding_ops.Embedding"] = {QKind::Embedding,
                                        "nnq.Embedding",
                                        0,
                                        false,
                                        {"quantized::embedding_byte", "quantized::embedding_4bit"}};
    t[q + "embedding_ops.EmbeddingBag"] = {
        QKind::EmbeddingBag,
        "nnq.EmbeddingBag",
        0,
        false,
        {"quantized::embedding_bag_byte", "quantized::embedding_bag_4bit"}};
    t[q + "functional_modules.QFunctional"] = {QKind::Functional, "QFunctional", 0, false, {}};
    return t;
  }();
  return m;
}

const QClass* quant_class(const std::string& type) {
  std::string rest;
  for (const char* prefix : {"torch.ao.nn.", "torch.nn."})
    if (type.rfind(prefix, 0) == 0) rest = type.substr(std::char_traits<char>::length(prefix));
  if (rest.empty()) return nullptr;
  auto it = quant_classes().find(rest);
  return it == quant_classes().end() ? nullptr : &it->second;
}

IValue attr_or_none(const jit::Module& m, const char* name) {
  return m.hasattr(name) ? m.attr(name) : IValue();
}

std::vector<int64_t> int_list(const IValue& v) {
  std::vector<int64_t> out;
  if (v.isInt()) return {v.toInt()};
  if (v.isIntList()) return v.toIntVector();
  if (v.isTuple())
    for (const IValue& e : v.toTupleRef().elements())
      if (e.isInt()) out.push_back(e.toInt());
  return out;
}

std::optional<double> number(const IValue& v) {
  if (v.isDouble()) return v.toDouble();
  if (v.isInt()) return static_cast<double>(v.toInt());
  if (v.isTensor() && v.toTensor().numel() == 1) return v.toTensor().item<double>();
  return std::nullopt;
}

std::optional<int64_t> integer(const IValue& v) {
  if (v.isInt()) return v.toInt();
  if (v.isTensor() && v.toTensor().numel() == 1 && !v.toTensor().is_floating_point())
    return v.toTensor().item<int64_t>();
  return std::nullopt;
}

// (weight, bias) of a packed-params object, through LibTorch's unpack op for its type.
std::pair<at::Tensor, at::Tensor> unpack(const IValue& packed, const QClass& c) {
  std::string op;
  if (c.kind == QKind::Conv)
    op = c.dims == 1 ? "quantized::conv1d_unpack"
                     : "quantized::conv" + std::to_string(c.dims) + "d_unpack";
  else if (c.kind == QKind::ConvTranspose)
    op = "quantized::conv_transpose" + std::to_string(c.dims) + "d_unpack";
  else
    op = "quantized::linear_unpack";
  auto h = c10::Dispatcher::singleton().findSchema({op, ""});
  if (!h) throw Error(ExitCode::Unsupported, "LibTorch has no " + op + " op to read the weights");
  torch::jit::Stack st{packed};
  h->callBoxed(st);
  return {st.at(0).toTensor(), st.at(1).isNone() ? at::Tensor() : st.at(1).toTensor()};
}

at::Tensor scalar_tensor(double v) { return at::scalar_tensor(v, at::kFloat); }
at::Tensor scalar_tensor(int64_t v) { return at::scalar_tensor(v, at::kLong); }

// The first node of `g`'s top block calling one of `kinds`.
const jit::Node* find_key(const jit::Graph& g, const std::vector<std::string>& kinds) {
  for (const jit::Node* n : g.nodes())
    if (std::find(kinds.begin(), kinds.end(), kind_str(n)) != kinds.end()) return n;
  return nullptr;
}

// The (scale, zero point) constants `n` passes at `at`, `at + 1`.
std::optional<std::pair<double, int64_t>> qparams_at(const jit::Node* n, size_t at) {
  if (!n || at + 1 >= n->inputs().size()) return std::nullopt;
  auto s = jit::toIValue(n->input(at)), z = jit::toIValue(n->input(at + 1));
  auto sv = s ? number(*s) : std::nullopt;
  auto zv = z ? integer(*z) : std::nullopt;
  if (!sv || !zv) return std::nullopt;
  return std::make_pair(*sv, *zv);
}

// A trace keeps no scale/zero_point attribute of some modules (nnq.Linear): the constants its
// recorded forward passes to the key op.
std::optional<std::pair<double, int64_t>> traced_qparams(const jit::Module& m, const QClass& c) {
  if (c.scale_arg < 0) return std::nullopt;
  auto fwd = m.find_method("forward");
  if (!fwd) return std::nullopt;
  return qparams_at(find_key(*fwd->graph(), c.key_ops), static_cast<size_t>(c.scale_arg));
}

// The quantized::<method> node of a traced QFunctional method (Note [Quantized modules]) whose
// result the call right after it observes with `observer` (a GetAttr of activation_post_process),
// or nullptr.
const jit::Node* observed_by(const jit::Node* n) {
  for (const jit::Node* x = n->next(); x && x->kind() != c10::prim::Return; x = x->next()) {
    // Only the GetAttr chain reaching the observer comes between.
    if (x->kind() == c10::prim::GetAttr || x->kind() == c10::prim::Constant) continue;
    if (x->kind() != c10::prim::CallMethod) return nullptr;
    if (x->inputs().size() != 1 || x->s(c10::attr::name) != "forward") return nullptr;
    const jit::Node* get = x->input(0)->node();
    if (get->kind() != c10::prim::GetAttr || get->s(c10::attr::name) != "activation_post_process")
      return nullptr;
    return get;
  }
  return nullptr;
}

const std::map<std::string, std::string>& qfunctional_ops() {
  static const std::map<std::string, std::string> m = {{"quantized::add", "add"},
                                                       {"quantized::add_relu", "add_relu"},
                                                       {"quantized::mul", "mul"},
                                                       {"quantized::cat", "cat"},
                                                       {"quantized::add_scalar", "add_scalar"},
                                                       {"quantized::mul_scalar", "mul_scalar"}};
  return m;
}

// A traced QFunctional keeps no scale/zero_point attribute: the constants of the op its parent's
// trace called and then observed with this QFunctional's activation_post_process.
std::optional<std::pair<double, int64_t>> traced_qfunctional_qparams(const jit::Module& parent,
                                                                     const std::string& child) {
  for (const auto& method : parent.get_methods()) {
    const jit::Graph& g = *method.graph();
    for (const jit::Node* n : g.nodes()) {
      auto it = qfunctional_ops().find(kind_str(n));
      if (it == qfunctional_ops().end() || it->second == "add_scalar" || it->second == "mul_scalar")
        continue;
      const jit::Node* get = observed_by(n);
      if (!get) continue;
      const jit::Node* owner = get->input(0)->node();
      if (owner->kind() != c10::prim::GetAttr || owner->s(c10::attr::name) != child ||
          owner->input(0) != g.inputs().at(0))
        continue;
      return qparams_at(n, 2);
    }
  }
  return std::nullopt;
}

// The packed-params object of a conv / linear module (nnq.Linear keeps it one module deeper).
IValue packed_params(const jit::Module& m, const QClass& c) {
  IValue p = attr_or_none(m, "_packed_params");
  if ((c.kind == QKind::Linear || c.kind == QKind::DynamicLinear) && p.isObject() &&
      p.toObject()->type()->is_module())
    p = attr_or_none(jit::Module(p.toObject()), "_packed_params");
  return p;
}

// Note [Dynamic quantized LSTM and GRU]
// nnqd.LSTM / nnqd.GRU keep one packed CellParamsBase object per layer and direction
// (_all_weight_values.<i>.param, layer-major, the reverse direction second). Its __getstate__
// gives ("quantized_dynamic", [bias_ih, bias_hh], [], [reduce_range], [packed_ih, packed_hh]),
// and quantized::linear_unpack the qint8 weights of the two packed linear layers. The IR keeps
// them under nn.LSTM's parameter names (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, ...);
// the lowering packs them again (linear_prepack, make_quantized_cell_params_dynamic with
// reduce_range, as the module's set_weight_bias does) and calls aten::quantized_lstm / _gru.
// NAME.pth (a dict of tensors) cannot hold the eager state_dict's CellParamsBase objects: it keeps
// these tensors, packed again by helper classes (Note [Python helper definitions], py_helpers.h).
std::optional<std::vector<std::pair<std::string, at::Tensor>>> dynamic_rnn_state(
    const jit::Module& m) {
  IValue layers = attr_or_none(m, "num_layers"), bidir = attr_or_none(m, "bidirectional"),
         bias = attr_or_none(m, "bias"), cells = attr_or_none(m, "_all_weight_values");
  if (!layers.isInt() || !bidir.isBool() || !bias.isBool() || !bias.toBool() || !cells.isObject() ||
      !cells.toObject()->type()->is_module())
    return std::nullopt;
  const jit::Module list(cells.toObject());
  const int64_t dirs = bidir.toBool() ? 2 : 1;
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (int64_t i = 0; i < layers.toInt() * dirs; ++i) {
    IValue cell = attr_or_none(list, std::to_string(i).c_str());
    if (!cell.isObject() || !cell.toObject()->type()->is_module()) return std::nullopt;
    IValue param = attr_or_none(jit::Module(cell.toObject()), "param");
    if (!param.isObject()) return std::nullopt;
    auto* getstate = param.toObject()->type()->findMethod("__getstate__");
    if (!getstate) return std::nullopt;
    IValue st = (*getstate)({param});
    if (!st.isTuple() || st.toTupleRef().elements().size() != 5) return std::nullopt;
    const auto& e = st.toTupleRef().elements();
    if (!e[0].isString() || e[0].toStringRef() != "quantized_dynamic" || !e[1].isList() ||
        e[1].toListRef().size() != 2 || !e[3].isList() || e[3].toListRef().size() != 1 ||
        e[3].toListRef()[0] != IValue(int64_t{1}) || !e[4].isList() || e[4].toListRef().size() != 2)
      return std::nullopt;  // float16 cells, or reduce_range=False (module version 1)
    const std::string sfx =
        "_l" + std::to_string(i / dirs) + (i % dirs ? std::string("_reverse") : std::string());
    QClass linear{QKind::DynamicLinear, "", 0, false, {}};
    const char* parts[] = {"ih", "hh"};
    for (size_t k = 0; k < 2; ++k) {
      at::Tensor w = unpack(e[4].toListRef()[k], linear).first;
      if (w.scalar_type() != at::kQInt8) return std::nullopt;
      out.emplace_back(std::string("weight_") + parts[k] + sfx, w);
    }
    for (size_t k = 0; k < 2; ++k)
      out.emplace_back(std::string("bias_") + parts[k] + sfx, e[1].toListRef()[k].toTensor());
  }
  return out;
}

// Note [Quantized embeddings]
// nnq.Embedding / nnq.EmbeddingBag keep their weight packed (EmbeddingPackedParamsBase, in
// _packed_params._packed_weight); quantized::embedding_bag_unpack gives it back as a quint8
// tensor with a float scale and offset per row (per_channel_affine_float_qparams), kept as
// `weight`, nn.Embedding's name. Their eager state_dict holds the weight's dtype next to it,
// which a dict of tensors cannot: the generated code writes them as helper classes that load
// `weight` (Note [Python helper definitions] in lib/ir/py_helpers.h). The lowering packs the
// weight again (embedding_bag_prepack) and calls the lookup the forward calls; EmbeddingBag's
// forward always sums (its key op gets mode 0). 4-bit weights (torch.quint4x2) are refused.

}  // namespace

std::optional<std::vector<std::pair<std::string, at::Tensor>>> quantized_state(
    const jit::Module& m, const jit::Module* parent, const std::string& name) {
  const QClass* c = quant_class(plain_type_name(m));
  if (!c) return std::nullopt;
  std::vector<std::pair<std::string, at::Tensor>> out;
  auto scale_zp = [&](const char* scale, const char* zp) {
    auto s = number(attr_or_none(m, scale));
    auto z = integer(attr_or_none(m, zp));
    if ((!s || !z) && c->kind == QKind::DynamicLinear) {
      // nnqd.Linear computes in float: its (unused) scale and zero point are always 1.0 and 0,
      // kept in its state; a trace drops the attributes.
      s = 1.0;
      z = 0;
    }
    if (!s || !z) {
      auto traced = c->kind == QKind::Functional
                        ? (parent ? traced_qfunctional_qparams(*parent, name) : std::nullopt)
                        : traced_qparams(m, *c);
      if (!traced) return false;
      s = traced->first;
      z = traced->second;
    }
    out.emplace_back("scale", scalar_tensor(*s));
    out.emplace_back("zero_point", scalar_tensor(*z));
    return true;
  };
  switch (c->kind) {
    case QKind::Conv:
    case QKind::ConvTranspose:
    case QKind::Linear:
    case QKind::DynamicLinear: {
      IValue p = packed_params(m, *c);
      if (!p.isObject()) return std::nullopt;
      auto [w, b] = unpack(p, *c);
      out.emplace_back("weight", w);
      if (b.defined()) out.emplace_back("bias", b);
      if (!scale_zp("scale", "zero_point")) return std::nullopt;
      return out;
    }
    case QKind::DynamicRnn:
      return dynamic_rnn_state(m);
    case QKind::Embedding:
    case QKind::EmbeddingBag: {
      // Note [Quantized embeddings]
      IValue holder = attr_or_none(m, "_packed_params");
      if (!holder.isObject() || !holder.toObject()->type()->is_module()) return std::nullopt;
      IValue packed = attr_or_none(jit::Module(holder.toObject()), "_packed_weight");
      auto h = c10::Dispatcher::singleton().findSchema({"quantized::embedding_bag_unpack", ""});
      if (!packed.isObject() || !h) return std::nullopt;
      torch::jit::Stack st{packed};
      try {
        h->callBoxed(st);
      } catch (const c10::Error&) {
        return std::nullopt;
      }
      // The unpacked weight's scales and offsets may point into the packed object, which dies
      // with the module: an owning copy. (Other weights, 4-bit ones, are refused when lifted.)
      at::Tensor w = st.at(0).toTensor();
      if (w.scalar_type() == at::kQUInt8 && w.qscheme() == at::kPerChannelAffineFloatQParams)
        w = at::_make_per_channel_quantized_tensor(
            w.int_repr().clone(), w.q_per_channel_scales().clone(),
            w.q_per_channel_zero_points().clone(), w.q_per_channel_axis());
      out.emplace_back("weight", w);
      return out;
    }
    case QKind::BatchNorm:
    case QKind::Functional:
      // BatchNorm's statistics are real buffers; scale and zero point are attributes.
      if (!scale_zp("scale", "zero_point")) return std::nullopt;
      return out;
    default:
      return out;  // their state is their real buffers (or nothing)
  }
}

bool Lifter::try_quantized_leaf(const jit::Node* call, const ModuleRef& callee,
                                const std::shared_ptr<jit::Graph>& method_graph, Frame& f) {
  const jit::Module& m = callee.module;
  const QClass* c = quant_class(plain_type_name(m));
  if (!c) {
    const std::string type = plain_type_name(m);
    bool quantized_ns = false;
    for (const char* ns : {"torch.ao.nn.quantized.", "torch.ao.nn.intrinsic.quantized.",
                           "torch.nn.quantized.", "torch.nn.intrinsic.quantized."})
      quantized_ns = quantized_ns || type.rfind(ns, 0) == 0;
    if (!quantized_ns) return false;
    // Other quantized modules are lifted through their forward (nnq.LayerNorm calls
    // quantized::layer_norm with its tensors), unless they keep packed weights, which only their
    // class knows how to read (nnqd.LSTM, nnq.Embedding, nnqd.Linear in float16).
    for (const auto& a : m.named_attributes(/*recurse=*/true))
      if (a.value.isObject() && !a.value.toObject()->type()->is_module())
        unsupported(call,
                    "the quantized module '" + callee.path + "' (" + type +
                        ") is not supported: its packed weight '" + a.name +
                        "' can be read only for the modules listed in README.md (int8 models)",
                    f, "keep this module float before quantizing, or convert the float model");
    return false;
  }
  std::string method = call->s(c10::attr::name);
  // forward, or forward1, forward2, ... when the tracer saw the module called several times.
  const bool forward =
      method.rfind("forward", 0) == 0 &&
      std::all_of(method.begin() + 7, method.end(), [](char ch) { return std::isdigit(ch); });
  // A trace records a call whose result it never saw used (an eval Dropout after the last use of
  // its input) without arguments: nothing to compute.
  if (call->inputs().size() == 1 && call->outputs().size() == 1 &&
      call->output()->type()->kind() == c10::TypeKind::NoneType) {
    f.env[call->output()] =
        Binding{add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, call), {}};
    return true;
  }
  auto refuse = [&](const std::string& why, const std::string& fix =
                                                "re-export the quantized model with "
                                                "torch.ao.quantization.convert") -> bool {
    unsupported(call,
                "the quantized module '" + callee.path + "' (" + plain_type_name(m) +
                    ") cannot be lifted: " + why,
                f, fix);
  };
  // A trace recorded the module's forward: it must call the class's op with the module's own
  // scale and zero point.
  bool traced = !has_script_constructs(
      *method_graph->block(), method_graph->inputs().empty() ? nullptr : method_graph->inputs()[0]);
  const jit::Node* key = nullptr;
  if (!c->key_ops.empty() && forward) {
    for (const jit::Node* n : method_graph->nodes()) {
      std::string k = kind_str(n);
      if (std::find(c->key_ops.begin(), c->key_ops.end(), k) != c->key_ops.end()) {
        key = n;
        break;
      }
    }
    if (!key && traced) refuse("its forward does not call " + c->key_ops.front());
  }

  Attrs a;
  // The module's attribute `name`; a trace keeps no attribute that is not a tensor (the
  // activations' scale, alpha, ...), so there it is the constant the traced key op passes at `arg`.
  auto attr_or_arg = [&](const char* name, int arg) {
    IValue v = attr_or_none(m, name);
    if (v.isNone() && traced && key && arg >= 0 && static_cast<size_t>(arg) < key->inputs().size())
      if (auto c = jit::toIValue(key->input(static_cast<size_t>(arg)))) v = *c;
    return v;
  };
  auto req_double = [&](const char* name, int arg = -1) {
    auto v = number(attr_or_arg(name, arg));
    if (!v) refuse(std::string("its attribute '") + name + "' is not a number");
    return *v;
  };
  auto req_int = [&](const char* name, int arg = -1) {
    auto v = integer(attr_or_arg(name, arg));
    if (!v) refuse(std::string("its attribute '") + name + "' is not an int");
    return *v;
  };
  auto req_bool = [&](const char* name, int arg = -1) {
    IValue v = attr_or_arg(name, arg);
    if (!v.isBool()) refuse(std::string("its attribute '") + name + "' is not a bool");
    return v.toBool();
  };
  // The traced key op's argument `i` must be the constant `want` (the module's attribute).
  // (A scripted forward reads the attribute itself: `self.scale`.)
  auto traced_arg = [&](size_t i, double want, const char* what) {
    if (!traced || !key || i >= key->inputs().size()) return;
    const jit::Value* v = key->input(i);
    // `float(self.scale)`: the module's own attribute, through a conversion.
    for (const jit::Value* a = v;;) {
      const jit::Node* p = a->node();
      if (p->kind() == c10::prim::GetAttr && p->input(0) == method_graph->inputs()[0]) return;
      std::string k = kind_str(p);
      if (p->inputs().size() != 1 ||
          (k != "aten::Float" && k != "aten::Int" && k != "aten::FloatImplicit" &&
           k != "aten::IntImplicit" && k != "aten::ScalarImplicit" && k != "aten::item"))
        break;
      a = p->input(0);
    }
    auto iv = jit::toIValue(v);
    auto got = iv ? number(*iv) : std::nullopt;
    if (!got || *got != want)
      refuse(std::string("its forward uses another ") + what + " than the module holds");
  };
  // An activation's output scale and zero point: its attributes `scale_name` and `zp_name`,
  // which the traced key op passes at `arg` and `arg + 1`.
  auto output_qparams = [&](const char* scale_name, const char* zp_name, int arg) {
    a.set(scale_name, req_double(scale_name, arg));
    a.set(zp_name, req_int(zp_name, arg + 1));
    traced_arg(arg, a.get_float(scale_name), "scale");
    traced_arg(arg + 1, static_cast<double>(a.get_int(zp_name)), "zero point");
  };
  auto has_state = [&](const char* name) {
    return graph_->weights().has(join_path(callee.path, name));
  };
  if (c->kind == QKind::Conv || c->kind == QKind::ConvTranspose || c->kind == QKind::Linear ||
      c->kind == QKind::BatchNorm || c->kind == QKind::Functional)
    if (!has_state("scale")) refuse("its scale and zero point cannot be read");
  // The output scale and zero point in the module's state (what load_state_dict restores).
  auto state_scale = [&]() {
    return graph_->weights().at(join_path(callee.path, "scale")).tensor.item<double>();
  };
  auto state_zp = [&]() {
    return static_cast<double>(
        graph_->weights().at(join_path(callee.path, "zero_point")).tensor.item<int64_t>());
  };

  std::string op = c->op;
  const bool rnn_lstm = c->op == "nnqd.LSTM";
  std::vector<const jit::Value*> lookup_args;  // embeddings' inputs (nullptr: None)
  switch (c->kind) {
    case QKind::Quantize: {
      output_qparams("scale", "zero_point", 1);
      IValue dt = attr_or_arg("dtype", 3);
      if (!dt.isInt()) refuse("its dtype is not known");
      a.set("dtype", dtype_from_scalar_type(dt.toInt()));
      break;
    }
    case QKind::DeQuantize:
    case QKind::Dropout:
      // A trace keeps neither attribute; in eval the module is the identity either way.
      if (c->kind == QKind::Dropout) {
        if (auto p = number(attr_or_none(m, "p"))) a.set("p", *p);
        if (IValue i = attr_or_none(m, "inplace"); i.isBool()) a.set("inplace", i.toBool());
      }
      break;
    case QKind::Conv:
    case QKind::ConvTranspose: {
      // Note [Padding modes of quantized convolutions]
      // nnq.Conv* with a padding_mode other than 'zeros' pads its input itself (F.pad with that
      // mode, on the quantized tensor) and packs its weight with padding 0; the lowering does the
      // same from the module's attributes, so its padding attribute keeps the module's value.
      // Transposed convolutions have only 'zeros'.
      const bool transposed = c->kind == QKind::ConvTranspose;
      a.set("in_channels", req_int("in_channels"));
      a.set("out_channels", req_int("out_channels"));
      std::vector<const char*> keys = {"kernel_size", "stride", "padding"};
      if (transposed) keys.push_back("output_padding");
      keys.push_back("dilation");
      for (const char* k : keys) {
        std::vector<int64_t> v = int_list(attr_or_none(m, k));
        if (v.size() != static_cast<size_t>(c->dims))
          refuse(std::string("its ") + k + " is not " + std::to_string(c->dims) + " ints");
        // nn.ConvTranspose*'s keyword order: output_padding, groups, bias, dilation.
        if (!transposed || std::string(k) != "dilation") a.set(k, v);
      }
      a.set("groups", req_int("groups"));
      a.set("bias", has_state("bias"));
      if (transposed) a.set("dilation", int_list(attr_or_none(m, "dilation")));
      IValue mode = attr_or_none(m, "padding_mode");
      static const std::set<std::string> modes = {"zeros", "reflect"};
      if (!mode.isString() || !modes.count(mode.toStringRef()) ||
          (transposed && mode.toStringRef() != "zeros"))
        refuse("its padding_mode is not one quantized convolutions have");
      a.set("padding_mode", mode.toStringRef());
      traced_arg(2, state_scale(), "scale");
      traced_arg(3, state_zp(), "zero point");
      break;
    }
    case QKind::Linear:
    case QKind::DynamicLinear: {
      const Weight* wt = graph_->weights().find(join_path(callee.path, "weight"));
      if (!wt) refuse("its packed weight cannot be read");
      const at::Tensor& w = wt->tensor;
      if (c->kind == QKind::DynamicLinear && w.scalar_type() != at::kQInt8)
        refuse("its weight is " + std::string(c10::toString(w.scalar_type())) +
               " (only qint8 dynamic linear layers are lifted)");
      a.set("in_features", w.size(1));
      a.set("out_features", w.size(0));
      a.set(c->relu ? "bias" : "bias_", has_state("bias"));
      a.set("dtype", dtype_from_scalar_type(static_cast<int64_t>(w.scalar_type())));
      if (c->kind == QKind::Linear) {
        traced_arg(2, state_scale(), "scale");
        traced_arg(3, state_zp(), "zero point");
      } else if (traced && key) {
        // nnqd.Linear (version 4) asks for reduce_range=True for qint8 weights.
        auto rr = key->inputs().size() > 2 ? jit::toIValue(key->input(2)) : std::nullopt;
        if (!rr || !rr->isBool() || !rr->toBool())
          refuse("its trace calls linear_dynamic without reduce_range, as old versions did");
      }
      break;
    }
    case QKind::DynamicRnn: {
      // Note [Dynamic quantized LSTM and GRU]
      if (!has_state("weight_ih_l0"))
        refuse(
            "its packed cells cannot be read (only qint8 cells with biases and reduce_range, "
            "as torch.ao.quantization.quantize_dynamic makes them, are lifted)");
      IValue dt = attr_or_none(m, "dtype");
      if (!dt.isInt() || dt.toInt() != static_cast<int64_t>(at::kQInt8))
        refuse("its dtype is not torch.qint8");
      a.set("input_size", req_int("input_size"));
      a.set("hidden_size", req_int("hidden_size"));
      a.set("num_layers", req_int("num_layers"));
      a.set("bias", req_bool("bias"));
      a.set("batch_first", req_bool("batch_first"));
      a.set("dropout", req_double("dropout"));
      a.set("bidirectional", req_bool("bidirectional"));
      // Scripted: forward_tensor(input, hx); traced: forward(input), the zero state built inside.
      if (method == "forward_tensor") {
        if (call->inputs().size() != 3) refuse("its forward_tensor call is not (input, hx)");
      } else if (!forward || !traced || call->inputs().size() != 2) {
        refuse("it is called as " + method + " with other than one input");
      }
      break;
    }
    case QKind::BatchNorm: {
      IValue w = attr_or_none(m, "weight");
      if (!w.isTensor()) refuse("it has no weight");
      a.set("num_features", w.toTensor().size(0));
      a.set("eps", req_double("eps"));
      a.set("momentum", req_double("momentum"));
      traced_arg(6, state_scale(), "scale");
      traced_arg(7, state_zp(), "zero point");
      break;
    }
    case QKind::Hardswish:
      output_qparams("scale", "zero_point", 1);
      break;
    case QKind::Elu:
      output_qparams("scale", "zero_point", 1);
      a.set("alpha", req_double("alpha", 3));
      break;
    case QKind::LeakyRelu:
      output_qparams("scale", "zero_point", 3);
      a.set("negative_slope", req_double("negative_slope", 1));
      a.set("inplace", req_bool("inplace", 2));
      break;
    case QKind::Sigmoid:
      output_qparams("output_scale", "output_zero_point", 1);
      break;
    case QKind::Relu6:
      a.set("inplace", req_bool("inplace", 1));
      break;
    case QKind::Softmax: {
      IValue dim = attr_or_arg("dim", 1);
      if (!dim.isInt()) refuse("its dim is not set (the softmax dimension depends on the input)");
      a.set("dim", dim.toInt());
      output_qparams("scale", "zero_point", 2);
      break;
    }
    case QKind::Embedding:
    case QKind::EmbeddingBag: {
      // Note [Quantized embeddings]
      const Weight* wt = graph_->weights().find(join_path(callee.path, "weight"));
      if (!wt) refuse("its packed weight cannot be read");
      const at::Tensor& w = wt->tensor;
      if (w.scalar_type() != at::kQUInt8 || w.dim() != 2)
        refuse("its weight is " + std::string(c10::toString(w.scalar_type())) +
                   " (only 8-bit quantized embeddings, torch.quint8, are lifted)",
               "quantize the embeddings with float_qparams_weight_only_qconfig (8-bit), or "
               "keep them float");
      a.set("num_embeddings", w.size(0));
      a.set("embedding_dim", w.size(1));
      if (c->kind == QKind::EmbeddingBag) {
        if (req_bool("pruned_weights", 5)) refuse("its weights are pruned");
        a.set("mode", std::string("sum"));  // what its forward computes, whatever `mode` says
        a.set("include_last_offset", req_bool("include_last_offset", 8));
      }
      // The lookup's inputs: (indices) / (indices, offsets, per_sample_weights), from the
      // call's arguments; a trace passes the forward's arguments on to the key op.
      const std::vector<size_t> key_at =
          c->kind == QKind::Embedding ? std::vector<size_t>{1} : std::vector<size_t>{1, 2, 6};
      for (size_t k = 0; k < key_at.size(); ++k) {
        const jit::Value* v = nullptr;
        if (traced) {
          if (!key || key_at[k] >= key->inputs().size()) refuse("its forward calls no lookup");
          const jit::Value* kv = key->input(key_at[k]);
          const auto& params = method_graph->inputs();
          auto it = std::find(params.begin() + 1, params.end(), kv);
          if (it != params.end()) {
            v = call->input(static_cast<size_t>(it - params.begin()));
          } else if (auto iv = jit::toIValue(kv); !iv || !iv->isNone()) {
            refuse("its traced forward computes the lookup's inputs");
          }
        } else if (k + 1 < call->inputs().size()) {
          v = call->input(k + 1);
        }
        lookup_args.push_back(v);
      }
      if (!traced && c->kind == QKind::EmbeddingBag && call->inputs().size() > 4)
        if (auto iv = jit::toIValue(call->input(4)); !iv || !iv->isNone())
          refuse("it is given compressed_indices_mapping (for pruned weights only)");
      break;
    }
    case QKind::Functional: {
      static const std::set<std::string> methods = {"add", "add_relu",   "mul",
                                                    "cat", "add_scalar", "mul_scalar"};
      if (!methods.count(method)) refuse("it calls QFunctional." + method);
      op = "QFunctional." + method;
      break;
    }
  }
  if (c->kind != QKind::Functional && !forward &&
      !(c->kind == QKind::DynamicRnn && method == "forward_tensor"))
    refuse("it calls " + method);
  if (call->outputs().size() != 1)
    refuse("its call has " + std::to_string(call->outputs().size()) + " results");
  // A traced nnqd.LSTM / GRU returns the key op's results flattened, in the trace's order.
  std::vector<size_t> traced_order;
  if (c->kind == QKind::DynamicRnn && traced) {
    const jit::Node* ret = method_graph->outputs().at(0)->node();
    if (ret->kind() != c10::prim::TupleConstruct) refuse("its traced forward returns no tuple");
    for (const jit::Value* v : ret->inputs()) {
      if (v->node() != key) refuse("its traced forward returns more than " + kind_str(key));
      traced_order.push_back(v->offset());
    }
  }

  std::vector<Value*> ins;
  if (c->kind == QKind::Embedding || c->kind == QKind::EmbeddingBag) {
    while (!lookup_args.empty() && !lookup_args.back()) lookup_args.pop_back();
    for (const jit::Value* v : lookup_args)
      ins.push_back(v ? value_of(f, v, call)
                      : add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, call));
  } else {
    for (size_t i = 1; i < call->inputs().size(); ++i)
      ins.push_back(value_of(f, call->input(i), call));
  }
  Node* node = append(op, ins, f, call);
  node->attrs() = a;
  set_module_weights(node, callee.path);
  if (!traced_order.empty()) {
    // (output, (h, c)) / (output, h), unpacked and put in the trace's order.
    Type t = Type::tensor();
    Value* r =
        node->add_output(rnn_lstm ? Type::tuple({t, Type::tuple({t, t})}) : Type::tuple({t, t}));
    Node* u1 = append("prim.TupleUnpack", {r}, f, call);
    std::vector<Value*> flat = {u1->add_output(t)};
    if (rnn_lstm) {
      Node* u2 = append("prim.TupleUnpack", {u1->add_output(Type::tuple({t, t}))}, f, call);
      flat.push_back(u2->add_output(t));
      flat.push_back(u2->add_output(t));
    } else {
      flat.push_back(u1->add_output(t));
    }
    std::vector<Value*> parts;
    for (size_t k : traced_order) {
      if (k >= flat.size()) refuse("its traced forward returns an unknown result");
      parts.push_back(flat[k]);
    }
    Node* tc = append("prim.TupleConstruct", parts, f, call);
    f.env[call->output()] =
        Binding{tc->add_output(Type::tuple(std::vector<Type>(parts.size(), t))), {}};
    return true;
  }
  std::string out_name = name_hint(call->output());
  f.env[call->output()] =
      Binding{node->add_output(convert_type(call->output()->type()), out_name), {}};
  return true;
}

// The weights of a quantized module op: the store's entries right below its path (its state,
// Note [Quantized modules]), in state_dict order; and its module path.
void Lifter::set_module_weights(Node* node, const std::string& path) const {
  const std::string prefix = path + ".";
  for (const std::string& w : graph_->weights().names())
    if (w.rfind(prefix, 0) == 0 && w.find('.', prefix.size()) == std::string::npos)
      node->set_weight(w.substr(prefix.size()), w);
  node->set_module(path);
}

// A traced QFunctional method (Note [Quantized modules]): `n` is quantized::<method>; the
// QFunctional is the one whose activation_post_process the trace calls next in this block.
bool Lifter::lift_traced_qfunctional(const jit::Node* n, Frame& f) {
  auto it = qfunctional_ops().find(kind_str(n));
  if (it == qfunctional_ops().end()) return false;
  const std::string& method = it->second;
  // QFunctional.add_scalar / mul_scalar observe nothing: their trace does not tell which module
  // called them, and they use none of its state. They stay the plain quantized:: ops.
  if (method == "add_scalar" || method == "mul_scalar") return false;
  const size_t args = 2;  // (a, b) / (xs, dim)
  const jit::Node* get = observed_by(n);
  if (!get) return false;
  auto b = f.env.find(get->input(0));
  if (b == f.env.end() || !b->second.module) return false;
  const ModuleRef& qf = *b->second.module;
  const QClass* c = quant_class(plain_type_name(qf.module));
  if (!c || c->kind != QKind::Functional) return false;
  // The op's scale and zero point must be the QFunctional's.
  auto mine = qparams_at(n, args);
  const at::Tensor* s = nullptr;
  const at::Tensor* z = nullptr;
  if (const Weight* w = graph_->weights().find(join_path(qf.path, "scale"))) s = &w->tensor;
  if (const Weight* w = graph_->weights().find(join_path(qf.path, "zero_point"))) z = &w->tensor;
  if (!mine || !s || !z || s->item<double>() != mine->first || z->item<int64_t>() != mine->second)
    return false;
  if (n->inputs().size() != args + 2) return false;
  std::vector<Value*> ins;
  for (size_t i = 0; i < args; ++i) ins.push_back(value_of(f, n->input(i), n));
  Node* node = append("QFunctional." + method, ins, f, n);
  set_module_weights(node, qf.path);
  f.env[n->output()] =
      Binding{node->add_output(convert_type(n->output()->type()), name_hint(n->output())), {}};
  return true;
}

}  // namespace tt::ts
