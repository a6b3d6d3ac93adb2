// Normalization: BatchNormalization, LayerNormalization (modules, or the functional call when
// their parameters are computed), InstanceNormalization, LRN.
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
      {"LRN", [](Importer& im, const ox::NodeProto& n) { im.lift_lrn(n); }},
  };
}

void Importer::lift_batch_norm(const ox::NodeProto& n) {
  bool training = attr_i(n, "training_mode", 0) != 0;
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty() && !consumers_[n.output(i)].empty())
      unsupported(n, "running statistics outputs are used");
  // ONNX momentum weighs the running value (0.9), PyTorch the new batch (0.1).
  double momentum = 1.0 - attr_f(n, "momentum", 0.9);
  momentum = std::round(momentum * 1e6) / 1e6;
  double eps = attr_f(n, "epsilon", 1e-5);
  bool constants = true;
  for (int i = 1; i <= 4; ++i) constants = constants && const_of(n, i);
  if (training || !constants) {
    // Statistics or affine parameters computed at run time, or the batch's own statistics
    // (training_mode=1: Y only, normalised with the batch mean and biased variance).
    Value* none = c_none();
    call("F.batch_norm",
         {tensor_in(n.input(0)), tensor_in(n.input(1)), tensor_in(n.input(2)),
          training ? none : tensor_in(n.input(3)), training ? none : tensor_in(n.input(4)),
          c_bool(training), c_float(momentum), c_float(eps), c_bool(true)},
         n);
    return;
  }
  auto r = known_rank(n.input(0));
  int64_t dims = !r ? 2 : *r <= 3 ? 1 : *r - 2;
  if (dims > 3) unsupported(n, "a " + std::to_string(*r) + "-d input");
  Node* node = append("nn.BatchNorm" + std::to_string(dims) + "d", {tensor_in(n.input(0))});
  node->set_module(module_path(n, n.input(1), "bn"));
  node->set_scope(scope_parent(node->module()));
  const at::Tensor& scale = *const_of(n, 1);
  node->attrs().set("num_features", scale.size(0));
  node->attrs().set("eps", eps);
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
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty() && !consumers_[n.output(i)].empty())
      unsupported(n, "mean/inv_std outputs are used");
  // Normalised dims: axis..end, which must be the scale's shape (PyTorch does not broadcast it).
  auto shape = w ? std::optional<std::vector<int64_t>>(w->sizes().vec()) : known_shape(n.input(1));
  int64_t tail = axis < 0 ? -axis : (r ? *r - axis : -1);
  if (!shape || tail != static_cast<int64_t>(shape->size()))
    unsupported(n,
                "a scale whose shape is not the normalised dims' (PyTorch's layer_norm does "
                "not broadcast it)");
  if (auto xs = known_shape(n.input(0))) {
    std::vector<int64_t> normalized(xs->end() - tail, xs->end());
    if (normalized != *shape)
      unsupported(n,
                  "a scale whose shape is not the normalised dims' (PyTorch's layer_norm does "
                  "not broadcast it)");
  }
  double eps = attr_f(n, "epsilon", 1e-5);
  if (!w || (has_input(n, 2) && !b)) {
    call("F.layer_norm",
         {tensor_in(n.input(0)), c_ints(*shape), tensor_in(n.input(1)),
          has_input(n, 2) ? tensor_in(n.input(2)) : c_none(), c_float(eps), c_bool(true)},
         n);
    return;
  }
  Node* node = append("nn.LayerNorm", {tensor_in(n.input(0))});
  node->set_module(module_path(n, n.input(1), "layer_norm"));
  node->set_scope(scope_parent(node->module()));
  node->attrs().set("normalized_shape", *shape);
  node->attrs().set("eps", eps);
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

// LRN: x / (bias + alpha / size * sum of x^2 over channels c - (size - 1) // 2 ...
// c + ceil((size - 1) / 2))^beta. F.local_response_norm centres an even window the other way
// (size // 2 before), so the sum is written out: the squares padded along the channels, averaged
// over the window (a [size, 1] pooling of x^2 seen as [N, 1, C, rest]), in ONNX's placement.
void Importer::lift_lrn(const ox::NodeProto& n) {
  int64_t size = attr_i(n, "size", 0);
  if (size <= 0) unsupported(n, "no size");
  double alpha = attr_f(n, "alpha", 1e-4), beta = attr_f(n, "beta", 0.75),
         bias = attr_f(n, "bias", 1.0);
  auto r = known_rank(n.input(0));
  if (!r || *r < 3) unsupported(n, "an input of unknown rank or with fewer than 3 dims");
  Value* x = tensor_in(n.input(0));
  Value* sq = method("torch.mul", {x, x});
  sq =
      method("Tensor.reshape",
             {sq, int_list({size_of(n.input(0), 0), c_int(1), size_of(n.input(0), 1), c_int(-1)})});
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  sq = method("F.pad", {sq, c_ints({0, 0, before, after}), c_str("constant"), c_float(0.0)});
  Value* mean = method("F.avg_pool2d", {sq, c_ints({size, 1}), c_ints({1, 1}), c_ints({0, 0}),
                                        c_bool(false), c_bool(true), c_none()});
  mean = method("Tensor.view_as", {mean, x});
  Value* d =
      method("torch.add", {method("torch.mul", {mean, c_float(alpha)}), c_float(bias), c_int(1)});
  call("torch.div", {x, method("torch.pow", {d, c_float(beta)})}, n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
