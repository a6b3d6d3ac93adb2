// Convolutions and pooling: Conv, ConvTranspose (modules, or the functional call when the weight
// is computed), MaxPool (also with indices), AveragePool, GlobalAveragePool, GlobalMaxPool.
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

namespace {

// The ints of a list constant (empty when v is not one).
std::vector<int64_t> int_list_of(Value* v) {
  const AttrValue* c = v->constant();
  if (c && std::holds_alternative<std::vector<int64_t>>(*c))
    return std::get<std::vector<int64_t>>(*c);
  return {};
}

}  // namespace

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

// ConvTranspose's pads crop its full output; auto_pad SAME_* and output_shape choose them (ONNX:
// total = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - out; SAME_UPPER
// puts the odd pixel at the end, SAME_LOWER and output_shape without auto_pad at the beginning;
// SAME's out is in * stride).
Importer::Pads Importer::transposed_pads(const ox::NodeProto& n, const std::vector<int64_t>& kernel,
                                         const std::vector<int64_t>& stride,
                                         const std::vector<int64_t>& dilation,
                                         const std::vector<int64_t>& output_padding) {
  size_t d = kernel.size();
  std::string auto_pad = attr_s(n, "auto_pad", "NOTSET");
  auto out_shape = attr_ints(n, "output_shape");
  if (!out_shape && (auto_pad == "NOTSET" || auto_pad == "VALID")) {
    Pads p{std::vector<int64_t>(d, 0), std::vector<int64_t>(d, 0)};
    if (auto_pad == "NOTSET")
      if (auto pads = attr_ints(n, "pads")) {
        if (pads->size() != 2 * d) unsupported(n, "pads of the wrong length");
        p.begin.assign(pads->begin(), pads->begin() + static_cast<std::ptrdiff_t>(d));
        p.end.assign(pads->begin() + static_cast<std::ptrdiff_t>(d), pads->end());
      }
    return p;
  }
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID")
    unsupported(n, "auto_pad=" + auto_pad);
  auto in = known_shape(n.input(0));
  if (out_shape && (!in || in->size() != d + 2))
    unsupported(n, "output_shape on an input without a static shape");
  if (out_shape && out_shape->size() == d + 2)
    out_shape = std::vector<int64_t>(out_shape->begin() + 2, out_shape->end());
  if (out_shape && out_shape->size() != d) unsupported(n, "output_shape of the wrong length");
  Pads p{std::vector<int64_t>(d, 0), std::vector<int64_t>(d, 0)};
  for (size_t k = 0; k < d; ++k) {
    int64_t extent = (kernel[k] - 1) * dilation[k] + 1;
    // SAME: out = in * stride, so the total does not depend on the input size.
    int64_t total =
        out_shape ? stride[k] * ((*in)[k + 2] - 1) + output_padding[k] + extent - (*out_shape)[k]
                  : output_padding[k] + extent - stride[k];
    if (total < 0)
      unsupported(n, "an output larger than the full transposed convolution (negative padding)");
    bool upper = auto_pad == "SAME_UPPER";
    p.begin[k] = upper ? total / 2 : total - total / 2;
    p.end[k] = total - p.begin[k];
  }
  return p;
}

// The excess of asymmetric ConvTranspose pads over the symmetric `padding`, cropped from the
// output (pads remove output pixels).
Value* Importer::crop_excess(Value* y, const Pads& p, const std::vector<int64_t>& padding) {
  for (size_t k = 0; k < padding.size(); ++k) {
    int64_t b = p.begin[k] - padding[k], e = p.end[k] - padding[k];
    if (!b && !e) continue;
    int64_t end = e ? -e : std::numeric_limits<int64_t>::max();
    y = method("Tensor.slice",
               {y, c_int(static_cast<int64_t>(k) + 2), c_int(b), c_int(end), c_int(1)});
  }
  return y;
}

void Importer::lift_conv(const ox::NodeProto& n, bool transposed) {
  const at::Tensor* w = const_of(n, 1);
  const at::Tensor* b = const_of(n, 2);
  bool functional = !w || (has_input(n, 2) && !b);
  // The kernel: the weight's spatial dims (the attribute when the weight is computed).
  std::optional<std::vector<int64_t>> wshape =
      w ? std::optional<std::vector<int64_t>>(w->sizes().vec()) : known_shape(n.input(1));
  std::vector<int64_t> kernel;
  if (auto ks = attr_ints(n, "kernel_shape"))
    kernel = *ks;
  else if (wshape && wshape->size() >= 3)
    kernel.assign(wshape->begin() + 2, wshape->end());
  else
    unsupported(n, "a weight of unknown shape without kernel_shape");
  int64_t dims = static_cast<int64_t>(kernel.size());
  if (dims < 1 || dims > 3) unsupported(n, "a " + std::to_string(dims) + "-d convolution");
  size_t d = static_cast<size_t>(dims);
  int64_t groups = attr_i(n, "group", 1);
  std::vector<int64_t> stride = attr_ints(n, "strides").value_or(std::vector<int64_t>(d, 1));
  std::vector<int64_t> dilation = attr_ints(n, "dilations").value_or(std::vector<int64_t>(d, 1));
  std::vector<int64_t> output_padding =
      attr_ints(n, "output_padding").value_or(std::vector<int64_t>(d, 0));
  Pads pads = transposed ? transposed_pads(n, kernel, stride, dilation, output_padding)
                         : spatial_pads(n, d, kernel, stride, dilation);
  std::vector<int64_t> padding;
  Value* x = tensor_in(n.input(0));
  if (transposed) {
    for (size_t k = 0; k < d; ++k) padding.push_back(std::min(pads.begin[k], pads.end[k]));
  } else {
    x = pad_excess(x, pads, 0.0, padding);
  }
  std::string nd = std::to_string(dims) + "d";
  Value* y = nullptr;
  if (functional) {
    // A weight or bias computed at run time (F.conv2d(x, w)): the functional call.
    Value* wv = tensor_in(n.input(1));
    Value* bv = has_input(n, 2) ? tensor_in(n.input(2)) : c_none();
    if (transposed)
      y = method("F.conv_transpose" + nd,
                 {x, wv, bv, c_ints(stride), c_ints(padding), c_ints(output_padding), c_int(groups),
                  c_ints(dilation)});
    else
      y = method("F.conv" + nd,
                 {x, wv, bv, c_ints(stride), c_ints(padding), c_ints(dilation), c_int(groups)});
  } else {
    if (w->dim() != dims + 2) unsupported(n, "a weight whose rank does not match kernel_shape");
    std::string cls = std::string(transposed ? "nn.ConvTranspose" : "nn.Conv") + nd;
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
      a.set("output_padding", output_padding);
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
    y = node->add_output(Type::tensor());
  }
  if (transposed) y = crop_excess(y, pads, padding);
  bind(n, 0, y);
}

void Importer::lift_pool(const ox::NodeProto& n, bool max) {
  auto kernel = attr_ints(n, "kernel_shape");
  if (!kernel) unsupported(n, "no kernel_shape");
  int64_t dims = static_cast<int64_t>(kernel->size());
  size_t d = kernel->size();
  if (dims < 1 || dims > 3) unsupported(n, "a " + std::to_string(dims) + "-d pooling");
  bool indices = n.output_size() > 1 && !n.output(1).empty() && !consumers_[n.output(1)].empty();
  std::vector<int64_t> stride = attr_ints(n, "strides").value_or(std::vector<int64_t>(d, 1));
  std::vector<int64_t> dilation = attr_ints(n, "dilations").value_or(std::vector<int64_t>(d, 1));
  if (!max && dilation != std::vector<int64_t>(d, 1)) unsupported(n, "dilated average pooling");
  Pads pads = spatial_pads(n, d, *kernel, stride, dilation);
  bool include_pad = attr_i(n, "count_include_pad", 0) != 0;
  if (indices && pads.begin != pads.end)
    unsupported(n, "indices of asymmetrically padded max pooling (PyTorch would count the pad)");
  if (indices && attr_i(n, "storage_order", 0) != 0)
    unsupported(n, "indices in column-major order (storage_order=1)");
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
    if (indices) return lift_pool_indices(n, ins);
    call("F.max_pool" + nd, ins, n);
  } else if (include_pad || pads.begin == pads.end) {
    ins.push_back(c_bool(ceil));
    ins.push_back(c_bool(include_pad));
    if (dims > 1) ins.push_back(c_none());
    call("F.avg_pool" + nd, ins, n);
  } else {
    // Asymmetric pads that are not averaged in (count_include_pad=0): F.pad has put zeros in,
    // so each window's mean over the input's elements is the pooled padded input divided by the
    // same pooling of padded ones (both count the pads alike, so the divisors cancel).
    Value* ones = method("torch.ones_like",
                         {tensor_in(n.input(0)), c_none(), c_none(), c_none(), c_none(), c_none()});
    std::vector<int64_t> same;
    std::vector<Value*> count = {pad_excess(ones, pads, 0.0, same), ins[1], ins[2], ins[3]};
    for (auto* v : {&ins, &count}) {
      v->push_back(c_bool(ceil));
      v->push_back(c_bool(true));
      if (dims > 1) v->push_back(c_none());
    }
    call("torch.div", {method("F.avg_pool" + nd, ins), method("F.avg_pool" + nd, count)}, n);
  }
}

// Note [MaxPool indices]
// ONNX's MaxPool indices count over the whole input tensor ((n * C + c) * H + h) * W + w, PyTorch's
// (F.max_pool2d_with_indices) within each (n, c) plane, h * W + w: the ONNX value is PyTorch's
// plus the plane's offset, arange(N * C) * H * W shaped [N, C, 1, 1]. The exporter turns
// PyTorch's indices into ONNX's and back: it subtracts the offsets it reads from a 1x1 MaxPool's
// indices sliced to [:, :, 0:1, 0:1]. Both are lifted as they are (exact), and the lifter also
// remembers what they are (pool_indices_): the subtraction then binds PyTorch's indices
// directly, and the offset arithmetic is left for dce.
void Importer::lift_pool_indices(const ox::NodeProto& n, const std::vector<Value*>& ins) {
  const std::string& xn = n.input(0);
  auto r = known_rank(xn);
  if (!r) unsupported(n, "indices of an input of unknown rank");
  std::string nd = std::to_string(*r - 2) + "d";
  Node* pool = append("F.max_pool" + nd + "_with_indices", ins);
  out(pool, n, 0);
  Value* local = pool->add_output(Type::tensor(DType::I64));
  // The planes' offsets: arange(0, N * C * HW, HW).reshape(N, C, 1, ...).
  auto mul = [&](Value* a, Value* b) {
    auto ac = int_const(a), bc = int_const(b);
    if (ac && bc) return c_int(*ac * *bc);
    return scalar_op("operator.mul", {a, b}, Type::Kind::Int);
  };
  Value* plane = c_int(1);
  for (int64_t k = 2; k < *r; ++k) plane = mul(plane, size_of(xn, k));
  Value* batch = size_of(xn, 0);
  Value* channels = size_of(xn, 1);
  Value* range = method("torch.arange", {c_int(0), mul(mul(batch, channels), plane), plane,
                                         constant(DType::I64, Type::of(Type::Kind::ScalarType)),
                                         c_none(), c_none(), c_none()});
  std::vector<Value*> shape = {batch, channels};
  for (int64_t k = 2; k < *r; ++k) shape.push_back(c_int(1));
  Value* offsets = method("Tensor.reshape", {range, int_list(shape)});
  call("torch.add", {local, offsets, c_int(1)}, n, 1);
  // A 1x1, stride 1 pooling's indices are every position: sliced to [0:1] they are the offsets.
  std::vector<int64_t> ones(static_cast<size_t>(*r - 2), 1);
  bool positions = int_list_of(ins[1]) == ones && int_list_of(ins[2]) == ones &&
                   int_list_of(ins[3]) == std::vector<int64_t>(ones.size(), 0) &&
                   int_list_of(ins[4]) == ones;
  pool_indices_[n.output(1)] = PoolIndices{positions ? nullptr : local, xn, positions};
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
