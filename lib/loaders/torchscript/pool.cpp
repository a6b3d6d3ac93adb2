// Leaf recipes of the pooling modules: nn.MaxPool{N}d, nn.AvgPool{N}d, nn.Adaptive{Avg,Max}Pool{N}d.
#include "loaders/torchscript/recipe.h"

namespace tt::ts {

// nn.MaxPool{N}d / nn.AvgPool{N}d: aten::{max,avg}_pool{N}d(input, kernel_size, stride, padding,
// then max: dilation, ceil_mode; avg: ceil_mode, count_include_pad, divisor_override). An empty
// stride is the kernel's.
Recipe window_pool_recipe(int64_t dims, bool max) {
  return [dims, max](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string kind = max ? "max" : "avg";
    std::string aten = "aten::" + kind + "_pool" + std::to_string(dims) + "d";
    const jit::Node* n = single_op(ctx, {aten.c_str()});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    size_t d = static_cast<size_t>(dims);
    std::vector<int64_t> kernel = a.ints(1, d);
    auto stride = ctx.g.as_ints(n->input(2));
    std::vector<int64_t> padding = a.ints(3, d), dilation;
    bool ceil_mode = false, count_include_pad = false;
    if (max) {
      dilation = a.ints(4, d);
      ceil_mode = a.b(5);
    } else {
      ceil_mode = a.b(4);
      count_include_pad = a.b(5);
    }
    if (!a.ok()) return reject(ctx, a.why());
    if (!stride || (!stride->empty() && stride->size() != d))
      return reject(ctx, "stride is not constant");
    LeafMatch m;
    m.op = std::string(max ? "nn.MaxPool" : "nn.AvgPool") + std::to_string(dims) + "d";
    m.attrs.set("kernel_size", kernel);
    m.attrs.set("stride", stride->empty() ? kernel : *stride);
    m.attrs.set("padding", padding);
    if (max) {
      m.attrs.set("dilation", dilation);
      m.attrs.set("return_indices", false);
      m.attrs.set("ceil_mode", ceil_mode);
      return m;
    }
    m.attrs.set("ceil_mode", ceil_mode);
    m.attrs.set("count_include_pad", count_include_pad);
    if (dims > 1) {  // AvgPool1d has no divisor_override
      if (a.none(6)) {
        m.attrs.set("divisor_override", NoneAttr{});
      } else {
        int64_t div = a.i(6);
        if (!a.ok()) return reject(ctx, a.why());
        m.attrs.set("divisor_override", div);
      }
    }
    return m;
  };
}

Recipe adaptive_pool_recipe(int64_t dims, bool max) {
  return [dims, max](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string kind = max ? "Max" : "Avg";
    std::string aten = std::string("aten::adaptive_") + (max ? "max" : "avg") + "_pool" +
                       std::to_string(dims) + "d";
    const jit::Node* n = single_op(ctx, {aten.c_str()});
    if (!n) return std::nullopt;
    Args a(ctx, n);
    std::vector<int64_t> size = a.ints(1, static_cast<size_t>(dims));
    if (!a.ok()) return reject(ctx, a.why());
    LeafMatch m;
    m.op = "nn.Adaptive" + kind + "Pool" + std::to_string(dims) + "d";
    m.attrs.set("output_size", size);
    if (max) m.attrs.set("return_indices", false);
    return m;
  };
}

}  // namespace tt::ts
