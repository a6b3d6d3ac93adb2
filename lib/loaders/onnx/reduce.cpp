// Reductions: ReduceMean/Sum/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp, ArgMax/ArgMin,
// CumSum, TopK.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <algorithm>

namespace tt::onnx_import {

Importer::OpList Importer::reduce_ops() {
  return {
      {"ReduceMean", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceSum", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceMax", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceMin", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceL1", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceL2", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceSumSquare", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceProd", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceLogSum", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ReduceLogSumExp", [](Importer& im, const ox::NodeProto& n) { im.lift_reduce(n); }},
      {"ArgMax", [](Importer& im, const ox::NodeProto& n) { im.lift_arg_max_min(n); }},
      {"ArgMin", [](Importer& im, const ox::NodeProto& n) { im.lift_arg_max_min(n); }},
      {"CumSum", [](Importer& im, const ox::NodeProto& n) { im.lift_cumsum(n); }},
      {"TopK", [](Importer& im, const ox::NodeProto& n) { im.lift_topk(n); }},
  };
}

void Importer::lift_reduce(const ox::NodeProto& n) {
  // Axes: an attribute, or (ReduceSum from opset 13, the others from 18) an optional input.
  std::vector<int64_t> axes;
  if (auto a = attr_ints(n, "axes"))
    axes = *a;
  else if (has_input(n, 1)) {
    if (!const_of(n, 1)) unsupported(n, "axes computed at run time");
    axes = ints_of(*const_of(n, 1));
  }
  bool keep = attr_i(n, "keepdims", 1) != 0;
  Value* x = tensor_in(n.input(0));
  if (axes.empty() && attr_i(n, "noop_with_empty_axes", 0) != 0) return bind(n, 0, x);
  if (axes.empty()) {
    auto r = known_rank(n.input(0));
    if (!r) unsupported(n, "a reduction over all dims of unknown rank");
    for (int64_t k = 0; k < *r; ++k) axes.push_back(k);
  }
  const std::string& op = n.op_type();
  if (op == "ReduceMean")
    return void(call("torch.mean", {x, c_ints(axes), c_bool(keep), c_none()}, n));
  // torch.logsumexp is what the exporter writes ReduceLogSumExp for (PyTorch's is computed
  // stably; the two differ only where exp overflows float).
  if (op == "ReduceLogSumExp")
    return void(call("torch.logsumexp", {x, c_ints(axes), c_bool(keep)}, n));
  if (op == "ReduceLogSum")
    return void(
        call("torch.log", {method("torch.sum", {x, c_ints(axes), c_bool(keep), c_none()})}, n));
  if (op == "ReduceProd") {
    // torch.prod takes one dim: one after the other, the highest first (the lower dims keep
    // their numbers when keepdim is False).
    std::vector<int64_t> dims = axes;
    auto r = known_rank(n.input(0));
    for (auto& a : dims)
      if (a < 0) {
        if (!r) unsupported(n, "negative axes of an input of unknown rank");
        a += *r;
      }
    std::sort(dims.rbegin(), dims.rend());
    for (size_t k = 0; k + 1 < dims.size(); ++k)
      x = method("torch.prod", {x, c_int(dims[k]), c_bool(keep), c_none()});
    return void(call("torch.prod", {x, c_int(dims.back()), c_bool(keep), c_none()}, n));
  }
  if (op == "ReduceMax") return void(call("torch.amax", {x, c_ints(axes), c_bool(keep)}, n));
  if (op == "ReduceMin") return void(call("torch.amin", {x, c_ints(axes), c_bool(keep)}, n));
  // Sums: of x, |x| (L1) or x^2 (L2, SumSquare; L2 then takes the square root).
  if (op == "ReduceL1") x = method("torch.abs", {x});
  if (op == "ReduceL2" || op == "ReduceSumSquare") x = method("torch.square", {x});
  if (op != "ReduceL2")
    return void(call("torch.sum", {x, c_ints(axes), c_bool(keep), c_none()}, n));
  call("torch.sqrt", {method("torch.sum", {x, c_ints(axes), c_bool(keep), c_none()})}, n);
}

// ArgMax/ArgMin: torch.argmax/argmin return the first extreme; select_last_index=1 is the first
// one of the input flipped along the axis, counted back from the end.
void Importer::lift_arg_max_min(const ox::NodeProto& n) {
  const char* f = n.op_type() == "ArgMax" ? "torch.argmax" : "torch.argmin";
  int64_t axis = attr_i(n, "axis", 0);
  Value* keep = c_bool(attr_i(n, "keepdims", 1) != 0);
  Value* x = tensor_in(n.input(0));
  if (!attr_i(n, "select_last_index", 0)) return void(call(f, {x, c_int(axis), keep}, n));
  Value* i = method(f, {method("torch.flip", {x, c_ints({axis})}), c_int(axis), keep});
  if (axis < 0) {
    auto r = known_rank(n.input(0));
    if (!r) unsupported(n, "a negative axis of an input of unknown rank");
    axis += *r;
  }
  Value* dim = size_of(n.input(0), axis);
  Value* last = int_const(dim) ? c_int(*int_const(dim) - 1)
                               : scalar_op("operator.sub", {dim, c_int(1)}, Type::Kind::Int);
  call("torch.rsub", {i, last, c_int(1)}, n);
}

void Importer::lift_cumsum(const ox::NodeProto& n) {
  const at::Tensor* ax = const_of(n, 1);
  if (!ax || ax->numel() != 1) unsupported(n, "an axis computed at run time");
  int64_t axis = ints_of(*ax)[0];
  bool reverse = attr_i(n, "reverse", 0) != 0, exclusive = attr_i(n, "exclusive", 0) != 0;
  Value* x = tensor_in(n.input(0));
  // reverse: flip, sum, flip back; exclusive: the inclusive sum minus the element itself.
  Value* y = reverse ? method("torch.flip", {x, c_ints({axis})}) : x;
  y = method("torch.cumsum", {y, c_int(axis), c_none()});
  if (reverse) y = method("torch.flip", {y, c_ints({axis})});
  if (exclusive) y = method("torch.sub", {y, x, c_int(1)});
  bind(n, 0, y);
}

// TopK: k an attribute (before opset 10), a constant, a size or int(t) of a tensor.
void Importer::lift_topk(const ox::NodeProto& n) {
  Value* k = opset_ < 10 ? c_int(attr_i(n, "k", 0)) : int_of(n, 1);
  Node* node = append("torch.topk",
                      {tensor_in(n.input(0)), k, c_int(attr_i(n, "axis", -1)),
                       c_bool(attr_i(n, "largest", 1) != 0), c_bool(attr_i(n, "sorted", 1) != 0)});
  out(node, n, 0);
  out(node, n, 1);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
