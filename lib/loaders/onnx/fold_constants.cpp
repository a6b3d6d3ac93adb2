// Constant tensors: Constant nodes, and nodes whose inputs are all constant (shape and index
// sub-graphs) folded with ATen while lifting, in file order or ahead of it.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <algorithm>

namespace tt::onnx_import {

void Importer::lift_constant(const ox::NodeProto& n) {
  at::Tensor t;
  if (const auto* a = attr(n, "value"))
    t = to_tensor(a->t());
  else if (const auto* a = attr(n, "value_float"))
    t = at::scalar_tensor(a->f(), at::kFloat);
  else if (const auto* a = attr(n, "value_int"))
    t = at::scalar_tensor(a->i(), at::kLong);
  else if (const auto* a = attr(n, "value_floats"))
    t = at::tensor(std::vector<float>(a->floats().begin(), a->floats().end()));
  else if (const auto* a = attr(n, "value_ints"))
    t = at::tensor(std::vector<int64_t>(a->ints().begin(), a->ints().end()));
  else
    unsupported(n, "a Constant without a tensor/float/int value");
  consts_[n.output(0)] = t;
}

// Note [Folding ONNX constants]
// A node whose inputs are all constants (initializers, Constant nodes, nodes folded before) is
// folded while lifting: its value goes to consts_, where the liftings that need a value (Reshape's
// target shape, Slice's bounds, Resize's scales) read it. This cannot wait for a pass over the
// lifted graph: what is lifted depends on these values, and Shape/Size fold from known_shape,
// which may probe the IR lifted so far (Note [Shapes ONNX inference leaves open]). Each foldable
// op is one entry of fold_table(): the op evaluated with ATen on its constant inputs, its
// attributes read by the helpers its lifting uses (tensor.cpp). The liftings themselves are not
// run on the constants: they decline or differ on inputs these entries fold (negative Slice steps
// and Gather indices, Expand to fewer dims, one-element float operands lifted as Python floats,
// Range and ConstantOfShape of constant bounds).

namespace {

using Ins = std::vector<at::Tensor>;

// Add/Sub/Mul/Div in the first operand's dtype (integer Div truncates).
at::Tensor fold_arith(Importer&, const ox::NodeProto& n, const Ins& in) {
  const std::string& op = n.op_type();
  const at::Tensor &a = in[0], &b = in[1];
  at::Tensor r;
  if (op == "Add") r = a + b;
  if (op == "Sub") r = a - b;
  if (op == "Mul") r = a * b;
  if (op == "Div") r = a.is_floating_point() ? a / b : at::div(a, b, "trunc");
  return r.to(a.scalar_type());
}

}  // namespace

const std::map<std::string, Importer::Fold>& Importer::fold_table() {
  static const std::map<std::string, Fold> folds = {
      {"Gather",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         int64_t axis = im.attr_i(n, "axis", 0);
         at::Tensor idx = in[1].to(at::kLong);
         int64_t dim = in[0].size(axis < 0 ? axis + in[0].dim() : axis);
         idx = at::where(idx < 0, idx + dim, idx);
         std::vector<int64_t> s;  // data.shape[:axis] + indices.shape + data.shape[axis+1:]
         int64_t a = axis < 0 ? axis + in[0].dim() : axis;
         for (int64_t k = 0; k < a; ++k) s.push_back(in[0].size(k));
         for (int64_t k : idx.sizes()) s.push_back(k);
         for (int64_t k = a + 1; k < in[0].dim(); ++k) s.push_back(in[0].size(k));
         return at::index_select(in[0], axis, idx.flatten()).reshape(s);
       }},
      {"Unsqueeze",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         auto axes = *im.squeeze_axes(n);
         sort_axes(axes, in[0].dim(), true);
         at::Tensor r = in[0];
         for (int64_t a : axes) r = r.unsqueeze(a);
         return r;
       }},
      {"Squeeze",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         auto axes = *im.squeeze_axes(n);
         if (axes.empty()) return in[0].squeeze();
         sort_axes(axes, in[0].dim(), false);
         at::Tensor r = in[0];
         for (int64_t a : axes) r = r.squeeze(a);
         return r;
       }},
      {"Concat",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         std::vector<at::Tensor> parts;
         for (auto& t : in)
           if (t.defined()) parts.push_back(t);
         return at::cat(parts, im.attr_i(n, "axis", 0));
       }},
      {"Reshape",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         auto shape = im.ints_of(in[1]);
         for (size_t k = 0; k < shape.size(); ++k)
           if (shape[k] == 0 && im.attr_i(n, "allowzero", 0) == 0)
             shape[k] = in[0].size(static_cast<int64_t>(k));
         return in[0].reshape(shape);
       }},
      {"Flatten",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         int64_t axis = im.attr_i(n, "axis", 1);
         if (axis < 0) axis += in[0].dim();
         int64_t lead = 1;
         for (int64_t k = 0; k < axis; ++k) lead *= in[0].size(k);
         return in[0].reshape({lead, -1});
       }},
      {"Cast",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         auto st = scalar_type(static_cast<int32_t>(im.attr_i(n, "to", 1)));
         return st ? in[0].to(*st) : at::Tensor();
       }},
      {"Slice",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         auto [starts, ends, axes, steps] = *im.slice_bounds(n);
         at::Tensor r = in[0];
         for (size_t k = 0; k < starts.size(); ++k) {
           int64_t a = axes.empty() ? static_cast<int64_t>(k) : axes[k];
           if (a < 0) a += r.dim();
           int64_t st = steps.empty() ? 1 : steps[k];
           if (st == 0) return at::Tensor();
           // ONNX clamping rules (negative steps run from the end, as in F.pad's sub-graph).
           int64_t dim = r.size(a);
           int64_t s0 = starts[k] < 0 ? starts[k] + dim : starts[k];
           int64_t e0 = ends[k] < 0 ? ends[k] + dim : ends[k];
           if (st > 0) {
             s0 = std::clamp<int64_t>(s0, 0, dim);
             e0 = std::clamp<int64_t>(e0, 0, dim);
           } else {
             s0 = std::clamp<int64_t>(s0, 0, dim - 1);
             e0 = std::clamp<int64_t>(e0, -1, dim - 1);
           }
           r = at::index_select(r, a, at::arange(s0, e0, st, at::kLong));
         }
         return r;
       }},
      {"Add", fold_arith},
      {"Sub", fold_arith},
      {"Mul", fold_arith},
      {"Div", fold_arith},
      {"Identity", [](Importer&, const ox::NodeProto&, const Ins& in) { return in[0]; }},
      {"ConstantOfShape",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         std::vector<int64_t> shape = in.empty() ? std::vector<int64_t>{} : im.ints_of(in[0]);
         at::Tensor v = im.fill_value(n);
         return at::full(shape, 0, v.options()).fill_(v.flatten()[0]);
       }},
      {"Range",
       [](Importer&, const ox::NodeProto&, const Ins& in) {
         return at::arange(in[0].item<double>(), in[1].item<double>(), in[2].item<double>(),
                           in[0].options());
       }},
      {"Equal",
       [](Importer&, const ox::NodeProto&, const Ins& in) { return at::eq(in[0], in[1]); }},
      {"Where", [](Importer&, const ox::NodeProto&,
                   const Ins& in) { return at::where(in[0], in[1], in[2]); }},
      {"Expand",
       [](Importer& im, const ox::NodeProto&, const Ins& in) {
         return in[0] * at::ones(im.ints_of(in[1]), in[0].options());  // broadcasts both ways
       }},
      {"Transpose",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         return in[0].permute(*im.transpose_perm(n, in[0].dim())).contiguous();
       }},
      {"Tile", [](Importer& im, const ox::NodeProto&,
                  const Ins& in) { return in[0].repeat(im.ints_of(in[1])); }},
      {"Floor", [](Importer&, const ox::NodeProto&, const Ins& in) { return in[0].floor(); }},
      {"Ceil", [](Importer&, const ox::NodeProto&, const Ins& in) { return in[0].ceil(); }},
      {"Sqrt", [](Importer&, const ox::NodeProto&, const Ins& in) { return in[0].sqrt(); }},
      {"Neg", [](Importer&, const ox::NodeProto&, const Ins& in) { return in[0].neg(); }},
      {"ReduceProd",
       [](Importer& im, const ox::NodeProto& n, const Ins& in) {
         std::vector<int64_t> axes = im.attr_ints(n, "axes").value_or(std::vector<int64_t>{});
         if (in.size() > 1 && in[1].defined()) axes = im.ints_of(in[1]);
         bool keep = im.attr_i(n, "keepdims", 1) != 0;
         if (axes.empty() && im.attr_i(n, "noop_with_empty_axes", 0)) return in[0];
         if (axes.empty())
           for (int64_t k = 0; k < in[0].dim(); ++k) axes.push_back(k);
         for (auto& a : axes)
           if (a < 0) a += in[0].dim();
         std::sort(axes.rbegin(), axes.rend());
         at::Tensor r = in[0];
         for (int64_t a : axes) r = r.prod(a, keep);
         return r.to(in[0].scalar_type());
       }},
  };
  return folds;
}

// Shape and Size fold from what is known of their input's shape, whether or not it is constant.
bool Importer::fold_shape(const ox::NodeProto& n) {
  auto s = known_shape(n.input(0));
  if (!s) return false;
  at::Tensor t = at::tensor(*s, at::kLong);
  if (n.op_type() == "Size") {
    consts_[n.output(0)] = t.prod();
    return true;
  }
  auto [start, end] = shape_range(n, static_cast<int64_t>(s->size()));
  consts_[n.output(0)] = t.slice(0, start, end);
  return true;
}

// Folds a node whose inputs are all constant (Note [Folding ONNX constants]); false when it is not
// foldable.
bool Importer::try_fold(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op == "Shape" || op == "Size") return fold_shape(n);
  auto fold = fold_table().find(op);
  if (fold == fold_table().end()) return false;
  Ins in;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      in.emplace_back();
      continue;
    }
    auto it = consts_.find(n.input(i));
    if (it == consts_.end()) return false;
    in.push_back(it->second);
  }
  if (in.empty() && op != "ConstantOfShape") return false;
  at::Tensor r = fold->second(*this, n, in);
  if (!r.defined()) return false;
  consts_[n.output(0)] = r.contiguous();
  return true;
}

// Folds the constant sub-graph that computes `name` ahead of its turn (the exporter places the
// constants a later layer or wrapper node uses after the first layer); false when not constant.
bool Importer::fold_ahead(const std::string& name, int depth) {
  if (name.empty() || consts_.count(name)) return !name.empty();
  if (env_.count(name) || sym_.count(name) || depth > 64) return false;
  auto p = producer_.find(name);
  if (p == producer_.end() || p->second <= node_index_ || skip_.count(p->second)) return false;
  const ox::NodeProto& n = graph().node(p->second);
  bool shape = n.op_type() == "Shape" || n.op_type() == "Size";
  if (!shape)
    for (const auto& in : n.input())
      if (!in.empty() && !fold_ahead(in, depth + 1)) return false;
  bool ok = false;
  if (n.op_type() == "Constant") {
    lift_constant(n);
    ok = true;
  } else {
    ok = try_fold(n);
  }
  if (ok) skip_.insert(p->second);
  return ok;
}

const at::Tensor* Importer::const_ahead(const ox::NodeProto& n, int i) {
  if (!has_input(n, i) || !fold_ahead(n.input(i))) return nullptr;
  return const_of(n, i);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
