// Matrix products: Gemm and MatMul (nn.Linear when the weight is constant), Einsum, Det.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

namespace tt::onnx_import {

Importer::OpList Importer::matmul_ops() {
  return {
      {"Gemm", [](Importer& im, const ox::NodeProto& n) { im.lift_gemm(n); }},
      {"MatMul", [](Importer& im, const ox::NodeProto& n) { im.lift_matmul(n); }},
      {"Einsum", [](Importer& im, const ox::NodeProto& n) { im.lift_einsum(n); }},
      {"Det",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("torch.linalg.det", {im.tensor_in(n.input(0))}, n);
       }},
  };
}

Value* Importer::linear(const ox::NodeProto& n, Value* x, const std::string& weight_name,
                        const at::Tensor& w, const at::Tensor* bias) {
  Node* node = append("nn.Linear", {x});
  node->set_module(module_path(n, weight_name, "linear"));
  node->set_scope(scope_parent(node->module()));
  node->attrs().set("in_features", w.size(1));
  node->attrs().set("out_features", w.size(0));
  node->attrs().set("bias", bias != nullptr);
  module_weight(node, "weight", w, true);
  if (bias) module_weight(node, "bias", *bias, true);
  return node->add_output(Type::tensor());
}

void Importer::lift_gemm(const ox::NodeProto& n) {
  const at::Tensor* b = const_of(n, 1);
  const at::Tensor* c = const_of(n, 2);
  double alpha = attr_f(n, "alpha", 1.0), beta = attr_f(n, "beta", 1.0);
  bool ta = attr_i(n, "transA", 0) != 0, tb = attr_i(n, "transB", 0) != 0;
  if (b && !ta && alpha == 1.0 && (!has_input(n, 2) || (c && beta == 1.0)) && b->dim() == 2) {
    at::Tensor w = tb ? *b : b->t().contiguous();
    at::Tensor bias;
    if (c) {
      if (c->numel() != w.size(0)) goto general;
      bias = c->reshape({w.size(0)}).to(w.scalar_type());
    }
    bind(n, 0, linear(n, tensor_in(n.input(0)), tb ? n.input(1) : "", w, c ? &bias : nullptr));
    return;
  }
general:
  Value* a = tensor_in(n.input(0));
  if (ta) a = method("Tensor.t", {a});
  Value* bb = tensor_in(n.input(1));
  if (tb) bb = method("Tensor.t", {bb});
  Value* y = method("torch.matmul", {a, bb});
  if (alpha != 1.0) y = method("torch.mul", {y, c_float(alpha)});
  if (has_input(n, 2)) {
    Value* cc = tensor_in(n.input(2));
    if (beta != 1.0) cc = method("torch.mul", {cc, c_float(beta)});
    y = method("torch.add", {y, cc, c_int(1)});
  }
  bind(n, 0, y);
}

void Importer::lift_matmul(const ox::NodeProto& n) {
  const at::Tensor* b = const_of(n, 1);
  if (b && b->dim() == 2 && !is_const(n.input(0))) {
    at::Tensor w = b->t().contiguous();
    // MatMul + Add(bias) as exported for nn.Linear on >2-d inputs.
    const auto& users = consumers_[n.output(0)];
    if (users.size() == 1 && users[0] > node_index_) {
      const ox::NodeProto& add = graph().node(users[0]);
      if (add.op_type() == "Add" && add.input_size() == 2) {
        int other = add.input(0) == n.output(0) ? 1 : 0;
        const at::Tensor* bias = const_of(add, other);
        if (bias && bias->numel() == w.size(0) && bias->dim() == 1) {
          at::Tensor bb = bias->to(w.scalar_type());
          Value* y = linear(n, tensor_in(n.input(0)), "", w, &bb);
          skip_.insert(users[0]);
          bind(add, 0, y);
          return;
        }
      }
    }
    bind(n, 0, linear(n, tensor_in(n.input(0)), "", w, nullptr));
    return;
  }
  call("torch.matmul", {tensor_in(n.input(0)), tensor_in(n.input(1))}, n);
}

void Importer::lift_einsum(const ox::NodeProto& n) {
  std::vector<Value*> xs;
  for (int i = 0; i < n.input_size(); ++i) xs.push_back(tensor_in(n.input(i)));
  call("torch.einsum", {c_str(attr_s(n, "equation", "")), list_of(xs), c_none()}, n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
