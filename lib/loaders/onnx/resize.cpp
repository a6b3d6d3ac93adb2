// Padding and resampling: Pad, Resize, Upsample.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

namespace tt::onnx_import {

Importer::OpList Importer::resize_ops() {
  return {
      {"Pad", [](Importer& im, const ox::NodeProto& n) { im.lift_pad(n); }},
      {"Resize", [](Importer& im, const ox::NodeProto& n) { im.lift_resize(n); }},
      {"Upsample", [](Importer& im, const ox::NodeProto& n) { im.lift_resize(n); }},
  };
}

void Importer::lift_pad(const ox::NodeProto& n) {
  std::string mode = attr_s(n, "mode", "constant");
  std::vector<int64_t> pads;
  double value = 0.0;
  if (opset_ < 11) {
    pads = attr_ints(n, "pads").value_or(std::vector<int64_t>{});
    value = attr_f(n, "value", 0.0);
  } else {
    if (!const_of(n, 1)) unsupported(n, "pads computed at run time");
    pads = ints_of(*const_of(n, 1));
    if (has_input(n, 2)) {
      if (!const_of(n, 2)) unsupported(n, "a padding value computed at run time");
      value = const_of(n, 2)->item<double>();
    }
    if (has_input(n, 3)) unsupported(n, "the axes input");
  }
  size_t r = pads.size() / 2;
  // ONNX: all begins then all ends, first dim first; F.pad: last dim first, (begin, end) pairs.
  std::vector<int64_t> tp;
  size_t first = 0;
  while (first < r && pads[first] == 0 && pads[first + r] == 0) ++first;
  for (size_t k = r; k-- > first;) {
    tp.push_back(pads[k]);
    tp.push_back(pads[k + r]);
  }
  std::string tmode = mode == "edge" ? "replicate" : mode;
  if (tmode != "constant" && tmode != "reflect" && tmode != "replicate")
    unsupported(n, "mode " + mode);
  call("F.pad",
       {tensor_in(n.input(0)), c_ints(tp), c_str(tmode),
        tmode == "constant" ? c_float(value) : c_none()},
       n);
}

// sym_sizes: the `sizes` input as ints computed at run time (Note [Dynamic shapes]).
void Importer::lift_resize(const ox::NodeProto& n, std::optional<std::vector<Value*>> sym_sizes) {
  std::string mode = attr_s(n, "mode", "nearest");
  std::string ctm =
      attr_s(n, "coordinate_transformation_mode", opset_ < 11 ? "asymmetric" : "half_pixel");
  std::string nearest = attr_s(n, "nearest_mode", "round_prefer_floor");
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (n.op_type() == "Upsample" || opset_ < 11) {
    if (const at::Tensor* t = const_of(n, 1))
      scales = doubles_of(*t);
    else if (auto a = attr(n, "scales"))
      scales.assign(a->floats().begin(), a->floats().end());
    else
      unsupported(n, "scales computed at run time");
  } else {
    if (sym_sizes) {
      if (sym_sizes->size() < 3) unsupported(n, "sizes for fewer than 3 dims");
    } else if (const at::Tensor* t = const_of(n, 2); t && t->numel() > 0) {
      scales = doubles_of(*t);
    } else if (const at::Tensor* t = const_of(n, 3); t && t->numel() > 0) {
      sizes = ints_of(*t);
    } else {
      unsupported(n, "scales/sizes computed at run time");
    }
  }
  std::string tmode;
  Value* align = nullptr;
  auto r = rank_of(n.input(0));
  size_t spatial = sym_sizes        ? sym_sizes->size() - 2
                   : scales.empty() ? sizes.size() - 2
                                    : scales.size() - 2;
  if (mode == "nearest") {
    if (ctm != "asymmetric" || (opset_ >= 11 && nearest != "floor"))
      unsupported(n, "nearest resize with " + ctm + "/" + nearest + " rounding");
    tmode = "nearest";
    align = c_none();
  } else if (mode == "linear" || mode == "cubic") {
    if (mode == "cubic") {
      if (spatial != 2) unsupported(n, "cubic resize of a non-2-d input");
      tmode = "bicubic";
    } else {
      tmode = spatial == 1 ? "linear" : spatial == 2 ? "bilinear" : "trilinear";
    }
    if (ctm == "align_corners")
      align = c_bool(true);
    else if (ctm == "half_pixel" || ctm == "pytorch_half_pixel")
      align = c_bool(false);
    else
      unsupported(n, "coordinate_transformation_mode " + ctm);
  } else {
    unsupported(n, "mode " + mode);
  }
  (void)r;
  // Sizes of dims 0 and 1 (batch, channels) are the input's: F.interpolate keeps them.
  Value* size = sym_sizes ? int_list(std::vector<Value*>(sym_sizes->begin() + 2, sym_sizes->end()))
                : sizes.empty() ? c_none()
                                : c_ints(std::vector<int64_t>(sizes.begin() + 2, sizes.end()));
  Value* scale =
      scales.empty() ? c_none() : c_floats(std::vector<double>(scales.begin() + 2, scales.end()));
  call("F.interpolate", {tensor_in(n.input(0)), size, scale, c_str(tmode), align}, n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
