// Leaf recipes of the modules that move or resample data: nn.Flatten, nn.Dropout, nn.Identity,
// nn.Upsample, nn.PixelShuffle, nn.ZeroPad2d / nn.ConstantPad2d.
#include "loaders/torchscript/recipe.h"

namespace tt::ts {

std::optional<LeafMatch> flatten_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::flatten"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  int64_t start = a.i(1), end = a.i(2);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.Flatten";
  m.attrs.set("start_dim", start);
  m.attrs.set("end_dim", end);
  return m;
}

std::optional<LeafMatch> dropout_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::dropout", "aten::dropout_"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  double p = a.f(1);
  a.b(2);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.Dropout";
  m.attrs.set("p", p);
  m.attrs.set("inplace", is_inplace(n));
  return m;
}

std::optional<LeafMatch> identity_recipe(LeafCtx& ctx) {
  if (!ctx.g.ops().empty() || ctx.g.num_inputs() != 2 || !ctx.g.is_input(ctx.g.returned(), 1))
    return reject(ctx, "forward is not the identity");
  LeafMatch m;
  m.op = "nn.Identity";
  return m;
}

std::optional<LeafMatch> upsample_recipe(LeafCtx& ctx) {
  static const std::map<std::string, std::pair<const char*, bool>> modes = {
      // ATen op -> (mode, has align_corners argument)
      {"aten::upsample_nearest1d", {"nearest", false}},
      {"aten::upsample_nearest2d", {"nearest", false}},
      {"aten::upsample_nearest3d", {"nearest", false}},
      {"aten::_upsample_nearest_exact1d", {"nearest-exact", false}},
      {"aten::_upsample_nearest_exact2d", {"nearest-exact", false}},
      {"aten::_upsample_nearest_exact3d", {"nearest-exact", false}},
      {"aten::upsample_linear1d", {"linear", true}},
      {"aten::upsample_bilinear2d", {"bilinear", true}},
      {"aten::upsample_bicubic2d", {"bicubic", true}},
      {"aten::upsample_trilinear3d", {"trilinear", true}},
  };
  const auto& ops = ctx.g.ops();
  if (ops.size() != 1) return reject(ctx, "forward is not a single upsample op");
  auto it = modes.find(kind_str(ops[0]));
  if (it == modes.end()) return reject(ctx, "forward calls " + kind_str(ops[0]));
  const jit::Node* n = single_op(ctx, {it->first.c_str()});
  if (!n) return std::nullopt;
  const c10::FunctionSchema* s = n->maybeSchema();
  if (!s || (s->overload_name() != "vec" && !s->overload_name().empty()))
    return reject(ctx, "not the .vec or default overload");
  Args a(ctx, n);
  bool has_align = it->second.second;
  size_t scale_at = has_align ? 3 : 2;
  LeafMatch m;
  m.op = "nn.Upsample";
  if (s->overload_name().empty()) {
    // torch 2.x traces nn.Upsample(size=...) to the default overload: (input, output_size,
    // [align_corners,] scales...). With every scale None it computes what size= does.
    for (size_t i = scale_at; i < n->inputs().size(); ++i)
      if (!a.none(i)) return reject(ctx, "explicit scales next to an output size");
    auto size = ctx.g.as_ints(n->input(1));
    if (!size) return reject(ctx, "size is not constant");
    m.attrs.set("size", *size);
    m.attrs.set("scale_factor", NoneAttr{});
  } else if (a.none(1)) {
    m.attrs.set("size", NoneAttr{});
  } else {
    auto size = ctx.g.as_ints(n->input(1));
    if (!size) return reject(ctx, "size is not constant");
    m.attrs.set("size", *size);
  }
  if (s->overload_name().empty()) {
    // scale_factor set above
  } else if (a.none(scale_at)) {
    m.attrs.set("scale_factor", NoneAttr{});
  } else {
    auto scale = ctx.g.as_doubles(n->input(scale_at));
    if (!scale) return reject(ctx, "scale_factor is not constant");
    m.attrs.set("scale_factor", *scale);
  }
  m.attrs.set("mode", std::string(it->second.first));
  if (has_align) {
    bool align = a.b(2);
    if (!a.ok()) return reject(ctx, a.why());
    m.attrs.set("align_corners", align);
  } else {
    m.attrs.set("align_corners", NoneAttr{});
  }
  return m;
}

std::optional<LeafMatch> pixel_shuffle_recipe(LeafCtx& ctx) {
  const jit::Node* n = single_op(ctx, {"aten::pixel_shuffle"});
  if (!n) return std::nullopt;
  Args a(ctx, n);
  int64_t r = a.i(1);
  if (!a.ok()) return reject(ctx, a.why());
  LeafMatch m;
  m.op = "nn.PixelShuffle";
  m.attrs.set("upscale_factor", r);
  return m;
}

Recipe pad2d_recipe(bool zero) {
  return [zero](LeafCtx& ctx) -> std::optional<LeafMatch> {
    const jit::Node* n = single_op(ctx, {"aten::pad", "aten::constant_pad_nd"});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    std::vector<int64_t> padding = a.ints(1, 4);
    double value = 0.0;
    if (kind_str(n) == "aten::pad") {
      if (a.s(2) != "constant" && a.ok()) return reject(ctx, "not constant padding");
      if (!a.none(3)) value = a.f(3);
    } else {
      value = a.f(2);
    }
    if (!a.ok()) return reject(ctx, a.why());
    LeafMatch m;
    m.op = zero ? "nn.ZeroPad2d" : "nn.ConstantPad2d";
    m.attrs.set("padding", padding);
    if (zero) {
      if (value != 0.0) return reject(ctx, "non-zero padding value");
    } else {
      m.attrs.set("value", value);
    }
    return m;
  };
}

}  // namespace tt::ts
