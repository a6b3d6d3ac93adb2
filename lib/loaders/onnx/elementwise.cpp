// Elementwise math: unary functions (Sqrt, Exp, ..., Not), Add/Sub/Mul/Div/Pow/Mod, variadic
// Max/Min, comparisons, Where, Cast.
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <map>

namespace tt::onnx_import {

namespace {

// Unary math: one torch function each (the keys are registered in the op table).
const std::map<std::string, const char*>& unary_ops() {
  static const std::map<std::string, const char*> unary = {
      {"Sqrt", "torch.sqrt"},
      {"Exp", "torch.exp"},
      {"Log", "torch.log"},
      {"Abs", "torch.abs"},
      {"Neg", "torch.neg"},
      {"Erf", "torch.erf"},
      {"Reciprocal", "torch.reciprocal"},
      {"Floor", "torch.floor"},
      {"Ceil", "torch.ceil"},
      {"Sin", "torch.sin"},
      {"Cos", "torch.cos"},
      {"Not", "torch.logical_not"},
      {"Sign", "torch.sign"},
      {"Round", "torch.round"}};  // both round half to even
  return unary;
}

}  // namespace

Importer::OpList Importer::elementwise_ops() {
  OpList ops = {
      {"Mul", [](Importer& im, const ox::NodeProto& n) { im.lift_mul(n); }},
      {"Add", [](Importer& im, const ox::NodeProto& n) { im.lift_binary(n); }},
      {"Sub", [](Importer& im, const ox::NodeProto& n) { im.lift_binary(n); }},
      {"Div", [](Importer& im, const ox::NodeProto& n) { im.lift_binary(n); }},
      {"Pow", [](Importer& im, const ox::NodeProto& n) { im.lift_binary(n); }},
      {"Max", [](Importer& im, const ox::NodeProto& n) { im.lift_max_min(n, true); }},
      {"Min", [](Importer& im, const ox::NodeProto& n) { im.lift_max_min(n, false); }},
      {"Greater", [](Importer& im, const ox::NodeProto& n) { im.lift_compare(n); }},
      {"Less", [](Importer& im, const ox::NodeProto& n) { im.lift_compare(n); }},
      {"Equal", [](Importer& im, const ox::NodeProto& n) { im.lift_compare(n); }},
      {"GreaterOrEqual", [](Importer& im, const ox::NodeProto& n) { im.lift_compare(n); }},
      {"LessOrEqual", [](Importer& im, const ox::NodeProto& n) { im.lift_compare(n); }},
      {"Where", [](Importer& im, const ox::NodeProto& n) { im.lift_where(n); }},
      {"Mod", [](Importer& im, const ox::NodeProto& n) { im.lift_mod(n); }},
      {"Cast", [](Importer& im, const ox::NodeProto& n) { im.lift_cast(n); }},
  };
  for (const auto& u : unary_ops())
    ops.emplace_back(u.first.c_str(),
                     [](Importer& im, const ox::NodeProto& n) { im.lift_unary(n); });
  return ops;
}

void Importer::lift_unary(const ox::NodeProto& n) {
  call(unary_ops().at(n.op_type()), {tensor_in(n.input(0))}, n);
}

// x * y. The exporter's SiLU, Hardswish and erf GELU patterns end in a Mul, lifted as torch.mul
// like any other: the import pipeline fuses them (passes/fuse_activations.cpp).
void Importer::lift_mul(const ox::NodeProto& n) {
  if (!is_const(n.input(0)) && !is_const(n.input(1)))
    return void(call("torch.mul", {tensor_in(n.input(0)), tensor_in(n.input(1))}, n));
  Value* a = operand(n, 0, n.input(1));
  Value* b = operand(n, 1, n.input(0));
  call("torch.mul", {a, b}, n);
}

void Importer::lift_binary(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  Value* a = operand(n, 0, n.input(1));
  Value* b = operand(n, 1, n.input(0));
  bool a_scalar = a->type().kind == Type::Kind::Float;
  if (op == "Add") {
    if (a_scalar) std::swap(a, b);
    return void(call("torch.add", {a, b, c_int(1)}, n));
  }
  if (op == "Sub") {
    if (a_scalar) return void(call("torch.rsub", {b, a, c_int(1)}, n));
    return void(call("torch.sub", {a, b, c_int(1)}, n));
  }
  if (a_scalar) a = tensor_in(n.input(0));
  if (op == "Pow") return void(call("torch.pow", {a, b}, n));
  auto it = types_.find(n.input(0));
  bool integer = it != types_.end() && it->second.dtype != DType::Unknown &&
                 it->second.dtype != DType::F32 && it->second.dtype != DType::F64 &&
                 it->second.dtype != DType::F16 && it->second.dtype != DType::BF16;
  if (integer) return void(call("torch.div", {a, b, c_str("trunc")}, n));
  call("torch.div", {a, b}, n);
}

// Max/Min: variadic and broadcasting, folded left as torch.maximum/torch.minimum.
void Importer::lift_max_min(const ox::NodeProto& n, bool max) {
  std::vector<Value*> xs;
  for (int i = 0; i < n.input_size(); ++i)
    if (has_input(n, i)) xs.push_back(tensor_in(n.input(i)));
  if (xs.empty()) unsupported(n, "no inputs");
  if (xs.size() == 1) return bind(n, 0, xs[0]);
  const char* f = max ? "torch.maximum" : "torch.minimum";
  Value* acc = xs[0];
  for (size_t k = 1; k + 1 < xs.size(); ++k) acc = method(f, {acc, xs[k]});
  call(f, {acc, xs.back()}, n);
}

void Importer::lift_compare(const ox::NodeProto& n) {
  static const std::map<std::string, std::pair<const char*, const char*>> ops = {
      // op -> (torch op, the same comparison with the operands swapped)
      {"Greater", {"torch.gt", "torch.lt"}},
      {"Less", {"torch.lt", "torch.gt"}},
      {"GreaterOrEqual", {"torch.ge", "torch.le"}},
      {"LessOrEqual", {"torch.le", "torch.ge"}},
      {"Equal", {"torch.eq", "torch.eq"}}};
  const auto& f = ops.at(n.op_type());
  Value* a = operand(n, 0, n.input(1));
  Value* b = operand(n, 1, n.input(0));
  if (a->type().kind == Type::Kind::Float)
    return void(call(f.second, {b, a}, n));  // 0.5 < x -> x > 0.5
  call(f.first, {a, b}, n);
}

// Where(c, v, x) with a one-element constant v and the result shaped like x is how
// x.masked_fill(c, v) exports; anything else is torch.where.
void Importer::lift_where(const ox::NodeProto& n) {
  const at::Tensor* v = const_of(n, 1);
  auto out_shape = static_shape(n.output(0));
  if (v && v->numel() == 1 && !is_const(n.input(2)) && out_shape &&
      out_shape == static_shape(n.input(2))) {
    Value* fill = v->is_floating_point() ? c_float(v->item<double>()) : c_int(v->item<int64_t>());
    if (v->scalar_type() == at::kBool) fill = c_bool(v->item<bool>());
    return void(
        call("Tensor.masked_fill", {tensor_in(n.input(2)), tensor_in(n.input(0)), fill}, n));
  }
  call("torch.where", {tensor_in(n.input(0)), tensor_in(n.input(1)), tensor_in(n.input(2))}, n);
}

// fmod=0 takes the divisor's sign (Python %), fmod=1 the dividend's (C fmod).
void Importer::lift_mod(const ox::NodeProto& n) {
  const char* f = attr_i(n, "fmod", 0) ? "torch.fmod" : "torch.remainder";
  call(f, {tensor_in(n.input(0)), operand(n, 1, n.input(0))}, n);
}

void Importer::lift_cast(const ox::NodeProto& n) {
  DType d = dtype_of(static_cast<int32_t>(attr_i(n, "to", 1)));
  if (d == DType::Unknown) unsupported(n, "cast to an unsupported type");
  call("Tensor.to",
       {tensor_in(n.input(0)), constant(d, Type::of(Type::Kind::ScalarType)), c_bool(false),
        c_bool(false), c_none()},
       n);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
