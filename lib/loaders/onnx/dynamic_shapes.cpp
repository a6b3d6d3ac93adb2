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

// True when v is known to be >= 0: a constant, a size, a count, or +, *, // of such values.
static bool non_negative(Value* v, int depth = 0) {
  if (const AttrValue* c = v->constant())
    return std::holds_alternative<int64_t>(*c) && std::get<int64_t>(*c) >= 0;
  Node* p = v->node();
  if (!p || depth > 16) return false;
  if (p->is("Tensor.size") || p->is("Tensor.numel") || p->is("len")) return true;
  if (p->is("operator.add") || p->is("operator.mul") || p->is("operator.floordiv"))
    return non_negative(p->input(0), depth + 1) && non_negative(p->input(1), depth + 1);
  return false;
}

// Lifts a shape computation on symbolic values; false when `n` does not involve one, or when it
// is better lifted as tensor math (its sizes are then made tensors: materialize).
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
  if (op == "Size") {  // not folded: a dynamic shape
    set_sym(n, {scalar_op("Tensor.numel", {tensor_in(n.input(0))}, Type::Kind::Int)}, true);
    return true;
  }
  auto int_type = [](const std::optional<at::ScalarType>& st) {  // what sizes are kept in
    return st && (*st == at::kLong || *st == at::kInt);
  };
  if (op == "Cast" && has_input(n, 0) && from_sym_.count(n.input(0)) && !is_sym(n, 0)) {
    // int(t) of a tensor computed from sizes (a size scaled in float math, then cast back).
    auto st = scalar_type(static_cast<int32_t>(attr_i(n, "to", 7)));
    auto shape = static_shape(n.input(0));
    if (!int_type(st) || !shape || shape->size() > 1 ||
        (shape->size() == 1 && ((*shape)[0] < 1 || (*shape)[0] > 8)))
      return false;
    Value* t = tensor_in(n.input(0));
    std::vector<Value*> elems;
    if (shape->empty()) elems.push_back(scalar_op("int", {t}, Type::Kind::Int));
    for (int64_t k = 0; k < (shape->empty() ? 0 : (*shape)[0]); ++k)
      elems.push_back(
          scalar_op("int", {method("Tensor.select", {t, c_int(0), c_int(k)})}, Type::Kind::Int));
    set_sym(n, elems, shape->empty());
    return true;
  }
  bool any = false;
  for (int i = 0; i < n.input_size(); ++i) any = any || is_sym(n, i);
  if (!any) return false;
  // The elements of every input (sizes or constants); false: one is a tensor.
  std::vector<std::vector<Value*>> in;
  for (int i = 0; i < n.input_size(); ++i) {
    auto e = sym_elems(n, i);
    in.push_back(e.value_or(std::vector<Value*>{}));
  }
  auto all_sym = [&](std::initializer_list<int> idx) {
    for (int i : idx)
      if (!sym_elems(n, i)) return false;
    return true;
  };
  auto kind_of = [&](int i) {
    Type::Kind k = Type::Kind::Int;
    for (Value* v : in[static_cast<size_t>(i)])
      if (v->type().kind != Type::Kind::Int) k = v->type().kind;
    return k;
  };
  bool scalar0 = sym_scalar_.count(n.input(0)) != 0;
  if (op == "Identity") {
    set_sym(n, in[0], scalar0);
    return true;
  }
  if (op == "Cast") {
    auto st = scalar_type(static_cast<int32_t>(attr_i(n, "to", 7)));
    bool same = kind_of(0) == Type::Kind::Bool ? st == at::kBool : int_type(st);
    if (!same) return false;  // to float (scaled sizes): tensor math
    set_sym(n, in[0], scalar0);
    return true;
  }
  if (op == "Gather" && !is_sym(n, 1)) {
    const at::Tensor* idx = const_of(n, 1);
    if (!idx || attr_i(n, "axis", 0) != 0 || idx->dim() > 1) return false;
    const auto& src = in[0];
    std::vector<Value*> out;
    for (int64_t k : ints_of(*idx)) {
      int64_t kk = k < 0 ? k + static_cast<int64_t>(src.size()) : k;
      if (kk < 0 || kk >= static_cast<int64_t>(src.size())) unsupported(n, "an index out of range");
      out.push_back(src[static_cast<size_t>(kk)]);
    }
    set_sym(n, out, idx->dim() == 0);
    return true;
  }
  if (op == "Gather" && !is_sym(n, 0) && sym_scalar_.count(n.input(1))) {
    // xs[i] with i a size or a loop's iteration number.
    Value* x = tensor_in(n.input(0));
    call("Tensor.select", {x, c_int(attr_i(n, "axis", 0)), in[1][0]}, n);
    return true;
  }
  if ((op == "Unsqueeze" || op == "Squeeze") && !is_sym(n, 1)) {
    auto axes = const_axes(n).value_or(std::vector<int64_t>{0});
    if (axes.size() != 1 || (axes[0] != 0 && axes[0] != -1) || scalar0 != (op == "Unsqueeze"))
      return false;
    if (op == "Squeeze" && in[0].size() != 1) return false;
    set_sym(n, in[0], op == "Squeeze");
    return true;
  }
  if (op == "Concat") {
    std::vector<Value*> out;
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i).empty()) continue;
      if (sym_scalar_.count(n.input(i)) || !sym_elems(n, i)) return false;
      out.insert(out.end(), in[static_cast<size_t>(i)].begin(), in[static_cast<size_t>(i)].end());
    }
    set_sym(n, out, false);
    return true;
  }
  if (op == "Slice" && opset_ >= 10 && !is_sym(n, 1) && !is_sym(n, 2)) {
    const auto& src = in[0];
    const at::Tensor* st = const_of(n, 1);
    const at::Tensor* en = const_of(n, 2);
    if (!st || !en || st->numel() != 1 ||
        (has_input(n, 4) && (!const_of(n, 4) || ints_of(*const_of(n, 4))[0] != 1)))
      return false;
    int64_t len = static_cast<int64_t>(src.size());
    int64_t s0 = ints_of(*st)[0], e0 = ints_of(*en)[0];
    if (s0 < 0) s0 += len;
    if (e0 < 0) e0 += len;
    s0 = std::clamp<int64_t>(s0, 0, len);
    e0 = std::clamp<int64_t>(e0, s0, len);
    set_sym(n, std::vector<Value*>(src.begin() + s0, src.begin() + e0), false);
    return true;
  }
  static const std::map<std::string, const char*> compare = {
      {"Equal", "operator.eq"},   {"Less", "operator.lt"},           {"LessOrEqual", "operator.le"},
      {"Greater", "operator.gt"}, {"GreaterOrEqual", "operator.ge"}, {"And", "operator.and_"},
      {"Or", "operator.or_"}};
  if (auto c = compare.find(op); c != compare.end()) {
    // `if x.size(0) > 2:`: comparisons of one size with another.
    bool logic = op == "And" || op == "Or";
    Type::Kind want = logic ? Type::Kind::Bool : Type::Kind::Int;
    if (!all_sym({0, 1}) || in[0].size() != 1 || in[1].size() != 1 || kind_of(0) != want ||
        kind_of(1) != want || !scalar0 || !(sym_scalar_.count(n.input(1)) || const_of(n, 1)))
      return false;
    set_sym(n, {scalar_op(c->second, {in[0][0], in[1][0]}, Type::Kind::Bool)}, true);
    return true;
  }
  if (op == "Not") {
    if (in[0].size() != 1 || kind_of(0) != Type::Kind::Bool || !scalar0) return false;
    set_sym(n, {scalar_op("operator.not_", {in[0][0]}, Type::Kind::Bool)}, true);
    return true;
  }
  static const std::map<std::string, const char*> arith = {{"Add", "operator.add"},
                                                           {"Sub", "operator.sub"},
                                                           {"Mul", "operator.mul"},
                                                           {"Div", "operator.floordiv"}};
  if (auto a = arith.find(op); a != arith.end()) {
    if (!all_sym({0, 1}) || kind_of(0) != Type::Kind::Int || kind_of(1) != Type::Kind::Int)
      return false;
    const auto &x = in[0], &y = in[1];
    if (x.size() != y.size() && x.size() != 1 && y.size() != 1) return false;
    size_t len = std::max(x.size(), y.size());
    // ONNX divides integers towards zero, Python's // towards -inf: the same on sizes.
    if (op == "Div")
      for (size_t k = 0; k < len; ++k)
        if (!non_negative(x[x.size() == 1 ? 0 : k]) || !non_negative(y[y.size() == 1 ? 0 : k]))
          return false;
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
      else if (op == "Add" && pc == 0)
        out.push_back(q);
      else if (pc && qc && (op != "Div" || *qc != 0))  // static sizes next to dynamic ones
        out.push_back(c_int(op == "Add"   ? *pc + *qc
                            : op == "Sub" ? *pc - *qc
                            : op == "Mul" ? *pc * *qc
                                          : *pc / *qc));
      else
        out.push_back(scalar_op(a->second, {p, q}, Type::Kind::Int));
    }
    bool scalar =
        scalar0 && (!is_sym(n, 1) ? const_of(n, 1)->dim() == 0 : sym_scalar_.count(n.input(1)));
    set_sym(n, out, scalar);
    return true;
  }
  if (op == "Reshape" && is_sym(n, 0) && const_of(n, 1) && const_of(n, 1)->numel() <= 1) {
    // A size to [1] (or back to a scalar with []): the same size.
    std::vector<int64_t> shape = ints_of(*const_of(n, 1));
    bool to_list = shape == std::vector<int64_t>{1} || shape == std::vector<int64_t>{-1};
    if ((!to_list && !shape.empty()) || in[0].size() != 1) return false;
    set_sym(n, in[0], !to_list);
    return true;
  }
  if (op == "Reshape" && is_sym(n, 1) && !is_sym(n, 0)) {
    auto e = in[1];
    if (!sym_elems(n, 1)) return false;
    for (size_t k = 0; k < e.size(); ++k)
      if (int_const(e[k]) == 0 && attr_i(n, "allowzero", 0) == 0)
        e[k] = size_of(n.input(0), static_cast<int64_t>(k));
    call("Tensor.reshape", {tensor_in(n.input(0)), int_list(e)}, n);
    return true;
  }
  if (op == "Expand" && is_sym(n, 1) && !is_sym(n, 0)) {
    lift_expand(n, in[1]);
    return true;
  }
  if (op == "ConstantOfShape") {
    if (!sym_elems(n, 0)) return false;
    at::Tensor v = fill_value(n);
    DType d = dtype_from_scalar_type(static_cast<int64_t>(v.scalar_type()));
    Value* z =
        method("torch.zeros", {int_list(in[0]), constant(d, Type::of(Type::Kind::ScalarType)),
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
    if (!all_sym({0, 1, 2})) return false;
    const auto &a = in[0], &b = in[1], &d = in[2];
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
    if (!sym_elems(n, 3)) return false;
    lift_resize(n, in[3]);
    return true;
  }
  return false;  // tensor math on the sizes made tensors
}

// The tensor an ONNX shape value holds (a size list or one size), made from its IR ints with
// torch.tensor, once per block (Note [Dynamic shapes]).
Value* Importer::materialize(const std::string& name) {
  auto key = std::make_pair(name, static_cast<const Block*>(block_));
  if (auto m = materialized_.find(key); m != materialized_.end()) return m->second;
  const std::vector<Value*>& elems = sym_.at(name);
  bool scalar = sym_scalar_.count(name) != 0;
  Type::Kind kind = Type::Kind::Int;
  for (Value* e : elems)
    if (e->type().kind != Type::Kind::Int) kind = e->type().kind;
  DType d = kind == Type::Kind::Bool ? DType::Bool : DType::I64;
  Value* data = scalar ? elems.at(0) : nullptr;
  if (!scalar) {
    Node* l = append("prim.ListConstruct", elems);
    data = l->add_output(Type::list(Type::of(kind)));
  }
  Node* t = append("torch.tensor",
                   {data, constant(d, Type::of(Type::Kind::ScalarType)), c_none(), c_bool(false)});
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(elems.size()));
  Value* v = t->add_output(Type::tensor(d, shape), value_hint(name));
  materialized_[key] = v;
  return v;
}

Value* Importer::scalar_op(const std::string& op, const std::vector<Value*>& ins, Type::Kind kind) {
  return append(op, ins)->add_output(Type::of(kind));
}

// The constant axes of Squeeze/Unsqueeze (attribute before opset 13, input after).
std::optional<std::vector<int64_t>> Importer::const_axes(const ox::NodeProto& n) {
  if (auto a = attr_ints(n, "axes")) return a;
  if (const at::Tensor* t = const_ahead(n, 1)) return ints_of(*t);
  return std::nullopt;
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
