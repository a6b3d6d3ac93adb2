// Leaf recipes of the normalisation modules: nn.BatchNorm{N}d, nn.InstanceNorm{N}d, nn.LayerNorm,
// nn.RMSNorm and nn.GroupNorm.
#include "loaders/torchscript/recipe.h"

namespace tt::ts {

// BatchNorm{N}d and InstanceNorm{N}d share the argument layout
// (input, weight, bias, running_mean, running_var, training/use_input_stats, momentum, eps, cudnn).
Recipe norm_recipe(std::string cls, const char* aten) {
  return [cls, aten](LeafCtx& ctx) -> std::optional<LeafMatch> {
    const jit::Node* n = single_op(ctx, {aten});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    bool w = a.attr_or_none(1, "weight");
    bool b = a.attr_or_none(2, "bias");
    bool rm = a.attr_or_none(3, "running_mean");
    bool rv = a.attr_or_none(4, "running_var");
    double momentum = a.f(6);
    double eps = a.f(7);
    if (!a.ok()) return reject(ctx, a.why());
    if (w != b || rm != rv)
      return reject(ctx, "only some of the affine/running-stat tensors are used");
    at::Tensor t = w ? ctx.tensor("weight") : rm ? ctx.tensor("running_mean") : at::Tensor();
    if (!t.defined() || t.dim() != 1)
      return reject(ctx,
                    "num_features cannot be recovered (no affine weight and no running stats)");
    LeafMatch m;
    m.op = cls;
    m.attrs.set("num_features", t.size(0));
    m.attrs.set("eps", eps);
    m.attrs.set("momentum", momentum);
    m.attrs.set("affine", w);
    m.attrs.set("track_running_stats", rm);
    if (w) m.weights.insert({"weight", "bias"});
    if (rm) m.weights.insert({"running_mean", "running_var", "num_batches_tracked"});
    return m;
  };
}

std::optional<LeafMatch> layer_norm_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::layer_norm"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  auto shape = ctx.g.as_ints(n->input(1));
  bool w = a.attr_or_none(2, "weight");
  bool b = a.attr_or_none(3, "bias");
  double eps = a.f(4);
  if (!a.ok()) return reject(ctx, a.why());
  if (!shape) return reject(ctx, "normalized_shape is not constant");
  if (w != b) return reject(ctx, "only one of weight/bias is used");
  LeafMatch m;
  m.op = "nn.LayerNorm";
  m.attrs.set("normalized_shape", *shape);
  m.attrs.set("eps", eps);
  m.attrs.set("elementwise_affine", w);
  if (w) m.weights = {"weight", "bias"};
  return m;
}

// nn.RMSNorm (torch >= 2.4): aten::rms_norm(input, normalized_shape, weight?, eps?).
std::optional<LeafMatch> rms_norm_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::rms_norm"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  auto shape = ctx.g.as_ints(n->input(1));
  bool w = a.attr_or_none(2, "weight");
  std::optional<double> eps;
  if (!a.none(3)) eps = a.f(3);
  if (!a.ok()) return reject(ctx, a.why());
  if (!shape) return reject(ctx, "normalized_shape is not constant");
  LeafMatch m;
  m.op = "nn.RMSNorm";
  m.attrs.set("normalized_shape", *shape);
  if (eps) {
    m.attrs.set("eps", *eps);
  } else {
    m.attrs.set("eps", NoneAttr{});
  }
  m.attrs.set("elementwise_affine", w);
  if (w) m.weights = {"weight"};
  return m;
}

std::optional<LeafMatch> group_norm_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::group_norm"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  int64_t groups = a.i(1);
  bool w = a.attr_or_none(2, "weight");
  bool b = a.attr_or_none(3, "bias");
  double eps = a.f(4);
  if (!a.ok()) return reject(ctx, a.why());
  if (!w || !b) return reject(ctx, "num_channels cannot be recovered without the affine weight");
  at::Tensor t = ctx.tensor("weight");
  if (!t.defined() || t.dim() != 1) return reject(ctx, "unexpected weight shape");
  LeafMatch m;
  m.op = "nn.GroupNorm";
  m.attrs.set("num_groups", groups);
  m.attrs.set("num_channels", t.size(0));
  m.attrs.set("eps", eps);
  m.attrs.set("affine", true);
  m.weights = {"weight", "bias"};
  return m;
}

}  // namespace tt::ts
