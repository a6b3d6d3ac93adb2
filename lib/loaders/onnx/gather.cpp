// Indexing: Gather (nn.Embedding for a table of weights), GatherElements.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

namespace tt::onnx_import {

Importer::OpList Importer::gather_ops() {
  return {
      {"Gather", [](Importer& im, const ox::NodeProto& n) { im.lift_gather(n); }},
      {"GatherElements", [](Importer& im, const ox::NodeProto& n) { im.lift_gather_elements(n); }},
  };
}

void Importer::lift_gather(const ox::NodeProto& n) {
  int64_t axis = attr_i(n, "axis", 0);
  const at::Tensor* idx = const_of(n, 1);
  const at::Tensor* table = const_of(n, 0);
  // nn.Embedding exports as Gather(weight, ids): a 2-d initializer indexed by run-time ids.
  if (!idx && table && table->dim() == 2 && (axis == 0 || axis == -2) &&
      table->is_floating_point() && init_names_.count(n.input(0)))
    return lift_embedding(n, *table);
  Value* x = tensor_in(n.input(0));
  if (idx && idx->dim() == 0)
    return void(call("Tensor.select", {x, c_int(axis), c_int(idx->item<int64_t>())}, n));
  if (idx && idx->dim() == 1) {
    Value* iv = constant(idx->to(at::kLong).clone(), Type::tensor(DType::I64, {idx->size(0)}));
    return void(call("torch.index_select", {x, c_int(axis), iv}, n));
  }
  // Run-time or multi-dimensional indices: index_select on the flattened indices, then the
  // result's shape x.shape[:axis] + indices.shape + x.shape[axis+1:]. Like index_select, the
  // indices must not be negative (the exporter writes them non-negative).
  auto r = known_rank(n.input(0));
  auto ir = known_rank(n.input(1));
  if (!r || !ir) unsupported(n, "data or indices of unknown rank");
  int64_t a = axis < 0 ? axis + *r : axis;
  if (a < 0 || a >= *r) unsupported(n, "axis out of range");
  Value* iv = tensor_in(n.input(1));
  if (*ir == 1) return void(call("torch.index_select", {x, c_int(a), iv}, n));
  Value* y =
      method("torch.index_select", {x, c_int(a), method("Tensor.reshape", {iv, c_ints({-1})})});
  if (*ir == 0) return void(call("Tensor.squeeze", {y, c_int(a)}, n));
  auto dim = [&](const std::string& name, int64_t k) {
    auto s = known_shape(name);
    return s ? c_int((*s)[static_cast<size_t>(k)]) : size_of(name, k);
  };
  std::vector<Value*> shape;
  for (int64_t k = 0; k < a; ++k) shape.push_back(dim(n.input(0), k));
  for (int64_t k = 0; k < *ir; ++k) shape.push_back(dim(n.input(1), k));
  for (int64_t k = a + 1; k < *r; ++k) shape.push_back(dim(n.input(0), k));
  call("Tensor.reshape", {y, int_list(shape)}, n);
}

// ONNX keeps no padding_idx (it only changes gradients): the module gets None.
void Importer::lift_embedding(const ox::NodeProto& n, const at::Tensor& table) {
  Node* node = append("nn.Embedding", {tensor_in(n.input(1))});
  node->set_module(module_path(n, n.input(0), "embedding"));
  node->set_scope(scope_parent(node->module()));
  Attrs& a = node->attrs();
  a.set("num_embeddings", table.size(0));
  a.set("embedding_dim", table.size(1));
  a.set("padding_idx", NoneAttr{});
  a.set("scale_grad_by_freq", false);
  a.set("sparse", false);
  module_weight(node, "weight", table, true);
  out(node, n);
}

// torch.gather has no negative indices; the exporter writes them non-negative.
void Importer::lift_gather_elements(const ox::NodeProto& n) {
  call("torch.gather",
       {tensor_in(n.input(0)), c_int(attr_i(n, "axis", 0)), tensor_in(n.input(1)), c_bool(false)},
       n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
