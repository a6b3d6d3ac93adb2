// Shape sub-graphs on run-time sizes (dynamic axes), lifted as lists of Python ints.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <algorithm>

namespace tt::onnx_import {

// Note [Dynamic shapes]
// With dynamic axes exported, Shape/Gather/Unsqueeze/Concat/... chains on int64 shape tensors
// cannot be folded. Such a value is kept as a list of Python ints (IR values: Tensor.size
// results and constants), which is how the TorchScript loader sees `x.view(x.size(0), -1)`;
// Reshape/Expand/ConstantOfShape then take it as a prim.ListConstruct of ints, Resize as
// F.interpolate's size, Range as torch.arange's bounds. Arithmetic on two static sizes folds.

Value* Importer::size_of(const std::string& name, int64_t dim) {
  Type t = type_for(name);
  if (t.shape && dim < static_cast<int64_t>(t.shape->size()) &&
      (*t.shape)[static_cast<size_t>(dim)] >= 0)
    return c_int((*t.shape)[static_cast<size_t>(dim)]);
  Node* n = append("Tensor.size", {tensor_in(name), c_int(dim)});
  return n->add_output(Type::of(Type::Kind::Int));
}

// The elements of a symbolic or constant int shape tensor (nullopt: neither).
std::optional<std::vector<Value*>> Importer::sym_elems(const ox::NodeProto& n, int i) {
  if (!has_input(n, i)) return std::nullopt;
  auto s = sym_.find(n.input(i));
  if (s != sym_.end()) return s->second;
  const at::Tensor* c = const_of(n, i);
  if (!c || c->is_floating_point() || c->dim() > 1) return std::nullopt;
  std::vector<Value*> out;
  for (int64_t v : ints_of(*c)) out.push_back(c_int(v));
  return out;
}

bool Importer::is_sym(const ox::NodeProto& n, int i) {
  return has_input(n, i) && sym_.count(n.input(i));
}

std::optional<int64_t> Importer::int_const(Value* v) {
  const AttrValue* a = v->constant();
  if (a && std::holds_alternative<int64_t>(*a)) return std::get<int64_t>(*a);
  return std::nullopt;
}

Value* Importer::int_list(const std::vector<Value*>& elems) {
  std::vector<int64_t> ints;
  for (Value* e : elems) {
    auto c = int_const(e);
    if (!c) {
      Node* l = append("prim.ListConstruct", elems);
      return l->add_output(Type::list(Type::of(Type::Kind::Int)));
    }
    ints.push_back(*c);
  }
  return c_ints(ints);
}

void Importer::set_sym(const ox::NodeProto& n, std::vector<Value*> elems, bool scalar) {
  sym_[n.output(0)] = std::move(elems);
  if (scalar) sym_scalar_.insert(n.output(0));
}

// Lifts a shape computation on symbolic values; false when `n` does not involve one.
bool Importer::try_symbolic(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  if (op == "Shape") {
    auto r = known_rank(n.input(0));
    if (!r) return false;
    auto [start, end] = shape_range(n, *r);
    std::vector<Value*> elems;
    for (int64_t k = start; k < end; ++k) elems.push_back(size_of(n.input(0), k));
    set_sym(n, elems, false);
    return true;
  }
  bool any = false;
  for (int i = 0; i < n.input_size(); ++i) any = any || is_sym(n, i);
  if (!any) return false;
  auto elems = [&](int i) {
    auto e = sym_elems(n, i);
    if (!e) unsupported(n, "a shape computation mixing dynamic sizes with tensors");
    return *e;
  };
  if (op == "Identity" || op == "Cast") {
    if (op == "Cast") {
      auto st = scalar_type(static_cast<int32_t>(attr_i(n, "to", 7)));
      if (!st || (*st != at::kLong && *st != at::kInt))
        unsupported(n, "a cast of a dynamic size to a non-integer type");
    }
    set_sym(n, elems(0), sym_scalar_.count(n.input(0)) != 0);
    return true;
  }
  if (op == "Gather" && !is_sym(n, 1)) {
    const at::Tensor* idx = const_of(n, 1);
    if (!idx || attr_i(n, "axis", 0) != 0 || idx->dim() > 1)
      unsupported(n, "a gather from a dynamic shape");
    auto src = elems(0);
    std::vector<Value*> out;
    for (int64_t k : ints_of(*idx)) {
      int64_t kk = k < 0 ? k + static_cast<int64_t>(src.size()) : k;
      if (kk < 0 || kk >= static_cast<int64_t>(src.size())) unsupported(n, "an index out of range");
      out.push_back(src[static_cast<size_t>(kk)]);
    }
    set_sym(n, out, idx->dim() == 0);
    return true;
  }
  if ((op == "Unsqueeze" || op == "Squeeze") && !is_sym(n, 1)) {
    auto axes = const_axes(n).value_or(std::vector<int64_t>{0});
    bool scalar = sym_scalar_.count(n.input(0)) != 0;
    if (axes.size() != 1 || (axes[0] != 0 && axes[0] != -1) || scalar != (op == "Unsqueeze"))
      unsupported(n, "an unexpected reshaping of a dynamic size");
    auto e = elems(0);
    if (op == "Squeeze" && e.size() != 1)
      unsupported(n, "an unexpected reshaping of a dynamic size");
    set_sym(n, e, op == "Squeeze");
    return true;
  }
  if (op == "Concat") {
    std::vector<Value*> out;
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i).empty()) continue;
      if (sym_scalar_.count(n.input(i))) unsupported(n, "a concatenation of 0-d sizes");
      auto e = elems(i);
      out.insert(out.end(), e.begin(), e.end());
    }
    set_sym(n, out, false);
    return true;
  }
  if (op == "Slice" && opset_ >= 10 && !is_sym(n, 1) && !is_sym(n, 2)) {
    auto src = elems(0);
    const at::Tensor* st = const_of(n, 1);
    const at::Tensor* en = const_of(n, 2);
    if (!st || !en || st->numel() != 1 ||
        (has_input(n, 4) && (!const_of(n, 4) || ints_of(*const_of(n, 4))[0] != 1)))
      unsupported(n, "a slice of a dynamic shape with run-time bounds");
    int64_t len = static_cast<int64_t>(src.size());
    int64_t s0 = ints_of(*st)[0], e0 = ints_of(*en)[0];
    if (s0 < 0) s0 += len;
    if (e0 < 0) e0 += len;
    s0 = std::clamp<int64_t>(s0, 0, len);
    e0 = std::clamp<int64_t>(e0, s0, len);
    set_sym(n, std::vector<Value*>(src.begin() + s0, src.begin() + e0), false);
    return true;
  }
  static const std::map<std::string, const char*> arith = {{"Add", "operator.add"},
                                                           {"Sub", "operator.sub"},
                                                           {"Mul", "operator.mul"},
                                                           {"Div", "operator.floordiv"}};
  if (auto a = arith.find(op); a != arith.end()) {
    auto x = elems(0), y = elems(1);
    if (x.size() != y.size() && x.size() != 1 && y.size() != 1)
      unsupported(n, "arithmetic on sizes of different lengths");
    size_t len = std::max(x.size(), y.size());
    std::vector<Value*> out;
    for (size_t k = 0; k < len; ++k) {
      Value* p = x[x.size() == 1 ? 0 : k];
      Value* q = y[y.size() == 1 ? 0 : k];
      auto pc = int_const(p), qc = int_const(q);
      if (op == "Mul" && pc == 1)
        out.push_back(q);
      else if ((op == "Mul" || op == "Div") && qc == 1)
        out.push_back(p);
      else if ((op == "Add" || op == "Sub") && qc == 0)
        out.push_back(p);
      else if (pc && qc && (op != "Div" || *qc != 0))  // static sizes next to dynamic ones
        out.push_back(c_int(op == "Add"   ? *pc + *qc
                            : op == "Sub" ? *pc - *qc
                            : op == "Mul" ? *pc * *qc
                                          : *pc / *qc));
      else
        out.push_back(append(a->second, {p, q})->add_output(Type::of(Type::Kind::Int)));
    }
    bool scalar = sym_scalar_.count(n.input(0)) &&
                  (!is_sym(n, 1) ? const_of(n, 1)->dim() == 0 : sym_scalar_.count(n.input(1)));
    set_sym(n, out, scalar);
    return true;
  }
  if (op == "Reshape" && is_sym(n, 1) && !is_sym(n, 0)) {
    auto e = elems(1);
    for (size_t k = 0; k < e.size(); ++k)
      if (int_const(e[k]) == 0 && attr_i(n, "allowzero", 0) == 0)
        e[k] = size_of(n.input(0), static_cast<int64_t>(k));
    call("Tensor.reshape", {tensor_in(n.input(0)), int_list(e)}, n);
    return true;
  }
  if (op == "Expand" && is_sym(n, 1) && !is_sym(n, 0)) {
    lift_expand(n, elems(1));
    return true;
  }
  if (op == "ConstantOfShape") {
    at::Tensor v = fill_value(n);
    DType d = dtype_from_scalar_type(static_cast<int64_t>(v.scalar_type()));
    Value* z =
        method("torch.zeros", {int_list(elems(0)), constant(d, Type::of(Type::Kind::ScalarType)),
                               c_none(), c_none(), c_none()});
    if (v.flatten()[0].item<double>() == 0.0) {
      bind(n, 0, z);
      return true;
    }
    call("torch.add", {z, c_float(v.flatten()[0].item<double>()), c_int(1)}, n);
    return true;
  }
  if (op == "Range") {
    // torch.arange(x.size(0)): scalar bounds, some of them run-time sizes.
    auto a = elems(0), b = elems(1), d = elems(2);
    if (a.size() != 1 || b.size() != 1 || d.size() != 1)
      unsupported(n, "a range with non-scalar bounds");
    DType dt = type_for(n.output(0)).dtype;
    if (dt == DType::Unknown) dt = dtype_from_scalar_type(static_cast<int64_t>(at::kLong));
    call("torch.arange",
         {a[0], b[0], d[0], constant(dt, Type::of(Type::Kind::ScalarType)), c_none(), c_none(),
          c_none()},
         n);
    return true;
  }
  if (op == "Resize" && opset_ >= 11 && is_sym(n, 3) && !is_sym(n, 0) && !is_sym(n, 1) &&
      !is_sym(n, 2)) {
    // F.interpolate(x, size=x.shape[-2:]) with dynamic axes: the sizes are run-time ints.
    lift_resize(n, elems(3));
    return true;
  }
  unsupported(n, "a shape computation on dynamic shapes that tinytrace cannot lift");
}

// The constant axes of Squeeze/Unsqueeze (attribute before opset 13, input after).
std::optional<std::vector<int64_t>> Importer::const_axes(const ox::NodeProto& n) {
  if (auto a = attr_ints(n, "axes")) return a;
  if (const at::Tensor* t = const_ahead(n, 1)) return ints_of(*t);
  return std::nullopt;
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
