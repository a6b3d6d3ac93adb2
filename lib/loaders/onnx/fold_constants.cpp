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

// Folds nodes whose inputs are all constant (shape sub-graphs).
bool Importer::try_fold(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  static const std::set<std::string> foldable = {
      "Shape", "Gather", "Unsqueeze",  "Squeeze", "Concat",    "Reshape",  "Cast",
      "Slice", "Add",    "Sub",        "Mul",     "Div",       "Identity", "ConstantOfShape",
      "Range", "Equal",  "Where",      "Expand",  "Transpose", "Floor",    "Ceil",
      "Sqrt",  "Neg",    "ReduceProd", "Flatten", "Size"};
  if (!foldable.count(op)) return false;
  if (op == "Shape" || op == "Size") {
    auto s = known_shape(n.input(0));
    if (!s) return false;
    at::Tensor t = at::tensor(*s, at::kLong);
    if (op == "Size") {
      consts_[n.output(0)] = t.prod();
      return true;
    }
    int64_t r = static_cast<int64_t>(s->size());
    int64_t start = attr_i(n, "start", 0), end = attr_i(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    consts_[n.output(0)] = t.slice(0, start, end);
    return true;
  }
  std::vector<at::Tensor> in;
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      in.emplace_back();
      continue;
    }
    auto it = consts_.find(n.input(i));
    if (it == consts_.end()) return false;
    in.push_back(it->second);
  }
  if (in.empty()) {
    if (op != "ConstantOfShape") return false;
  }
  at::Tensor r;
  auto axes_of = [&](int input_index) -> std::vector<int64_t> {
    if (auto a = attr_ints(n, "axes")) return *a;
    if (static_cast<int>(in.size()) > input_index && in[input_index].defined())
      return ints_of(in[input_index]);
    return {};
  };
  if (op == "Gather") {
    int64_t axis = attr_i(n, "axis", 0);
    at::Tensor idx = in[1].to(at::kLong);
    int64_t dim = in[0].size(axis < 0 ? axis + in[0].dim() : axis);
    idx = at::where(idx < 0, idx + dim, idx);
    r = at::index_select(in[0], axis, idx.flatten()).reshape([&] {
      std::vector<int64_t> s;
      int64_t a = axis < 0 ? axis + in[0].dim() : axis;
      for (int64_t k = 0; k < a; ++k) s.push_back(in[0].size(k));
      for (int64_t k : idx.sizes()) s.push_back(k);
      for (int64_t k = a + 1; k < in[0].dim(); ++k) s.push_back(in[0].size(k));
      return s;
    }());
  } else if (op == "Unsqueeze") {
    auto axes = axes_of(1);
    int64_t outr = in[0].dim() + static_cast<int64_t>(axes.size());
    for (auto& a : axes)
      if (a < 0) a += outr;
    std::sort(axes.begin(), axes.end());
    r = in[0];
    for (int64_t a : axes) r = r.unsqueeze(a);
  } else if (op == "Squeeze") {
    auto axes = axes_of(1);
    if (axes.empty()) {
      r = in[0].squeeze();
    } else {
      for (auto& a : axes)
        if (a < 0) a += in[0].dim();
      std::sort(axes.rbegin(), axes.rend());
      r = in[0];
      for (int64_t a : axes) r = r.squeeze(a);
    }
  } else if (op == "Concat") {
    std::vector<at::Tensor> parts;
    for (auto& t : in)
      if (t.defined()) parts.push_back(t);
    r = at::cat(parts, attr_i(n, "axis", 0));
  } else if (op == "Reshape") {
    auto shape = ints_of(in[1]);
    for (size_t k = 0; k < shape.size(); ++k)
      if (shape[k] == 0 && attr_i(n, "allowzero", 0) == 0)
        shape[k] = in[0].size(static_cast<int64_t>(k));
    r = in[0].reshape(shape);
  } else if (op == "Flatten") {
    int64_t axis = attr_i(n, "axis", 1);
    if (axis < 0) axis += in[0].dim();
    int64_t lead = 1;
    for (int64_t k = 0; k < axis; ++k) lead *= in[0].size(k);
    r = in[0].reshape({lead, -1});
  } else if (op == "Cast") {
    auto st = scalar_type(static_cast<int32_t>(attr_i(n, "to", 1)));
    if (!st) return false;
    r = in[0].to(*st);
  } else if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset_ < 10) {
      starts = attr_ints(n, "starts").value_or(std::vector<int64_t>{});
      ends = attr_ints(n, "ends").value_or(std::vector<int64_t>{});
      axes = attr_ints(n, "axes").value_or(std::vector<int64_t>{});
    } else {
      starts = ints_of(in[1]);
      ends = ints_of(in[2]);
      if (in.size() > 3 && in[3].defined()) axes = ints_of(in[3]);
      if (in.size() > 4 && in[4].defined()) steps = ints_of(in[4]);
    }
    r = in[0];
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t a = axes.empty() ? static_cast<int64_t>(k) : axes[k];
      if (a < 0) a += r.dim();
      int64_t st = steps.empty() ? 1 : steps[k];
      if (st == 0) return false;
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
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (op == "Add") r = in[0] + in[1];
    if (op == "Sub") r = in[0] - in[1];
    if (op == "Mul") r = in[0] * in[1];
    if (op == "Div") r = in[0].is_floating_point() ? in[0] / in[1] : at::div(in[0], in[1], "trunc");
    r = r.to(in[0].scalar_type());
  } else if (op == "Identity") {
    r = in[0];
  } else if (op == "ConstantOfShape") {
    std::vector<int64_t> shape = in.empty() ? std::vector<int64_t>{} : ints_of(in[0]);
    at::Tensor v = at::zeros({1}, at::kFloat);
    if (const auto* a = attr(n, "value")) v = to_tensor(a->t());
    r = at::full(shape, 0, v.options()).fill_(v.flatten()[0]);
  } else if (op == "Range") {
    r = at::arange(in[0].item<double>(), in[1].item<double>(), in[2].item<double>(),
                   in[0].options());
  } else if (op == "Equal") {
    r = at::eq(in[0], in[1]);
  } else if (op == "Where") {
    r = at::where(in[0], in[1], in[2]);
  } else if (op == "Expand") {
    auto shape = ints_of(in[1]);
    r = in[0] * at::ones(shape, in[0].options());
  } else if (op == "Transpose") {
    std::vector<int64_t> perm = attr_ints(n, "perm").value_or(std::vector<int64_t>{});
    if (perm.empty())
      for (int64_t k = in[0].dim() - 1; k >= 0; --k) perm.push_back(k);
    r = in[0].permute(perm).contiguous();
  } else if (op == "Floor" || op == "Ceil" || op == "Sqrt" || op == "Neg") {
    r = op == "Floor"  ? in[0].floor()
        : op == "Ceil" ? in[0].ceil()
        : op == "Sqrt" ? in[0].sqrt()
                       : in[0].neg();
  } else if (op == "ReduceProd") {
    r = in[0].prod().to(in[0].scalar_type());
  } else {
    return false;
  }
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
  const ox::NodeProto& n = model_.graph().node(p->second);
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
