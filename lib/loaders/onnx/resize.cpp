// Padding and resampling: Pad, Resize, Upsample, GridSample, AffineGrid, Col2Im.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

namespace tt::onnx_import {

Importer::OpList Importer::resize_ops() {
  return {
      {"Pad", [](Importer& im, const ox::NodeProto& n) { im.lift_pad(n); }},
      {"Resize", [](Importer& im, const ox::NodeProto& n) { im.lift_resize(n); }},
      {"Upsample", [](Importer& im, const ox::NodeProto& n) { im.lift_resize(n); }},
      {"GridSample", [](Importer& im, const ox::NodeProto& n) { im.lift_grid_sample(n); }},
      {"AffineGrid",
       [](Importer& im, const ox::NodeProto& n) {
         auto size = im.sym_elems(n, 1);
         if (!size) im.unsupported(n, "a size computed from tensor values at run time");
         im.call("F.affine_grid",
                 {im.tensor_in(n.input(0)), im.int_list(*size),
                  im.c_bool(im.attr_i(n, "align_corners", 0) != 0)},
                 n);
       }},
      {"Col2Im", [](Importer& im, const ox::NodeProto& n) { im.lift_col2im(n); }},
  };
}

void Importer::lift_pad(const ox::NodeProto& n) {
  std::string mode = attr_s(n, "mode", "constant");
  std::vector<int64_t> pads;
  double value = 0.0;
  auto r = known_rank(n.input(0));
  if (opset_ < 11) {
    pads = attr_ints(n, "pads").value_or(std::vector<int64_t>{});
    value = attr_f(n, "value", 0.0);
  } else {
    if (!const_of(n, 1)) unsupported(n, "pads computed at run time");
    pads = ints_of(*const_of(n, 1));
    if (has_input(n, 2)) {
      if (!const_of(n, 2)) unsupported(n, "a padding value computed at run time");
      if (const_of(n, 2)->numel() > 0) value = const_of(n, 2)->item<double>();
    }
    if (has_input(n, 3)) {
      // opset 18: pads for the listed axes only; the others get none.
      if (!const_of(n, 3) || !r) unsupported(n, "axes computed at run time or of unknown rank");
      std::vector<int64_t> axes = ints_of(*const_of(n, 3));
      if (pads.size() != 2 * axes.size()) unsupported(n, "pads and axes of different lengths");
      std::vector<int64_t> full(static_cast<size_t>(2 * *r), 0);
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t a = axes[k] < 0 ? axes[k] + *r : axes[k];
        if (a < 0 || a >= *r) unsupported(n, "an axis out of range");
        full[static_cast<size_t>(a)] = pads[k];
        full[static_cast<size_t>(a + *r)] = pads[k + axes.size()];
      }
      pads = full;
    }
  }
  size_t rank = pads.size() / 2;
  // ONNX: all begins then all ends, first dim first; F.pad: last dim first, (begin, end) pairs.
  std::vector<int64_t> tp;
  size_t first = 0;
  while (first < rank && pads[first] == 0 && pads[first + rank] == 0) ++first;
  for (size_t k = rank; k-- > first;) {
    tp.push_back(pads[k]);
    tp.push_back(pads[k + rank]);
  }
  // ONNX's edge is replicate, wrap (opset 19) circular.
  std::string tmode = mode == "edge" ? "replicate" : mode == "wrap" ? "circular" : mode;
  if (tmode != "constant" && tmode != "reflect" && tmode != "replicate" && tmode != "circular")
    unsupported(n, "mode " + mode);
  if (tmode != "constant") {
    // PyTorch pads the last dims only in these modes (2 of 3-d, 4 of 4-d, 6 of 5-d inputs),
    // never with negative pads, and reflects within the dim.
    for (int64_t p : tp)
      if (p < 0) unsupported(n, "negative pads in mode " + mode);
    if (!r || static_cast<int64_t>(tp.size()) > 2 * (*r - 2) || *r < 3 || *r > 5)
      unsupported(n, "mode " + mode +
                         " on these dims (PyTorch pads only the spatial dims of a "
                         "3-d to 5-d input)");
  }
  if (tp.empty()) return bind(n, 0, tensor_in(n.input(0)));
  call("F.pad",
       {tensor_in(n.input(0)), c_ints(tp), c_str(tmode),
        tmode == "constant" ? c_float(value) : c_none()},
       n);
}

// GridSample: F.grid_sample's modes (opset 16 bilinear/nearest/bicubic, opset 20 linear/nearest/
// cubic), written as torch.grid_sampler's int codes.
void Importer::lift_grid_sample(const ox::NodeProto& n) {
  std::string mode = attr_s(n, "mode", opset_ >= 20 ? "linear" : "bilinear");
  std::string pad = attr_s(n, "padding_mode", "zeros");
  int64_t m = mode == "bilinear" || mode == "linear" ? 0
              : mode == "nearest"                    ? 1
              : mode == "bicubic" || mode == "cubic" ? 2
                                                     : -1;
  int64_t p = pad == "zeros" ? 0 : pad == "border" ? 1 : pad == "reflection" ? 2 : -1;
  if (m < 0) unsupported(n, "mode " + mode);
  if (p < 0) unsupported(n, "padding_mode " + pad);
  auto r = known_rank(n.input(0));
  if (!r || (*r != 4 && !(*r == 5 && m != 2)))
    unsupported(n, "an input that is not 4-d (or 5-d without cubic interpolation)");
  call("torch.grid_sampler",
       {tensor_in(n.input(0)), tensor_in(n.input(1)), c_int(m), c_int(p),
        c_bool(attr_i(n, "align_corners", 0) != 0)},
       n);
}

// Col2Im: F.fold with symmetric pads.
void Importer::lift_col2im(const ox::NodeProto& n) {
  auto image = sym_elems(n, 1);
  const at::Tensor* block = const_of(n, 2);
  if (!image || !block) unsupported(n, "image or block shape computed at run time");
  std::vector<int64_t> kernel = ints_of(*block);
  size_t d = kernel.size();
  if (d != 2) unsupported(n, "a " + std::to_string(d) + "-d image (F.fold is 2-d)");
  auto pads = attr_ints(n, "pads").value_or(std::vector<int64_t>(2 * d, 0));
  if (pads.size() != 2 * d || pads[0] != pads[2] || pads[1] != pads[3])
    unsupported(n, "asymmetric pads");
  call("F.fold",
       {tensor_in(n.input(0)), int_list(*image), c_ints(kernel),
        c_ints(attr_ints(n, "dilations").value_or(std::vector<int64_t>(d, 1))),
        c_ints({pads[0], pads[1]}),
        c_ints(attr_ints(n, "strides").value_or(std::vector<int64_t>(d, 1)))},
       n);
}

// Note [Resize as F.interpolate]
// F.interpolate resizes the spatial dims (2...) of a 3-d to 5-d input. ONNX's coordinate modes
// map to its modes: nearest with asymmetric coordinates and floor rounding is "nearest" (what
// the exporter writes, also for Upsample and opset 10's Resize), half_pixel with
// round_prefer_ceil is "nearest-exact" (floor((x + 0.5) * in / out)); linear/cubic with
// align_corners is align_corners=True, with half_pixel or pytorch_half_pixel align_corners=False
// (PyTorch clamps a negative source coordinate to 0 for linear; ONNX reads the edge pixel there,
// which gives the same value), cubic only with PyTorch's coefficient -0.75 and
// exclude_outside=0. Scales or sizes of dims 0 and 1 other than the input's own, antialiasing,
// and the other coordinate modes (asymmetric linear, tf_*, align_corners nearest) have no
// F.interpolate form and are refused.
// sym_sizes: the `sizes` input as ints computed at run time (Note [Dynamic shapes]).
void Importer::lift_resize(const ox::NodeProto& n, std::optional<std::vector<Value*>> sym_sizes) {
  std::string mode = attr_s(n, "mode", "nearest");
  std::string ctm =
      attr_s(n, "coordinate_transformation_mode", opset_ < 11 ? "asymmetric" : "half_pixel");
  std::string nearest = attr_s(n, "nearest_mode", "round_prefer_floor");
  if (attr_i(n, "antialias", 0) != 0) unsupported(n, "antialias=1");
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
    } else if (const at::Tensor* t = const_of(n, 2); t && t->numel() > 0) {
      scales = doubles_of(*t);
    } else if (const at::Tensor* t = const_of(n, 3); t && t->numel() > 0) {
      sizes = ints_of(*t);
    } else {
      unsupported(n, "scales/sizes computed at run time");
    }
  }
  auto r = known_rank(n.input(0));
  if (!r) unsupported(n, "an input of unknown rank");
  size_t given = sym_sizes ? sym_sizes->size() : scales.empty() ? sizes.size() : scales.size();
  // opset 18's axes: the scales/sizes of these dims only.
  bool spatial_only = false;
  if (auto axes = attr_ints(n, "axes")) {
    std::vector<int64_t> want;
    for (int64_t k = 2; k < *r; ++k) want.push_back(k);
    std::vector<int64_t> got = *axes;
    for (auto& a : got)
      if (a < 0) a += *r;
    if (got == want)
      spatial_only = true;
    else if (got.size() != static_cast<size_t>(*r))
      unsupported(n, "axes other than all dims or all spatial dims");
  }
  size_t lead = spatial_only ? 0 : 2;
  if (given != static_cast<size_t>(*r) - 2 + lead || *r < 3 || *r > 5)
    unsupported(n, "scales/sizes that are not one per dim of a 3-d to 5-d input");
  if (!spatial_only && attr_s(n, "keep_aspect_ratio_policy", "stretch") != "stretch" &&
      scales.empty())
    unsupported(n, "keep_aspect_ratio_policy other than stretch");
  // Dims 0 and 1 must keep their size: F.interpolate resizes only the spatial dims.
  if (lead && !scales.empty() && (scales[0] != 1.0 || scales[1] != 1.0))
    unsupported(n, "a resize of the batch or channel dim");
  if (lead && !sizes.empty()) {
    auto xs = known_shape(n.input(0));
    if (!xs || sizes[0] != (*xs)[0] || sizes[1] != (*xs)[1])
      unsupported(n, "a resize of the batch or channel dim (or of unknown batch/channel size)");
  }
  if (lead && sym_sizes) {
    auto xt = type_for(n.input(0));
    for (int64_t k = 0; k < 2; ++k) {
      Value* e = (*sym_sizes)[static_cast<size_t>(k)];
      auto c = int_const(e);
      int64_t dim = xt.shape && static_cast<int64_t>(xt.shape->size()) > k
                        ? (*xt.shape)[static_cast<size_t>(k)]
                        : -1;
      Node* p = e->node();
      bool same = (c && dim >= 0 && *c == dim) ||
                  (p && p->is("Tensor.size") && p->input(0) == tensor_in(n.input(0)) &&
                   int_const(p->input(1)) == k);
      if (!same) unsupported(n, "a resize of the batch or channel dim");
    }
  }
  std::string tmode;
  Value* align = nullptr;
  size_t spatial = static_cast<size_t>(*r) - 2;
  if (mode == "nearest") {
    if (ctm == "asymmetric" && (opset_ < 11 || nearest == "floor"))
      tmode = "nearest";
    else if (ctm == "half_pixel" && nearest == "round_prefer_ceil")
      tmode = "nearest-exact";
    else
      unsupported(n, "nearest resize with " + ctm + "/" + nearest + " rounding");
    align = c_none();
  } else if (mode == "linear" || mode == "cubic") {
    if (mode == "cubic") {
      if (spatial != 2) unsupported(n, "cubic resize of a non-2-d input");
      if (attr_f(n, "cubic_coeff_a", -0.75) != -0.75)
        unsupported(n, "cubic_coeff_a other than PyTorch's -0.75");
      if (attr_i(n, "exclude_outside", 0) != 0) unsupported(n, "exclude_outside=1");
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
  Value* size =
      sym_sizes       ? int_list(std::vector<Value*>(
                      sym_sizes->begin() + static_cast<std::ptrdiff_t>(lead), sym_sizes->end()))
      : sizes.empty() ? c_none()
                      : c_ints(std::vector<int64_t>(
                            sizes.begin() + static_cast<std::ptrdiff_t>(lead), sizes.end()));
  Value* scale = scales.empty()
                     ? c_none()
                     : c_floats(std::vector<double>(
                           scales.begin() + static_cast<std::ptrdiff_t>(lead), scales.end()));
  call("F.interpolate", {tensor_in(n.input(0)), size, scale, c_str(tmode), align}, n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
