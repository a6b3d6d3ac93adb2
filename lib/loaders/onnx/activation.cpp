// Activations: Relu, Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu, Elu, Gelu, Selu, Softplus,
// Clip, PRelu, Softmax, LogSoftmax.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <cmath>

namespace tt::onnx_import {

Importer::OpList Importer::activation_ops() {
  return {
      {"Relu", [](Importer& im,
                  const ox::NodeProto& n) { im.call("F.relu", {im.tensor_in(n.input(0))}, n); }},
      {"Sigmoid",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("torch.sigmoid", {im.tensor_in(n.input(0))}, n);
       }},
      {"Tanh",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("torch.tanh", {im.tensor_in(n.input(0))}, n);
       }},
      {"HardSwish",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("F.hardswish", {im.tensor_in(n.input(0))}, n);
       }},
      {"HardSigmoid", [](Importer& im, const ox::NodeProto& n) { im.lift_hard_sigmoid(n); }},
      {"LeakyRelu",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("F.leaky_relu",
                 {im.tensor_in(n.input(0)), im.c_float(im.attr_f(n, "alpha", 0.01))}, n);
       }},
      {"Elu",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("F.elu",
                 {im.tensor_in(n.input(0)), im.c_float(im.attr_f(n, "alpha", 1.0)), im.c_int(1),
                  im.c_int(1)},
                 n);
       }},
      {"Gelu",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("F.gelu",
                 {im.tensor_in(n.input(0)), im.c_str(im.attr_s(n, "approximate", "none"))}, n);
       }},
      {"Clip", [](Importer& im, const ox::NodeProto& n) { im.lift_clip(n); }},
      {"Softmax", [](Importer& im, const ox::NodeProto& n) { im.lift_softmax(n, false); }},
      {"LogSoftmax", [](Importer& im, const ox::NodeProto& n) { im.lift_softmax(n, true); }},
      {"PRelu", [](Importer& im, const ox::NodeProto& n) { im.lift_prelu(n); }},
      // ONNX has no threshold; above torch's 20 the two differ by < 1e-8
      {"Softplus",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("F.softplus", {im.tensor_in(n.input(0)), im.c_int(1), im.c_int(20)}, n);
       }},
      {"Selu", [](Importer& im, const ox::NodeProto& n) { im.lift_selu(n); }},
  };
}

void Importer::lift_hard_sigmoid(const ox::NodeProto& n) {
  double alpha = attr_f(n, "alpha", 0.2), beta = attr_f(n, "beta", 0.5);
  Value* x = tensor_in(n.input(0));
  if (std::abs(alpha - 1.0 / 6.0) < 1e-6 && std::abs(beta - 0.5) < 1e-6) {
    call("F.hardsigmoid", {x}, n);
    return;
  }
  Value* y = method("torch.mul", {x, c_float(alpha)});
  y = method("torch.add", {y, c_float(beta), c_int(1)});
  call("torch.clamp", {y, c_float(0.0), c_float(1.0)}, n);
}

void Importer::lift_clip(const ox::NodeProto& n) {
  std::optional<double> lo, hi;
  if (opset_ < 11) {
    if (attr(n, "min")) lo = attr_f(n, "min", 0);
    if (attr(n, "max")) hi = attr_f(n, "max", 0);
  } else {
    if (has_input(n, 1)) {
      const at::Tensor* t = const_of(n, 1);
      if (!t) unsupported(n, "a non-constant min");
      lo = t->item<double>();
    }
    if (has_input(n, 2)) {
      const at::Tensor* t = const_of(n, 2);
      if (!t) unsupported(n, "a non-constant max");
      hi = t->item<double>();
    }
  }
  Value* x = tensor_in(n.input(0));
  if (lo && hi && *lo == 0.0 && *hi == 6.0) return void(call("F.relu6", {x}, n));
  if (lo && hi) return void(call("F.hardtanh", {x, c_float(*lo), c_float(*hi)}, n));
  if (lo && *lo == 0.0 && !hi) return void(call("F.relu", {x}, n));
  call("torch.clamp", {x, lo ? c_float(*lo) : c_none(), hi ? c_float(*hi) : c_none()}, n);
}

void Importer::lift_selu(const ox::NodeProto& n) {
  // torch's constants, as the float32 attributes ONNX stores them.
  const float alpha = 1.67326319217681884765625f, gamma = 1.05070102214813232421875f;
  const auto* a = attr(n, "alpha");
  const auto* g = attr(n, "gamma");
  Value* x = tensor_in(n.input(0));
  if ((!a || a->f() == alpha) && (!g || g->f() == gamma)) return void(call("F.selu", {x}, n));
  // gamma * elu(x, alpha)
  Value* e = method("F.elu", {x, c_float(attr_f(n, "alpha", alpha)), c_int(1), c_int(1)});
  call("torch.mul", {e, c_float(attr_f(n, "gamma", gamma))}, n);
}

void Importer::lift_prelu(const ox::NodeProto& n) {
  const at::Tensor* w = const_of(n, 1);
  auto r = known_rank(n.input(0));
  // nn.PReLU's weight is per channel (dim 1) or a single value: the exporter writes [C,1,1].
  bool per_channel = w && r && *r >= 2 && w->dim() <= *r - 1 && w->numel() >= 1;
  if (per_channel && w->numel() > 1)
    for (int64_t k = 1; k < w->dim(); ++k) per_channel = per_channel && w->size(k) == 1;
  if (!per_channel) return void(call("F.prelu", {tensor_in(n.input(0)), tensor_in(n.input(1))}, n));
  Node* node = append("nn.PReLU", {tensor_in(n.input(0))});
  node->set_module(module_path(n, n.input(1), "prelu"));
  node->set_scope(scope_parent(node->module()));
  node->attrs().set("num_parameters", w->numel());
  module_weight(node, "weight", w->flatten(), true);
  out(node, n);
}

void Importer::lift_softmax(const ox::NodeProto& n, bool log) {
  int64_t axis = attr_i(n, "axis", opset_ < 13 ? 1 : -1);
  auto r = known_rank(n.input(0));
  if (opset_ < 13) {
    // Before opset 13 softmax works on the input flattened to 2-d at `axis`: the same as
    // PyTorch's only when axis is the last dim.
    if (!r || (axis != -1 && axis != *r - 1))
      unsupported(n, "softmax (opset < 13) over several dims");
  }
  const char* op = log ? "F.log_softmax" : "F.softmax";
  call(op, {tensor_in(n.input(0)), c_int(axis), c_none()}, n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
