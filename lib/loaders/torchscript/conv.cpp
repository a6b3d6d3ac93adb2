// Leaf recipes of the convolution modules: nn.Conv{1,2,3}d and nn.ConvTranspose{1,2,3}d.
#include "loaders/torchscript/recipe.h"

#include <algorithm>

namespace tt::ts {

Recipe conv_recipe(int64_t dims, bool transposed) {
  return [dims, transposed](LeafCtx& ctx) -> std::optional<LeafMatch> {
    std::string cls =
        std::string(transposed ? "nn.ConvTranspose" : "nn.Conv") + std::to_string(dims) + "d";
    const auto& ops = ctx.g.ops();
    const jit::Node* pad = nullptr;
    const jit::Node* conv = nullptr;
    if (ops.size() == 1) {
      conv = ops[0];
    } else if (ops.size() == 2 && kind_str(ops[0]) == "aten::pad") {
      pad = ops[0];
      conv = ops[1];
    } else {
      return reject(ctx, "forward is not a single convolution");
    }
    std::string k = kind_str(conv);
    // Scripted modules call the public ops: conv{N}d(input, weight, bias, stride, padding,
    // dilation, groups) / conv_transpose{N}d(input, weight, bias, stride, padding,
    // output_padding, groups, dilation).
    std::string nd = std::to_string(dims) + "d";
    bool pub = k == (transposed ? "aten::conv_transpose" : "aten::conv") + nd;
    bool mode = k == "aten::_convolution_mode" ||
                (pub && !transposed && conv->inputs().size() > 4 && ctx.g.as_str(conv->input(4)));
    if (k != "aten::_convolution" && !pub && !(mode && !transposed && !pad))
      return reject(ctx, "forward calls " + k);
    if (ctx.g.num_inputs() != 2 || ctx.g.returned() != conv->output())
      return reject(ctx, "forward does not return the convolution");
    Args a(ctx, conv);
    if (pad) {
      if (!ctx.g.is_input(pad->input(0), 1) || conv->input(0) != pad->output())
        return reject(ctx, "padding does not feed the convolution");
    } else {
      a.data(0);
    }
    a.attr(1, "weight");
    bool bias = a.attr_or_none(2, "bias");
    std::vector<int64_t> stride = a.ints(3, dims);
    std::vector<int64_t> dilation = pub && transposed ? std::vector<int64_t>{} : a.ints(5, dims);
    std::vector<int64_t> padding, output_padding;
    std::string padding_str;
    int64_t groups = 1;
    if (mode) {
      padding_str = a.s(4);
      groups = a.i(6);
    } else if (pub && !transposed) {
      padding = a.ints(4, dims);
      groups = a.i(6);
    } else if (pub) {
      padding = a.ints(4, dims);
      output_padding = a.ints(5, dims);
      groups = a.i(6);
      dilation = a.ints(7, dims);
    } else {
      padding = a.ints(4, dims);
      if (a.ok() && a.b(6) != transposed)
        return reject(ctx, "transposed flag does not match the type");
      output_padding = a.ints(7, dims);
      groups = a.i(8);
    }
    if (!a.ok()) return reject(ctx, a.why());
    if (!transposed &&
        std::any_of(output_padding.begin(), output_padding.end(), [](int64_t x) { return x != 0; }))
      return reject(ctx, "non-zero output_padding on a forward convolution");
    at::Tensor w = ctx.tensor("weight");
    if (!w.defined() || w.dim() != dims + 2 || groups < 1)
      return reject(ctx, "unexpected weight shape");
    std::string padding_mode = "zeros";
    if (pad) {
      Args p(ctx, pad);
      std::vector<int64_t> amounts = p.ints(1, static_cast<size_t>(2 * dims));
      padding_mode = p.s(2);
      if (!p.ok()) return reject(ctx, p.why());
      if (!p.none(3)) return reject(ctx, "padding with a value");
      if (padding_mode != "reflect" && padding_mode != "replicate" && padding_mode != "circular")
        return reject(ctx, "padding mode " + padding_mode);
      if (std::any_of(padding.begin(), padding.end(), [](int64_t x) { return x != 0; }))
        return reject(ctx, "explicit padding plus convolution padding");
      // F.pad lists the last dim first: (w_left, w_right, h_top, h_bottom, ...).
      padding.assign(static_cast<size_t>(dims), 0);
      for (int64_t d = 0; d < dims; ++d) {
        size_t at = static_cast<size_t>(2 * (dims - 1 - d));
        if (amounts[at] != amounts[at + 1]) return reject(ctx, "asymmetric padding");
        padding[static_cast<size_t>(d)] = amounts[at];
      }
      if (transposed) return reject(ctx, "padding_mode on a transposed convolution");
    }
    LeafMatch m;
    m.op = cls;
    int64_t in_ch = transposed ? w.size(0) : w.size(1) * groups;
    int64_t out_ch = transposed ? w.size(1) * groups : w.size(0);
    m.attrs.set("in_channels", in_ch);
    m.attrs.set("out_channels", out_ch);
    m.attrs.set("kernel_size", tail_sizes(w, 2));
    m.attrs.set("stride", stride);
    if (mode)
      m.attrs.set("padding", padding_str);
    else
      m.attrs.set("padding", padding);
    if (transposed) {
      m.attrs.set("output_padding", output_padding);
      m.attrs.set("groups", groups);
      m.attrs.set("bias", bias);
      m.attrs.set("dilation", dilation);
    } else {
      m.attrs.set("dilation", dilation);
      m.attrs.set("groups", groups);
      m.attrs.set("bias", bias);
    }
    m.attrs.set("padding_mode", padding_mode);
    m.weights = {"weight"};
    if (bias) m.weights.insert("bias");
    return m;
  };
}

}  // namespace tt::ts
