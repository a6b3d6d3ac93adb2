// Normalization: BatchNormalization, LayerNormalization (modules), InstanceNormalization.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <cmath>

namespace tt::onnx_import {

Importer::OpList Importer::norm_ops() {
  return {
      {"BatchNormalization", [](Importer& im, const ox::NodeProto& n) { im.lift_batch_norm(n); }},
      {"InstanceNormalization",
       [](Importer& im, const ox::NodeProto& n) { im.lift_instance_norm(n); }},
      {"LayerNormalization", [](Importer& im, const ox::NodeProto& n) { im.lift_layer_norm(n); }},
  };
}

void Importer::lift_batch_norm(const ox::NodeProto& n) {
  for (int i = 1; i <= 4; ++i)
    if (!const_of(n, i)) unsupported(n, "scale/bias/mean/var are not constants");
  if (attr_i(n, "training_mode", 0) != 0) unsupported(n, "training_mode=1");
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty() && !consumers_[n.output(i)].empty())
      unsupported(n, "running statistics outputs are used");
  auto r = known_rank(n.input(0));
  int64_t dims = !r ? 2 : *r <= 3 ? 1 : *r - 2;
  if (dims > 3) unsupported(n, "a " + std::to_string(*r) + "-d input");
  Node* node = append("nn.BatchNorm" + std::to_string(dims) + "d", {tensor_in(n.input(0))});
  node->set_module(module_path(n, n.input(1), "bn"));
  node->set_scope(scope_parent(node->module()));
  const at::Tensor& scale = *const_of(n, 1);
  node->attrs().set("num_features", scale.size(0));
  node->attrs().set("eps", attr_f(n, "epsilon", 1e-5));
  // ONNX momentum weighs the running value (0.9), PyTorch the new batch (0.1).
  double momentum = 1.0 - attr_f(n, "momentum", 0.9);
  momentum = std::round(momentum * 1e6) / 1e6;
  node->attrs().set("momentum", momentum);
  node->attrs().set("affine", true);
  node->attrs().set("track_running_stats", true);
  module_weight(node, "weight", scale, true);
  module_weight(node, "bias", *const_of(n, 2), true);
  module_weight(node, "running_mean", *const_of(n, 3), false);
  module_weight(node, "running_var", *const_of(n, 4), false);
  module_weight(node, "num_batches_tracked", at::scalar_tensor(0, at::kLong), false);
  ++bn_count_;
  out(node, n);
}

void Importer::lift_layer_norm(const ox::NodeProto& n) {
  const at::Tensor* w = const_of(n, 1);
  const at::Tensor* b = const_of(n, 2);
  auto r = known_rank(n.input(0));
  int64_t axis = attr_i(n, "axis", -1);
  if (!w || (has_input(n, 2) && !b)) unsupported(n, "non-constant scale/bias");
  std::vector<int64_t> shape = w->sizes().vec();
  // Normalised dims: axis..end, which must be the scale's shape.
  int64_t tail = axis < 0 ? -axis : (r ? *r - axis : -1);
  if (tail != static_cast<int64_t>(shape.size()))
    unsupported(n, "scale shape does not match the axis");
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty() && !consumers_[n.output(i)].empty())
      unsupported(n, "mean/inv_std outputs are used");
  Node* node = append("nn.LayerNorm", {tensor_in(n.input(0))});
  node->set_module(module_path(n, n.input(1), "layer_norm"));
  node->set_scope(scope_parent(node->module()));
  node->attrs().set("normalized_shape", shape);
  node->attrs().set("eps", attr_f(n, "epsilon", 1e-5));
  node->attrs().set("elementwise_affine", true);
  module_weight(node, "weight", *w, true);
  module_weight(node, "bias", b ? *b : at::zeros_like(*w), true);
  out(node, n);
}

// GroupNorm and InstanceNorm export as this op; its scale/bias are plain tensors here.
void Importer::lift_instance_norm(const ox::NodeProto& n) {
  Value* x = tensor_in(n.input(0));
  call("F.instance_norm",
       {x, tensor_in(n.input(1)), tensor_in(n.input(2)), c_none(), c_none(), c_bool(true),
        c_float(0.1), c_float(attr_f(n, "epsilon", 1e-5)), c_bool(false)},
       n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
