// Data movement: Reshape, Flatten, Transpose, Squeeze/Unsqueeze, Expand, Concat, Split, Slice,
// Tile, DepthToSpace, Identity/Dropout; the Shape/Range/ConstantOfShape that neither folding nor
// dynamic shapes could lift; and the attribute readings constant folding shares with them.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <algorithm>
#include <limits>

namespace tt::onnx_import {

namespace {

// Range, ConstantOfShape and Expand reach their handlers only when their inputs are neither
// constants nor sizes of dynamic shapes (try_fold and try_symbolic took those).
const char* const kRunTimeShape =
    "a shape or bound computed from tensor values at run time, which a PyTorch module cannot take "
    "as a size";

}  // namespace

Importer::OpList Importer::tensor_ops() {
  return {
      {"Identity", [](Importer& im, const ox::NodeProto& n) { im.lift_identity(n); }},
      {"Dropout", [](Importer& im, const ox::NodeProto& n) { im.lift_identity(n); }},
      {"Expand", [](Importer& im, const ox::NodeProto& n) { im.lift_expand_static(n); }},
      {"Flatten", [](Importer& im, const ox::NodeProto& n) { im.lift_flatten(n); }},
      {"Reshape", [](Importer& im, const ox::NodeProto& n) { im.lift_reshape(n); }},
      {"Transpose", [](Importer& im, const ox::NodeProto& n) { im.lift_transpose(n); }},
      {"Concat", [](Importer& im, const ox::NodeProto& n) { im.lift_concat(n); }},
      {"Split", [](Importer& im, const ox::NodeProto& n) { im.lift_split(n); }},
      {"Slice", [](Importer& im, const ox::NodeProto& n) { im.lift_slice(n); }},
      {"Unsqueeze", [](Importer& im, const ox::NodeProto& n) { im.lift_squeeze(n, true); }},
      {"Squeeze", [](Importer& im, const ox::NodeProto& n) { im.lift_squeeze(n, false); }},
      {"Tile", [](Importer& im, const ox::NodeProto& n) { im.lift_tile(n); }},
      {"DepthToSpace", [](Importer& im, const ox::NodeProto& n) { im.lift_depth_to_space(n); }},
      {"SpaceToDepth", [](Importer& im, const ox::NodeProto& n) { im.lift_depth_to_space(n); }},
      {"Trilu",
       [](Importer& im, const ox::NodeProto& n) {
         Value* k = im.has_input(n, 1) ? im.int_of(n, 1) : im.c_int(0);
         im.call(im.attr_i(n, "upper", 1) ? "torch.triu" : "torch.tril",
                 {im.tensor_in(n.input(0)), k}, n);
       }},
      {"EyeLike", [](Importer& im, const ox::NodeProto& n) { im.lift_eye_like(n); }},
      {"Shape",
       [](Importer& im, const ox::NodeProto& n) {
         im.unsupported(n, "the shape of a value of unknown rank (export with static shapes)");
       }},
      {"Range", [](Importer& im, const ox::NodeProto& n) { im.unsupported(n, kRunTimeShape); }},
      {"ConstantOfShape",
       [](Importer& im, const ox::NodeProto& n) { im.unsupported(n, kRunTimeShape); }},
  };
}

// Identity, and Dropout at inference (its mask output unused; training_mode, opset 12, False or
// a ratio of 0: Note [Random ONNX ops]).
void Importer::lift_identity(const ox::NodeProto& n) {
  if (n.output_size() > 1 && !n.output(1).empty() && !consumers_[n.output(1)].empty())
    unsupported(n, "the dropout mask is used");
  if (n.op_type() == "Dropout" && has_input(n, 2)) {
    const at::Tensor* training = const_of(n, 2);
    const at::Tensor* ratio = const_of(n, 1);
    bool off = training && !training->item<bool>();
    bool zero = has_input(n, 1) ? ratio && ratio->item<double>() == 0.0 : false;
    if (!off && !zero)
      unsupported(n,
                  "dropout in training mode (random values: PyTorch's generator draws other "
                  "numbers); export in eval mode");
  }
  if (is_const(n.input(0)))
    consts_[n.output(0)] = consts_[n.input(0)];
  else
    bind(n, 0, tensor_in(n.input(0)));
}

// Expand to a constant 1-d shape (a shape of run-time sizes is lifted by try_symbolic).
void Importer::lift_expand_static(const ox::NodeProto& n) {
  if (const_of(n, 1) && const_of(n, 1)->dim() == 1) {
    std::vector<Value*> shape;
    for (int64_t d : ints_of(*const_of(n, 1))) shape.push_back(c_int(d));
    return lift_expand(n, shape);
  }
  unsupported(n, kRunTimeShape);
}

void Importer::lift_tile(const ox::NodeProto& n) {
  const at::Tensor* reps = const_of(n, 1);
  if (!reps) unsupported(n, "repeats computed at run time");
  call("Tensor.repeat", {tensor_in(n.input(0)), c_ints(ints_of(*reps))}, n);
}

// DepthToSpace in CRD mode is F.pixel_shuffle. Its DCR mode (the default) and SpaceToDepth order
// the channels block-first, unlike F.pixel_shuffle/F.pixel_unshuffle: they are the reshapes and
// permutes ONNX defines them by (sizes from the input's shape, or x.size(k) when dynamic).
void Importer::lift_depth_to_space(const ox::NodeProto& n) {
  int64_t r = attr_i(n, "blocksize", 1);
  bool to_space = n.op_type() == "DepthToSpace";
  Value* x = tensor_in(n.input(0));
  if (to_space && attr_s(n, "mode", "DCR") == "CRD")
    return void(call("F.pixel_shuffle", {x, c_int(r)}, n));
  auto rank = known_rank(n.input(0));
  if (!rank || *rank != 4) unsupported(n, "an input that is not 4-d");
  auto arith = [&](const char* op, Value* a, int64_t b) {
    if (auto c = int_const(a)) return c_int(std::string(op) == "operator.mul" ? *c * b : *c / b);
    return scalar_op(op, {a, c_int(b)}, Type::Kind::Int);
  };
  Value* b = size_of(n.input(0), 0);
  Value* c = size_of(n.input(0), 1);
  Value* h = size_of(n.input(0), 2);
  Value* w = size_of(n.input(0), 3);
  std::vector<Value*> split, joined;
  std::vector<int64_t> perm;
  if (to_space) {  // [b, r, r, C/r^2, H, W] -> [b, C/r^2, H, r, W, r]
    Value* depth = arith("operator.floordiv", c, r * r);
    split = {b, c_int(r), c_int(r), depth, h, w};
    perm = {0, 3, 4, 1, 5, 2};
    joined = {b, depth, arith("operator.mul", h, r), arith("operator.mul", w, r)};
  } else {  // [b, C, H/r, r, W/r, r] -> [b, r, r, C, H/r, W/r]
    Value* hr = arith("operator.floordiv", h, r);
    Value* wr = arith("operator.floordiv", w, r);
    split = {b, c, hr, c_int(r), wr, c_int(r)};
    perm = {0, 3, 5, 1, 2, 4};
    joined = {b, arith("operator.mul", c, r * r), hr, wr};
  }
  Value* y = method("Tensor.reshape", {x, int_list(split)});
  y = method("Tensor.permute", {y, c_ints(perm)});
  call("Tensor.reshape", {y, int_list(joined)}, n);
}

// ONNX Expand broadcasts both ways: a 1 in the shape keeps the input's size (-1 for
// Tensor.expand) except in new leading dims, and a shape shorter than the input's rank is
// aligned with its last dims (the leading ones kept).
void Importer::lift_expand(const ox::NodeProto& n, std::vector<Value*> shape) {
  auto r = known_rank(n.input(0));
  if (!r) unsupported(n, "an expand of a value of unknown rank");
  while (static_cast<int64_t>(shape.size()) < *r) shape.insert(shape.begin(), c_int(-1));
  int64_t lead = static_cast<int64_t>(shape.size()) - *r;
  for (size_t k = static_cast<size_t>(lead); k < shape.size(); ++k)
    if (int_const(shape[k]) == 1) shape[k] = c_int(-1);
  call("Tensor.expand", {tensor_in(n.input(0)), int_list(shape), c_bool(false)}, n);
}

void Importer::lift_flatten(const ox::NodeProto& n) {
  int64_t axis = attr_i(n, "axis", 1);
  auto r = known_rank(n.input(0));
  if (axis < 0 && r) axis += *r;
  Value* x = tensor_in(n.input(0));
  if (axis == 1) return void(call("torch.flatten", {x, c_int(1), c_int(-1)}, n));
  if (axis == 0) return void(call("Tensor.reshape", {x, c_ints({1, -1})}, n));
  auto s = known_shape(n.input(0));
  if (!s) unsupported(n, "flatten at axis " + std::to_string(axis) + " of a dynamic shape");
  int64_t lead = 1;
  for (int64_t k = 0; k < axis; ++k) lead *= (*s)[static_cast<size_t>(k)];
  call("Tensor.reshape", {x, c_ints({lead, -1})}, n);
}

void Importer::lift_reshape(const ox::NodeProto& n) {
  const at::Tensor* s = const_of(n, 1);
  if (!s) unsupported(n, "a shape computed at run time (export with static shapes)");
  std::vector<int64_t> shape = ints_of(*s);
  if (attr_i(n, "allowzero", 0) == 0 && std::count(shape.begin(), shape.end(), 0)) {
    auto in = known_shape(n.input(0));
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] != 0) continue;
      if (!in || k >= in->size()) {
        // A 0 (copy) dimension of a dynamic shape: the input's run-time size.
        std::vector<Value*> elems;
        for (size_t j = 0; j < shape.size(); ++j)
          elems.push_back(shape[j] == 0 ? size_of(n.input(0), static_cast<int64_t>(j))
                                        : c_int(shape[j]));
        return void(call("Tensor.reshape", {tensor_in(n.input(0)), int_list(elems)}, n));
      }
      shape[k] = (*in)[k];
    }
  }
  call("Tensor.reshape", {tensor_in(n.input(0)), c_ints(shape)}, n);
}

void Importer::lift_transpose(const ox::NodeProto& n) {
  // The rank only without a perm: known_rank may probe the IR (Note [Shapes ONNX inference
  // leaves open]).
  auto perm = transpose_perm(n, std::nullopt);
  if (!perm) perm = transpose_perm(n, known_rank(n.input(0)));
  if (!perm) unsupported(n, "no perm and unknown rank");
  call("Tensor.permute", {tensor_in(n.input(0)), c_ints(*perm)}, n);
}

void Importer::lift_concat(const ox::NodeProto& n) {
  std::vector<Value*> vs;
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty()) vs.push_back(tensor_in(n.input(i)));
  call("torch.cat", {list_of(vs), c_int(attr_i(n, "axis", 0))}, n);
}

void Importer::lift_split(const ox::NodeProto& n) {
  int64_t axis = attr_i(n, "axis", 0);
  std::vector<int64_t> sizes;
  if (auto a = attr_ints(n, "split")) {
    sizes = *a;
  } else if (const at::Tensor* t = const_of(n, 1)) {
    sizes = ints_of(*t);
  } else if (auto e = sym_elems(n, 1)) {  // sizes computed from dynamic sizes
    Node* sp =
        append("Tensor.split_with_sizes", {tensor_in(n.input(0)), int_list(*e), c_int(axis)});
    Node* un = append("prim.ListUnpack", {sp->add_output(Type::list(Type::tensor()))});
    for (int i = 0; i < n.output_size(); ++i) out(un, n, i);
    return;
  } else if (has_input(n, 1)) {
    unsupported(n, "split sizes computed at run time from tensor values");
  }
  if (sizes.empty()) {
    auto s = known_shape(n.input(0));
    if (!s) unsupported(n, "equal split of a dynamic shape");
    int64_t a = axis < 0 ? axis + static_cast<int64_t>(s->size()) : axis;
    int64_t total = (*s)[static_cast<size_t>(a)], parts = n.output_size();
    int64_t each = (total + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(each, total - k * each));
  }
  Node* sp = append("Tensor.split_with_sizes", {tensor_in(n.input(0)), c_ints(sizes), c_int(axis)});
  Value* list = sp->add_output(Type::list(Type::tensor()));
  Node* un = append("prim.ListUnpack", {list});
  for (int i = 0; i < n.output_size(); ++i) out(un, n, i);
}

void Importer::lift_slice(const ox::NodeProto& n) {
  auto b = slice_bounds(n);
  if (!b) return lift_slice_sym(n);
  const auto& [starts, ends, axes, steps] = *b;
  Value* x = tensor_in(n.input(0));
  auto r = known_rank(n.input(0));
  // [:, :, 0:1, 0:1] of a 1x1 pooling's indices: the plane offsets (Note [MaxPool indices]).
  if (auto p = pool_indices_.find(n.input(0)); p != pool_indices_.end() && p->second.positions &&
                                               r && static_cast<int64_t>(starts.size()) == *r - 2) {
    bool offsets = true;
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t a = axes.empty() ? static_cast<int64_t>(k) : axes[k];
      offsets = offsets && (a < 0 ? a + *r : a) == static_cast<int64_t>(k) + 2 && starts[k] == 0 &&
                ends[k] == 1 && (steps.empty() || steps[k] == 1);
    }
    if (offsets) pool_indices_[n.output(0)] = PoolIndices{nullptr, p->second.input, false};
  }
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = axes.empty() ? static_cast<int64_t>(k) : axes[k];
    if (a < 0 && r) a += *r;
    if (a < 0) unsupported(n, "a negative axis on an input of unknown rank");
    int64_t st = steps.empty() ? 1 : steps[k];
    if (st == 0) unsupported(n, "a step of 0");
    int64_t start = starts[k];
    int64_t end = std::min<int64_t>(ends[k], std::numeric_limits<int64_t>::max());
    if (st < 0) {
      // Backwards (x.flip(a) in the exporter's form): the same elements are a forward slice of
      // the flipped tensor. ONNX clamps start to [0, D-1] and end to [-1, D-1] (negative ones
      // counted from D first); element D-1-j of the flipped tensor is element j.
      const int64_t big = std::numeric_limits<int64_t>::max() / 2;
      auto shape = known_shape(n.input(0));
      x = method("torch.flip", {x, c_ints({a})});
      if (shape && a < static_cast<int64_t>(shape->size())) {
        int64_t dim = (*shape)[static_cast<size_t>(a)];
        int64_t s0 = start < 0 ? start + dim : start, e0 = end < 0 ? end + dim : end;
        s0 = std::clamp<int64_t>(s0, 0, dim - 1);
        e0 = std::clamp<int64_t>(e0, -1, dim - 1);
        start = dim - 1 - s0;
        end = std::max<int64_t>(start, dim - 1 - e0);
      } else if ((start == -1 || start >= big) && end <= -big) {
        start = 0;  // the whole dim, whatever its size
        end = std::numeric_limits<int64_t>::max();
      } else {
        unsupported(n, "a backwards slice of part of a dim of unknown size");
      }
      st = -st;
      if (start == 0 && end >= std::numeric_limits<int64_t>::max() / 2 && st == 1) continue;
    }
    std::vector<Value*> ins = {x, c_int(a), c_int(start), c_int(end), c_int(st)};
    if (k + 1 == starts.size()) return void(call("Tensor.slice", ins, n));
    x = method("Tensor.slice", ins);
  }
  bind(n, 0, x);
}

// Slice with bounds computed from dynamic sizes (x[:, :x.size(1) // 2]): PyTorch's slicing
// clamps and counts negative bounds from the end as ONNX does for positive steps.
void Importer::lift_slice_sym(const ox::NodeProto& n) {
  auto starts = sym_elems(n, 1), ends = sym_elems(n, 2);
  const at::Tensor* axes_t = const_of(n, 3);
  const at::Tensor* steps_t = const_of(n, 4);
  if (!starts || !ends || starts->size() != ends->size() || (has_input(n, 3) && !axes_t) ||
      (has_input(n, 4) && !steps_t))
    unsupported(n, "slice bounds computed at run time from tensor values");
  std::vector<int64_t> axes, steps;
  if (axes_t) axes = ints_of(*axes_t);
  if (steps_t) steps = ints_of(*steps_t);
  auto r = known_rank(n.input(0));
  Value* x = tensor_in(n.input(0));
  for (size_t k = 0; k < starts->size(); ++k) {
    int64_t a = axes.empty() ? static_cast<int64_t>(k) : axes[k];
    if (a < 0 && r) a += *r;
    if (a < 0) unsupported(n, "a negative axis on an input of unknown rank");
    int64_t st = steps.empty() ? 1 : steps[k];
    if (st <= 0) unsupported(n, "a backwards slice with bounds computed at run time");
    std::vector<Value*> ins = {x, c_int(a), (*starts)[k], (*ends)[k], c_int(st)};
    if (k + 1 == starts->size()) return void(call("Tensor.slice", ins, n));
    x = method("Tensor.slice", ins);
  }
  bind(n, 0, x);
}

// EyeLike: ones on diagonal k of a 2-d tensor shaped like the input; a constant when the shape
// is known (it does not depend on the input's values).
void Importer::lift_eye_like(const ox::NodeProto& n) {
  auto shape = known_shape(n.input(0));
  if (!shape || shape->size() != 2) unsupported(n, "a dynamic or non-2-d shape");
  at::ScalarType st = at::kFloat;
  if (const auto* a = attr(n, "dtype")) {
    auto t = scalar_type(static_cast<int32_t>(a->i()));
    if (!t) unsupported(n, "an output type tinytrace does not read");
    st = *t;
  } else if (auto c = consts_.find(n.input(0)); c != consts_.end()) {
    st = c->second.scalar_type();
  } else if (type_for(n.input(0)).dtype != DType::Unknown) {
    st = static_cast<at::ScalarType>(dtype_to_scalar_type(type_for(n.input(0)).dtype));
  }
  int64_t k = attr_i(n, "k", 0), rows = (*shape)[0], cols = (*shape)[1];
  at::Tensor eye = at::zeros({rows, cols}, at::kFloat);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) eye[i][i + k] = 1;
  consts_[n.output(0)] = eye.to(st);
}

void Importer::lift_squeeze(const ox::NodeProto& n, bool unsqueeze) {
  auto given = squeeze_axes(n);
  if (!given) unsupported(n, "axes computed at run time");
  std::vector<int64_t> axes = *given;
  Value* x = tensor_in(n.input(0));
  auto r = known_rank(n.input(0));
  if (axes.empty()) {
    if (unsqueeze) unsupported(n, "no axes");
    return void(call("Tensor.squeeze", {x}, n));
  }
  if (!sort_axes(axes, r, unsqueeze)) unsupported(n, "negative axes of unknown rank");
  for (size_t k = 0; k < axes.size(); ++k) {
    std::vector<Value*> ins = {x, c_int(axes[k])};
    const char* op = unsqueeze ? "Tensor.unsqueeze" : "Tensor.squeeze";
    if (k + 1 == axes.size()) return void(call(op, ins, n));
    x = method(op, ins);
  }
}

// ---- the ONNX semantics the lifting above and constant folding (fold_constants.cpp) share ----

// Slice's starts/ends/axes/steps: attributes before opset 10, constant inputs after (axes and
// steps empty when not given); nullopt when an input bound is computed at run time.
std::optional<Importer::SliceBounds> Importer::slice_bounds(const ox::NodeProto& n) {
  SliceBounds b;
  if (opset_ < 10) {
    b.starts = attr_ints(n, "starts").value_or(std::vector<int64_t>{});
    b.ends = attr_ints(n, "ends").value_or(std::vector<int64_t>{});
    b.axes = attr_ints(n, "axes").value_or(std::vector<int64_t>{});
    return b;
  }
  for (int i = 1; i <= 4; ++i)
    if (has_input(n, i) && !const_of(n, i)) return std::nullopt;
  b.starts = ints_of(*const_of(n, 1));
  b.ends = ints_of(*const_of(n, 2));
  if (const at::Tensor* t = const_of(n, 3)) b.axes = ints_of(*t);
  if (const at::Tensor* t = const_of(n, 4)) b.steps = ints_of(*t);
  return b;
}

// Squeeze/Unsqueeze's axes: the attribute (before opset 13) or the input (empty: neither given);
// nullopt when the input is computed at run time.
std::optional<std::vector<int64_t>> Importer::squeeze_axes(const ox::NodeProto& n) {
  if (auto a = attr_ints(n, "axes")) return a;
  if (!has_input(n, 1)) return std::vector<int64_t>{};
  if (!const_of(n, 1)) return std::nullopt;
  return ints_of(*const_of(n, 1));
}

// Squeeze/Unsqueeze's axes made non-negative (against the output's rank for Unsqueeze, the
// input's for Squeeze; `rank` is the input's) and sorted in the order they apply one by one;
// false when an axis is negative and the rank unknown.
bool Importer::sort_axes(std::vector<int64_t>& axes, std::optional<int64_t> rank, bool unsqueeze) {
  int64_t r = rank ? *rank + (unsqueeze ? static_cast<int64_t>(axes.size()) : 0) : -1;
  for (auto& a : axes) {
    if (a < 0) {
      if (r < 0) return false;
      a += r;
    }
  }
  if (unsqueeze)
    std::sort(axes.begin(), axes.end());
  else
    std::sort(axes.rbegin(), axes.rend());
  return true;
}

// Transpose's perm: the attribute, else the dims reversed (nullopt: neither, the rank unknown).
std::optional<std::vector<int64_t>> Importer::transpose_perm(const ox::NodeProto& n,
                                                             std::optional<int64_t> rank) {
  std::vector<int64_t> perm = attr_ints(n, "perm").value_or(std::vector<int64_t>{});
  if (perm.empty()) {
    if (!rank) return std::nullopt;
    for (int64_t k = *rank - 1; k >= 0; --k) perm.push_back(k);
  }
  return perm;
}

// Shape's [start, end) of a value of rank `rank` (the attributes of opset 15, clamped).
std::pair<int64_t, int64_t> Importer::shape_range(const ox::NodeProto& n, int64_t rank) {
  int64_t start = attr_i(n, "start", 0), end = attr_i(n, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return {start, end};
}

// ConstantOfShape's fill: its one-element `value` tensor, by default a float32 0.
at::Tensor Importer::fill_value(const ox::NodeProto& n) {
  at::Tensor v = at::zeros({1}, at::kFloat);
  if (const auto* a = attr(n, "value")) v = to_tensor(a->t());
  return v;
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
