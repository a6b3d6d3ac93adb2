// Indexing: Gather (nn.Embedding for a table of weights), GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND, OneHot, NonZero, Unique.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <map>

namespace tt::onnx_import {

Importer::OpList Importer::gather_ops() {
  return {
      {"Gather", [](Importer& im, const ox::NodeProto& n) { im.lift_gather(n); }},
      {"GatherElements", [](Importer& im, const ox::NodeProto& n) { im.lift_gather_elements(n); }},
      {"GatherND", [](Importer& im, const ox::NodeProto& n) { im.lift_gather_nd(n); }},
      {"Scatter", [](Importer& im, const ox::NodeProto& n) { im.lift_scatter_elements(n); }},
      {"ScatterElements",
       [](Importer& im, const ox::NodeProto& n) { im.lift_scatter_elements(n); }},
      {"ScatterND", [](Importer& im, const ox::NodeProto& n) { im.lift_scatter_nd(n); }},
      {"OneHot", [](Importer& im, const ox::NodeProto& n) { im.lift_one_hot(n); }},
      // ONNX's [rank, count] indices are PyTorch's [count, rank] transposed.
      {"NonZero",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("Tensor.t", {im.method("torch.nonzero", {im.tensor_in(n.input(0))})}, n);
       }},
      {"Unique", [](Importer& im, const ox::NodeProto& n) { im.lift_unique(n); }},
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
  if (idx && idx->dim() == 0)  // select counts a negative index from the end, as ONNX does
    return void(call("Tensor.select", {x, c_int(axis), c_int(idx->item<int64_t>())}, n));
  Value* cidx = idx ? const_indices(n, 1, axis) : nullptr;  // made non-negative
  if (idx && !cidx) unsupported(n, "negative indices into a dim of unknown size");
  if (cidx && idx->dim() == 1) return void(call("torch.index_select", {x, c_int(axis), cidx}, n));
  // Run-time or multi-dimensional indices: index_select on the flattened indices, then the
  // result's shape x.shape[:axis] + indices.shape + x.shape[axis+1:]. Like index_select, the
  // indices must not be negative (the exporter writes them non-negative).
  auto r = known_rank(n.input(0));
  auto ir = known_rank(n.input(1));
  if (!r || !ir) unsupported(n, "data or indices of unknown rank");
  int64_t a = axis < 0 ? axis + *r : axis;
  if (a < 0 || a >= *r) unsupported(n, "axis out of range");
  Value* iv = cidx ? cidx : tensor_in(n.input(1));
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

// Note [ONNX indices]
// ONNX's index inputs may be negative (counted from the end); PyTorch's gather/scatter take only
// non-negative ones and raise on the others, so the generated code never computes something else
// silently. Constant indices are made non-negative here; run-time ones are passed as they are
// (the exporter writes them non-negative). GatherND/ScatterND index with tuples of tensors
// (x[i0, i1]), where PyTorch reads negative indices as ONNX does.

// Constant index tensor `i` of node n made non-negative along `dim` of input 0 (nullptr: not a
// constant, or the input's size along dim unknown).
Value* Importer::const_indices(const ox::NodeProto& n, int i, int64_t axis) {
  const at::Tensor* idx = const_of(n, i);
  if (!idx) return nullptr;
  at::Tensor t = idx->to(at::kLong);
  if (t.lt(0).any().item<bool>()) {
    auto shape = known_shape(n.input(0));
    auto r = known_rank(n.input(0));
    if (!shape || !r) return nullptr;
    int64_t a = axis < 0 ? axis + *r : axis;
    t = at::where(t < 0, t + (*shape)[static_cast<size_t>(a)], t);
  }
  return constant(t.contiguous(), Type::tensor(DType::I64, t.sizes().vec()));
}

void Importer::lift_gather_elements(const ox::NodeProto& n) {
  int64_t axis = attr_i(n, "axis", 0);
  Value* idx = const_indices(n, 1, axis);
  call("torch.gather",
       {tensor_in(n.input(0)), c_int(axis), idx ? idx : tensor_in(n.input(1)), c_bool(false)}, n);
}

// The index tuple of GatherND/ScatterND: indices[..., k] for each k < indices.shape[-1].
std::vector<Value*> Importer::index_tuple(const ox::NodeProto& n, int i) {
  // Only the last dim (how many coordinates each index has) must be known.
  Type t = type_for(n.input(i));
  std::optional<std::vector<int64_t>> shape = t.shape;
  if (const at::Tensor* c = const_of(n, i)) shape = c->sizes().vec();
  if (!shape || shape->empty() || shape->back() < 0) shape = known_shape(n.input(i));
  if (!shape || shape->empty() || shape->back() < 0)
    unsupported(n, "indices whose last dim is unknown");
  if (attr_i(n, "batch_dims", 0) != 0) unsupported(n, "batch_dims other than 0");
  Value* idx = tensor_in(n.input(i));
  std::vector<Value*> parts;
  for (int64_t k = 0; k < shape->back(); ++k)
    parts.push_back(method("Tensor.select", {idx, c_int(-1), c_int(k)}));
  return parts;
}

// GatherND: data[indices[..., 0], indices[..., 1], ...].
void Importer::lift_gather_nd(const ox::NodeProto& n) {
  std::vector<Value*> parts = index_tuple(n, 1);
  Node* l = append("prim.ListConstruct", parts);
  Value* list = l->add_output(Type::list(Type::optional(Type::tensor())));
  call("aten::index.Tensor", {tensor_in(n.input(0)), list}, n);
}

// ScatterND: data with data[indices[..., 0], ...] = updates (reduction add: +=, mul: *=, opset
// 18 max/min), out of place.
void Importer::lift_scatter_nd(const ox::NodeProto& n) {
  std::string red = attr_s(n, "reduction", "none");
  if (red != "none" && red != "add")
    unsupported(n, "reduction '" + red + "' (index_put only assigns or adds)");
  std::vector<Value*> parts = index_tuple(n, 1);
  Node* l = append("prim.ListConstruct", parts);
  Value* list = l->add_output(Type::list(Type::optional(Type::tensor())));
  call("torch.index_put",
       {tensor_in(n.input(0)), list, tensor_in(n.input(2)), c_bool(red == "add")}, n);
}

// ScatterElements (Scatter before opset 11): torch.scatter, or torch.scatter_reduce with the
// data included for a reduction (add: sum, mul: prod, max, min).
void Importer::lift_scatter_elements(const ox::NodeProto& n) {
  int64_t axis = attr_i(n, "axis", 0);
  std::string red = attr_s(n, "reduction", "none");
  Value* idx = const_indices(n, 1, axis);
  std::vector<Value*> ins = {tensor_in(n.input(0)), c_int(axis), idx ? idx : tensor_in(n.input(1)),
                             tensor_in(n.input(2))};
  if (red == "none") return void(call("torch.scatter", ins, n));
  static const std::map<std::string, const char*> reduce = {
      {"add", "sum"}, {"mul", "prod"}, {"max", "amax"}, {"min", "amin"}};
  auto it = reduce.find(red);
  if (it == reduce.end()) unsupported(n, "reduction '" + red + "'");
  ins.push_back(c_str(it->second));
  ins.push_back(c_bool(true));
  call("torch.scatter_reduce", ins, n);
}

// OneHot(indices, depth, values=[off, on]): where(indices[..., None] == arange(depth), on, off),
// with negative indices counted from depth (ONNX), out-of-range ones all `off`; the class dim
// moved to `axis`.
void Importer::lift_one_hot(const ox::NodeProto& n) {
  const at::Tensor* values = const_of(n, 2);
  if (!values || values->numel() != 2) unsupported(n, "values computed at run time");
  Value* depth = nullptr;
  if (const at::Tensor* d = const_of(n, 1)) {
    depth = c_int(static_cast<int64_t>(d->to(at::kDouble).item<double>()));
  } else {
    auto e = sym_elems(n, 1);
    if (!e || e->size() != 1) unsupported(n, "a depth computed from tensor values at run time");
    depth = (*e)[0];
  }
  Value* idx = tensor_in(n.input(0));
  Value* neg = method("torch.lt", {idx, c_int(0)});
  idx = method("torch.where", {neg, method("torch.add", {idx, depth, c_int(1)}), idx});
  Value* classes = method("torch.arange", {c_int(0), depth, c_int(1),
                                           constant(DType::I64, Type::of(Type::Kind::ScalarType)),
                                           c_none(), c_none(), c_none()});
  Value* hot = method("torch.eq", {method("Tensor.unsqueeze", {idx, c_int(-1)}), classes});
  at::Tensor v = values->contiguous();
  auto scalar = [&](int64_t k) {
    at::Tensor e = v.flatten()[k];
    return v.is_floating_point() ? c_float(e.item<double>()) : c_int(e.item<int64_t>());
  };
  DType d = dtype_from_scalar_type(static_cast<int64_t>(v.scalar_type()));
  Value* y = method("torch.where", {hot, scalar(1), scalar(0)});
  y = method("Tensor.to", {y, constant(d, Type::of(Type::Kind::ScalarType)), c_bool(false),
                           c_bool(false), c_none()});
  int64_t axis = attr_i(n, "axis", -1);
  if (axis == -1) return bind(n, 0, y);
  auto r = known_rank(n.input(0));
  if (!r) unsupported(n, "an axis other than -1 for indices of unknown rank");
  if (axis < 0) axis += *r + 1;
  call("torch.movedim", {y, c_int(-1), c_int(axis)}, n);
}

// Unique(x, axis?, sorted) -> (Y, indices, inverse_indices, counts): torch.unique gives Y, the
// inverse and the counts (sorted only; the first-occurrence indices have no PyTorch form).
void Importer::lift_unique(const ox::NodeProto& n) {
  if (attr_i(n, "sorted", 1) == 0)
    unsupported(n, "sorted=0 (the order of first occurrence; torch.unique sorts)");
  if (n.output_size() > 1 && !n.output(1).empty() && !consumers_[n.output(1)].empty())
    unsupported(n, "the indices output (first occurrences; torch.unique has no such output)");
  Value* x = tensor_in(n.input(0));
  bool flat = !attr(n, "axis");
  int64_t axis = attr_i(n, "axis", 0);
  if (flat) x = method("Tensor.reshape", {x, c_ints({-1})});
  Node* u = append("torch.unique", {x, c_int(axis), c_bool(true), c_bool(true), c_bool(true)});
  out(u, n, 0);
  Value* inverse = u->add_output(Type::tensor(DType::I64));
  Value* counts = u->add_output(Type::tensor(DType::I64));
  if (n.output_size() > 2) bind(n, 2, inverse);
  if (n.output_size() > 3) bind(n, 3, counts);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
