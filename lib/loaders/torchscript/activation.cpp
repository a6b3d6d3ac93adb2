// Leaf recipes of the activation modules: one-input activations (nn.ReLU, nn.SiLU, ...),
// nn.Hardtanh / nn.ReLU6, nn.LeakyReLU, nn.PReLU, nn.ELU, nn.GELU, nn.Softmax / nn.LogSoftmax.
#include "loaders/torchscript/recipe.h"

namespace tt::ts {

// Activations of one input: `aten` (and `aten_` when the module has an inplace flag).
Recipe unary_recipe(std::string cls, std::string aten, bool has_inplace) {
  return [cls, aten, has_inplace](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string inplace_kind = aten + "_";
    const jit::Node* n = has_inplace ? single_op(ctx, {aten.c_str(), inplace_kind.c_str()})
                                     : single_op(ctx, {aten.c_str()});
    if (!n) return std::nullopt;
    if (n->inputs().size() != 1) return reject(ctx, "unexpected arguments to " + aten);
    LeafMatch m;
    m.op = cls;
    if (has_inplace) m.attrs.set("inplace", is_inplace(n));
    return m;
  };
}

Recipe hardtanh_recipe(bool relu6) {
  return [relu6](LeafCtx& ctx) -> std::optional<LeafMatch> {
    const jit::Node* n = single_op(ctx, {"aten::hardtanh", "aten::hardtanh_"});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    double lo = a.f(1), hi = a.f(2);
    if (!a.ok()) return reject(ctx, a.why());
    LeafMatch m;
    if (relu6) {
      if (lo != 0.0 || hi != 6.0) return reject(ctx, "bounds are not 0..6");
      m.op = "nn.ReLU6";
    } else {
      m.op = "nn.Hardtanh";
      m.attrs.set("min_val", lo);
      m.attrs.set("max_val", hi);
    }
    m.attrs.set("inplace", is_inplace(n));
    return m;
  };
}

std::optional<LeafMatch> leaky_relu_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::leaky_relu", "aten::leaky_relu_"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  double slope = a.f(1);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.LeakyReLU";
  m.attrs.set("negative_slope", slope);
  m.attrs.set("inplace", is_inplace(n));
  return m;
}

std::optional<LeafMatch> prelu_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::prelu"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  a.attr(1, "weight");
  if (!a.ok()) return reject(ctx, a.why());
  at::Tensor w = ctx.tensor("weight");
  if (!w.defined() || w.dim() != 1) return reject(ctx, "unexpected weight shape");
  LeafMatch m;
  m.op = "nn.PReLU";
  m.attrs.set("num_parameters", w.size(0));
  m.weights = {"weight"};
  return m;
}

std::optional<LeafMatch> elu_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::elu", "aten::elu_"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  double alpha = a.f(1), scale = a.f(2), input_scale = a.f(3);
  if (!a.ok()) return reject(ctx, a.why());
  if (scale != 1.0 || input_scale != 1.0) return reject(ctx, "scaled ELU");
  LeafMatch m;
  m.op = "nn.ELU";
  m.attrs.set("alpha", alpha);
  m.attrs.set("inplace", is_inplace(n));
  return m;
}

std::optional<LeafMatch> gelu_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::gelu"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  std::string approximate = a.s(1);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.GELU";
  m.attrs.set("approximate", approximate);
  return m;
}

Recipe softmax_recipe(std::string cls, const char* aten) {
  return [cls, aten](LeafCtx& ctx) -> std::optional<LeafMatch> {
    const jit::Node* n = single_op(ctx, {aten});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    int64_t dim = a.i(1);
    if (!a.ok()) return reject(ctx, a.why());
    if (!a.none(2)) return reject(ctx, "softmax with a dtype");
    LeafMatch m;
    m.op = cls;
    m.attrs.set("dim", dim);
    return m;
  };
}

}  // namespace tt::ts
