// Activations: Relu, Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu, Elu, Gelu, Selu, Softplus,
// Softsign, ThresholdedRelu, Shrink, Clip, PRelu, Softmax, LogSoftmax.
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
      // x / (1 + |x|), as ONNX defines it (PyTorch's F.softsign computes the same).
      {"Softsign",
       [](Importer& im, const ox::NodeProto& n) {
         Value* x = im.tensor_in(n.input(0));
         Value* d =
             im.method("torch.add", {im.method("torch.abs", {x}), im.c_float(1.0), im.c_int(1)});
         im.call("torch.div", {x, d}, n);
       }},
      // x if x > alpha else 0
      {"ThresholdedRelu",
       [](Importer& im, const ox::NodeProto& n) {
         im.call(
             "F.threshold",
             {im.tensor_in(n.input(0)), im.c_float(im.attr_f(n, "alpha", 1.0)), im.c_float(0.0)},
             n);
       }},
      {"Shrink", [](Importer& im, const ox::NodeProto& n) { im.lift_shrink(n); }},
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

// Shrink: x - bias above lambd, x + bias below -lambd, else 0.
void Importer::lift_shrink(const ox::NodeProto& n) {
  double bias = attr_f(n, "bias", 0.0), lambd = attr_f(n, "lambd", 0.5);
  Value* x = tensor_in(n.input(0));
  auto shifted = [&](double b) {
    return b == 0.0 ? x : method("torch.add", {x, c_float(b), c_int(1)});
  };
  Value* below = method("torch.lt", {x, c_float(-lambd)});
  Value* above = method("torch.gt", {x, c_float(lambd)});
  Value* y = method("torch.where", {below, shifted(bias), c_float(0.0)});
  call("torch.where", {above, shifted(-bias), y}, n);
}

void Importer::lift_clip(const ox::NodeProto& n) {
  std::optional<double> lo, hi;
  if (opset_ < 11) {
    if (attr(n, "min")) lo = attr_f(n, "min", 0);
    if (attr(n, "max")) hi = attr_f(n, "max", 0);
  } else if ((has_input(n, 1) && !const_of(n, 1)) || (has_input(n, 2) && !const_of(n, 2))) {
    // Bounds computed at run time: torch.clamp with tensors (also min > max gives max).
    call("torch.clamp",
         {tensor_in(n.input(0)), has_input(n, 1) ? tensor_in(n.input(1)) : c_none(),
          has_input(n, 2) ? tensor_in(n.input(2)) : c_none()},
         n);
    return;
  } else {
    if (has_input(n, 1)) lo = const_of(n, 1)->item<double>();
    if (has_input(n, 2)) hi = const_of(n, 2)->item<double>();
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

// Note [PRelu slopes]
// ONNX broadcasts PRelu's slope to X numpy-style (aligned at the last dims); nn.PReLU's weight is
// one value or one per channel, dim 1 of X. The slope is nn.PReLU's when it has one element, or
// when its one non-1 dim lines up with X's dim 1: rank(X) - 1 dims with the others 1 (the
// exporter's [C, 1, 1] for a 4-d X, [C, 1] for 3-d, [C] for 2-d), or rank(X) dims [1, C, 1, ...].
// Any other slope (or a computed one) is written as ONNX defines it, where(x < 0, x * slope, x),
// never as F.prelu, which takes only a 1-d weight.
void Importer::lift_prelu(const ox::NodeProto& n) {
  const at::Tensor* w = const_of(n, 1);
  auto r = known_rank(n.input(0));
  bool module = w && r && w->numel() >= 1 && w->dim() <= *r;
  if (module && w->numel() > 1) {
    int64_t channel = 1 - (*r - w->dim());  // the slope's dim that lines up with X's dim 1
    module = *r >= 2 && channel >= 0 && channel < w->dim();
    for (int64_t k = 0; module && k < w->dim(); ++k)
      module = k == channel ? w->size(k) > 1 : w->size(k) == 1;
    if (auto xs = known_shape(n.input(0)); module && xs) module = (*xs)[1] == w->numel();
  }
  Value* x = tensor_in(n.input(0));
  if (!module) {
    Value* neg = method("torch.lt", {x, c_float(0.0)});
    Value* scaled = method("torch.mul", {x, tensor_in(n.input(1))});
    call("torch.where", {neg, scaled, x}, n);
    return;
  }
  Node* node = append("nn.PReLU", {x});
  node->set_module(module_path(n, n.input(1), "prelu"));
  node->set_scope(scope_parent(node->module()));
  node->attrs().set("num_parameters", w->numel());
  module_weight(node, "weight", w->flatten(), true);
  out(node, n);
}

void Importer::lift_softmax(const ox::NodeProto& n, bool log) {
  int64_t axis = attr_i(n, "axis", opset_ < 13 ? 1 : -1);
  const char* op = log ? "F.log_softmax" : "F.softmax";
  Value* x = tensor_in(n.input(0));
  if (opset_ < 13) {
    // Before opset 13 softmax works on the input flattened to 2-d at `axis`: PyTorch's over the
    // last dim, unless `axis` is the last dim, runs on x.flatten(axis) and is reshaped back.
    auto r = known_rank(n.input(0));
    if (!r) unsupported(n, "softmax (opset < 13) of an input of unknown rank");
    if (axis < 0) axis += *r;
    if (axis != *r - 1) {
      Value* flat = method("torch.flatten", {x, c_int(axis), c_int(-1)});
      Value* y = method(op, {flat, c_int(-1), c_none()});
      call("Tensor.view_as", {y, x}, n);
      return;
    }
  }
  call(op, {x, c_int(axis), c_none()}, n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
