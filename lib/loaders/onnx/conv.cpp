// Convolutions and pooling: Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool,
// GlobalMaxPool.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <algorithm>
#include <limits>

namespace tt::onnx_import {

Importer::OpList Importer::conv_ops() {
  return {
      {"Conv", [](Importer& im, const ox::NodeProto& n) { im.lift_conv(n, false); }},
      {"ConvTranspose", [](Importer& im, const ox::NodeProto& n) { im.lift_conv(n, true); }},
      {"MaxPool", [](Importer& im, const ox::NodeProto& n) { im.lift_pool(n, true); }},
      {"AveragePool", [](Importer& im, const ox::NodeProto& n) { im.lift_pool(n, false); }},
      {"GlobalAveragePool",
       [](Importer& im, const ox::NodeProto& n) { im.lift_global_pool(n, false); }},
      {"GlobalMaxPool", [](Importer& im, const ox::NodeProto& n) { im.lift_global_pool(n, true); }},
  };
}

Importer::Pads Importer::spatial_pads(const ox::NodeProto& n, size_t dims,
                                      const std::vector<int64_t>& kernel,
                                      const std::vector<int64_t>& stride,
                                      const std::vector<int64_t>& dilation) {
  std::string auto_pad = attr_s(n, "auto_pad", "NOTSET");
  Pads p{std::vector<int64_t>(dims, 0), std::vector<int64_t>(dims, 0)};
  if (auto_pad == "VALID") return p;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // Output size ceil(in / stride); the odd pixel of the total goes to the end (UPPER) or
    // the beginning (LOWER).
    auto s = known_shape(n.input(0));
    if (!s || s->size() != dims + 2)
      unsupported(n, "auto_pad=" + auto_pad + " on an input without a static shape");
    for (size_t k = 0; k < dims; ++k) {
      int64_t in = (*s)[k + 2], st = stride[k];
      int64_t extent = (kernel[k] - 1) * dilation[k] + 1;
      int64_t total = std::max<int64_t>(0, ((in + st - 1) / st - 1) * st + extent - in);
      int64_t small = total / 2;
      p.begin[k] = auto_pad == "SAME_UPPER" ? small : total - small;
      p.end[k] = total - p.begin[k];
    }
    return p;
  }
  if (auto_pad != "NOTSET") unsupported(n, "auto_pad=" + auto_pad);
  if (auto pads = attr_ints(n, "pads")) {
    if (pads->size() != 2 * dims) unsupported(n, "pads of the wrong length");
    p.begin.assign(pads->begin(), pads->begin() + static_cast<std::ptrdiff_t>(dims));
    p.end.assign(pads->begin() + static_cast<std::ptrdiff_t>(dims), pads->end());
  }
  return p;
}

// PyTorch's conv/pool padding is symmetric: the op gets the smaller side of each dim as
// `padding`, and the excess on the larger side is an F.pad with `value` before it.
Value* Importer::pad_excess(Value* x, const Pads& p, double value, std::vector<int64_t>& padding) {
  size_t dims = p.begin.size();
  padding.clear();
  for (size_t k = 0; k < dims; ++k) padding.push_back(std::min(p.begin[k], p.end[k]));
  std::vector<int64_t> tp;  // F.pad order: last dim first, (begin, end) pairs
  bool any = false;
  for (size_t k = dims; k-- > 0;) {
    tp.push_back(p.begin[k] - padding[k]);
    tp.push_back(p.end[k] - padding[k]);
    any = any || tp[tp.size() - 2] || tp.back();
  }
  if (!any) return x;
  return method("F.pad", {x, c_ints(tp), c_str("constant"), c_float(value)});
}

void Importer::lift_conv(const ox::NodeProto& n, bool transposed) {
  const at::Tensor* w = const_of(n, 1);
  const at::Tensor* b = const_of(n, 2);
  if (!w || (has_input(n, 2) && !b)) unsupported(n, "the weight or bias is not a constant");
  int64_t dims = w->dim() - 2;
  if (dims < 1 || dims > 3) unsupported(n, "a " + std::to_string(dims) + "-d convolution");
  size_t d = static_cast<size_t>(dims);
  int64_t groups = attr_i(n, "group", 1);
  std::vector<int64_t> kernel = w->sizes().slice(2).vec();
  std::vector<int64_t> stride = attr_ints(n, "strides").value_or(std::vector<int64_t>(d, 1));
  std::vector<int64_t> dilation = attr_ints(n, "dilations").value_or(std::vector<int64_t>(d, 1));
  Pads pads = spatial_pads(n, d, kernel, stride, dilation);
  std::vector<int64_t> padding;
  Value* x = tensor_in(n.input(0));
  if (transposed) {
    // ConvTranspose pads crop the output, and its auto_pad targets input*stride: not lifted.
    std::string auto_pad = attr_s(n, "auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") unsupported(n, "auto_pad=" + auto_pad);
    if (pads.begin != pads.end) unsupported(n, "asymmetric padding");
    padding = pads.begin;
  } else {
    x = pad_excess(x, pads, 0.0, padding);
  }
  std::string cls =
      std::string(transposed ? "nn.ConvTranspose" : "nn.Conv") + std::to_string(dims) + "d";
  Node* node = append(cls, {x});
  node->set_module(module_path(n, n.input(1), transposed ? "conv_transpose" : "conv"));
  node->set_scope(scope_parent(node->module()));
  Attrs& a = node->attrs();
  int64_t in_ch = transposed ? w->size(0) : w->size(1) * groups;
  int64_t out_ch = transposed ? w->size(1) * groups : w->size(0);
  a.set("in_channels", in_ch);
  a.set("out_channels", out_ch);
  a.set("kernel_size", kernel);
  a.set("stride", stride);
  a.set("padding", padding);
  if (transposed) {
    if (attr(n, "output_shape"))
      unsupported(n, "output_shape (export with output_padding instead)");
    a.set("output_padding", attr_ints(n, "output_padding").value_or(std::vector<int64_t>(d, 0)));
    a.set("groups", groups);
    a.set("bias", b != nullptr);
    a.set("dilation", dilation);
  } else {
    a.set("dilation", dilation);
    a.set("groups", groups);
    a.set("bias", b != nullptr);
  }
  a.set("padding_mode", std::string("zeros"));
  module_weight(node, "weight", *w, true);
  if (b) module_weight(node, "bias", *b, true);
  out(node, n);
}

void Importer::lift_pool(const ox::NodeProto& n, bool max) {
  auto kernel = attr_ints(n, "kernel_shape");
  if (!kernel) unsupported(n, "no kernel_shape");
  int64_t dims = static_cast<int64_t>(kernel->size());
  size_t d = kernel->size();
  if (dims < 1 || dims > 3) unsupported(n, "a " + std::to_string(dims) + "-d pooling");
  if (n.output_size() > 1 && !n.output(1).empty()) unsupported(n, "indices output");
  std::vector<int64_t> stride = attr_ints(n, "strides").value_or(std::vector<int64_t>(d, 1));
  std::vector<int64_t> dilation = attr_ints(n, "dilations").value_or(std::vector<int64_t>(d, 1));
  if (!max && dilation != std::vector<int64_t>(d, 1)) unsupported(n, "dilated average pooling");
  Pads pads = spatial_pads(n, d, *kernel, stride, dilation);
  bool include_pad = attr_i(n, "count_include_pad", 0) != 0;
  if (!max && !include_pad && pads.begin != pads.end)
    unsupported(n,
                "asymmetric padding with count_include_pad=0 (padded zeros would be averaged in)");
  // Max pooling never picks a padded element: pad the excess with -inf.
  std::vector<int64_t> padding;
  Value* x = pad_excess(tensor_in(n.input(0)), pads,
                        max ? -std::numeric_limits<double>::infinity() : 0.0, padding);
  bool ceil = attr_i(n, "ceil_mode", 0) != 0;
  std::string nd = std::to_string(dims) + "d";
  std::vector<Value*> ins = {x, c_ints(*kernel), c_ints(stride), c_ints(padding)};
  if (max) {
    ins.push_back(c_ints(dilation));
    ins.push_back(c_bool(ceil));
    call("F.max_pool" + nd, ins, n);
  } else {
    ins.push_back(c_bool(ceil));
    ins.push_back(c_bool(include_pad));
    if (dims > 1) ins.push_back(c_none());
    call("F.avg_pool" + nd, ins, n);
  }
}

void Importer::lift_global_pool(const ox::NodeProto& n, bool max) {
  auto r = known_rank(n.input(0));
  int64_t dims = r ? *r - 2 : 2;
  if (dims < 1 || dims > 3) unsupported(n, "unexpected input rank");
  Value* x = tensor_in(n.input(0));
  if (max) {
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < dims; ++k) axes.push_back(2 + k);
    call("torch.amax", {x, c_ints(axes), c_bool(true)}, n);
  } else {
    call("F.adaptive_avg_pool" + std::to_string(dims) + "d",
         {x, c_ints(std::vector<int64_t>(static_cast<size_t>(dims), 1))}, n);
  }
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
