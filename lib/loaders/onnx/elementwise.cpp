// Elementwise math: unary functions (Sqrt, Exp, ..., Not, IsNaN), Add/Sub/Mul/Div/Pow/Mod,
// variadic Max/Min/Sum/Mean, comparisons, logical and bitwise ops, Where, Cast, IsInf, and the
// quantization arithmetic (QuantizeLinear, DequantizeLinear).
#include "loaders/onnx/importer.h"
#include "ir/dtype_analysis.h"

#if TT_HAVE_ONNX

#include <limits>
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
      {"Tan", "torch.tan"},
      {"Asin", "torch.asin"},
      {"Acos", "torch.acos"},
      {"Atan", "torch.atan"},
      {"Sinh", "torch.sinh"},
      {"Cosh", "torch.cosh"},
      {"Asinh", "torch.asinh"},
      {"Acosh", "torch.acosh"},
      {"Atanh", "torch.atanh"},
      {"Not", "torch.logical_not"},
      {"BitwiseNot", "torch.bitwise_not"},
      {"IsNaN", "torch.isnan"},
      {"Sign", "torch.sign"},
      {"Round", "torch.round"}};  // both round half to even
  return unary;
}

// Binary ops with the same broadcasting in ONNX and PyTorch, on two tensors.
const std::map<std::string, const char*>& tensor_binary_ops() {
  static const std::map<std::string, const char*> ops = {
      {"And", "torch.logical_and"},      {"Or", "torch.logical_or"},
      {"Xor", "torch.logical_xor"},      {"BitwiseAnd", "torch.bitwise_and"},
      {"BitwiseOr", "torch.bitwise_or"}, {"BitwiseXor", "torch.bitwise_xor"}};
  return ops;
}

}  // namespace

Importer::OpList Importer::elementwise_ops() {
  OpList ops = {
      {"Mul", [](Importer& im, const ox::NodeProto& n) { im.lift_mul(n); }},
      {"Add", [](Importer& im, const ox::NodeProto& n) { im.lift_binary(n); }},
      {"Sub", [](Importer& im, const ox::NodeProto& n) { im.lift_binary(n); }},
      {"Div", [](Importer& im, const ox::NodeProto& n) { im.lift_binary(n); }},
      {"Pow", [](Importer& im, const ox::NodeProto& n) { im.lift_binary(n); }},
      {"Max", [](Importer& im, const ox::NodeProto& n) { im.lift_variadic(n); }},
      {"Min", [](Importer& im, const ox::NodeProto& n) { im.lift_variadic(n); }},
      {"Sum", [](Importer& im, const ox::NodeProto& n) { im.lift_variadic(n); }},
      {"Mean", [](Importer& im, const ox::NodeProto& n) { im.lift_variadic(n); }},
      {"BitShift",
       [](Importer& im, const ox::NodeProto& n) {
         std::string dir = im.attr_s(n, "direction", "");
         if (dir != "LEFT" && dir != "RIGHT") im.unsupported(n, "direction '" + dir + "'");
         im.call(dir == "LEFT" ? "torch.bitwise_left_shift" : "torch.bitwise_right_shift",
                 {im.tensor_in(n.input(0)), im.tensor_in(n.input(1))}, n);
       }},
      {"IsInf", [](Importer& im, const ox::NodeProto& n) { im.lift_isinf(n); }},
      {"Celu",
       [](Importer& im, const ox::NodeProto& n) {
         im.call("F.celu", {im.tensor_in(n.input(0)), im.c_float(im.attr_f(n, "alpha", 1.0))}, n);
       }},
      {"QuantizeLinear", [](Importer& im, const ox::NodeProto& n) { im.lift_quantize(n, true); }},
      {"DequantizeLinear",
       [](Importer& im, const ox::NodeProto& n) { im.lift_quantize(n, false); }},
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
  for (const auto& b : tensor_binary_ops())
    ops.emplace_back(b.first.c_str(), [](Importer& im, const ox::NodeProto& n) {
      im.call(tensor_binary_ops().at(n.op_type()),
              {im.tensor_in(n.input(0)), im.tensor_in(n.input(1))}, n);
    });
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
  // The exporter's way back from ONNX's MaxPool indices to PyTorch's (Note [MaxPool indices]).
  auto a_idx = pool_indices_.find(n.input(0)), b_idx = pool_indices_.find(n.input(1));
  if (op == "Sub" && a_idx != pool_indices_.end() && b_idx != pool_indices_.end() &&
      a_idx->second.local && !b_idx->second.local && !b_idx->second.positions &&
      a_idx->second.input == b_idx->second.input)
    return bind(n, 0, a_idx->second.local);
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
  // The operands' type: ONNX divides integers towards zero, and Pow keeps its base's type.
  DType d = dtype_known(n.input(0));
  if (d == DType::Unknown) d = dtype_known(n.output(0));
  bool floating = is_float_dtype(d);
  if (op == "Pow") {
    // torch.pow promotes (an integer base to a float power is float, int32 to an int64 power
    // int64); only a float base to an integer power keeps the base's type there. Otherwise the
    // result goes back to the base's type (float to integer truncates, as ONNX's cast does).
    DType e = dtype_known(n.input(1));
    bool keeps =
        d == DType::Unknown || e == d || (floating && e != DType::Unknown && !is_float_dtype(e));
    if (keeps) return void(call("torch.pow", {a, b}, n));
    Value* p = method("torch.pow", {a, b});
    return void(call(
        "Tensor.to",
        {p, constant(d, Type::of(Type::Kind::ScalarType)), c_bool(false), c_bool(false), c_none()},
        n));
  }
  if (d == DType::Unknown)
    unsupported(n,
                "operands of unknown type (integer division truncates, float division does "
                "not)");
  if (!floating) return void(call("torch.div", {a, b, c_str("trunc")}, n));
  call("torch.div", {a, b}, n);
}

// The element type of an ONNX value when known: a constant's, a lifted value's, or the file's.
DType Importer::dtype_known(const std::string& name) {
  if (auto c = consts_.find(name); c != consts_.end())
    return dtype_from_scalar_type(static_cast<int64_t>(c->second.scalar_type()));
  if (auto e = env_.find(name); e != env_.end() && e->second->type().dtype != DType::Unknown)
    return e->second->type().dtype;
  return type_for(name).dtype;
}

// Max/Min/Sum/Mean: variadic and broadcasting, folded left as torch.maximum/torch.minimum/+
// (Mean: the sum divided by the count, as ONNX computes it).
void Importer::lift_variadic(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  std::vector<Value*> xs;
  for (int i = 0; i < n.input_size(); ++i)
    if (has_input(n, i)) xs.push_back(tensor_in(n.input(i)));
  if (xs.empty()) unsupported(n, "no inputs");
  if (xs.size() == 1 && op != "Mean") return bind(n, 0, xs[0]);
  const char* f = op == "Max" ? "torch.maximum" : op == "Min" ? "torch.minimum" : "torch.add";
  auto step = [&](Value* a, Value* b) {
    std::vector<Value*> ins = {a, b};
    if (op == "Sum" || op == "Mean") ins.push_back(c_int(1));
    return ins;
  };
  Value* acc = xs[0];
  size_t last = op == "Mean" ? xs.size() : xs.size() - 1;
  for (size_t k = 1; k < last; ++k) acc = method(f, step(acc, xs[k]));
  if (op == "Mean")
    return void(call("torch.div", {acc, c_float(static_cast<double>(xs.size()))}, n));
  call(f, step(acc, xs.back()), n);
}

// IsInf: torch.isinf / isposinf / isneginf by the detect_* flags (neither: all False).
void Importer::lift_isinf(const ox::NodeProto& n) {
  bool neg = attr_i(n, "detect_negative", 1) != 0, pos = attr_i(n, "detect_positive", 1) != 0;
  Value* x = tensor_in(n.input(0));
  if (neg && pos) return void(call("torch.isinf", {x}, n));
  if (pos) return void(call("torch.isposinf", {x}, n));
  if (neg) return void(call("torch.isneginf", {x}, n));
  // |x| > inf is False everywhere (also for NaN).
  call("torch.gt", {method("torch.abs", {x}), c_float(std::numeric_limits<double>::infinity())}, n);
}

// QuantizeLinear: saturate(round(x / scale) + zero_point) in the zero point's type (uint8 when
// absent); DequantizeLinear: (x - zero_point) * scale. A per-axis scale/zero point is reshaped
// to broadcast along `axis`.
void Importer::lift_quantize(const ox::NodeProto& n, bool quantize) {
  if (attr(n, "block_size") && attr_i(n, "block_size", 0) != 0)
    unsupported(n, "blocked quantization (block_size)");
  if (attr_i(n, "saturate", 1) != 1) unsupported(n, "saturate=0");
  const at::Tensor* zp = const_of(n, 2);
  if (has_input(n, 2) && !zp) unsupported(n, "a zero point computed at run time");
  at::ScalarType qtype = zp ? zp->scalar_type() : at::kByte;
  if (auto to = attr(n, "output_dtype"); to && quantize && to->i() != 0) {
    auto st = scalar_type(static_cast<int32_t>(to->i()));
    if (!st) unsupported(n, "an output type tinytrace does not read");
    qtype = *st;
  }
  if (qtype != at::kByte && qtype != at::kChar && qtype != at::kInt && qtype != at::kShort)
    unsupported(n, "quantization to " + std::string(c10::toString(qtype)));
  // A per-axis scale/zero point as a shape that broadcasts along `axis`.
  auto r = known_rank(n.input(0));
  auto per_axis = [&](int i) -> Value* {
    const at::Tensor* c = const_of(n, i);
    auto cr = c ? std::optional<int64_t>(c->dim()) : rank_of(n.input(i));
    if (c && c->numel() == 1)
      return c_float(c->is_floating_point() ? nice_float(c->item<float>()) : c->item<double>());
    if (cr && *cr == 0) return tensor_in(n.input(i));
    if (!cr || *cr != 1 || !r) unsupported(n, "a scale or zero point that is not a scalar or 1-d");
    int64_t axis = attr_i(n, "axis", 1);
    if (axis < 0) axis += *r;
    std::vector<int64_t> shape(static_cast<size_t>(*r), 1);
    shape[static_cast<size_t>(axis)] = -1;
    return method("Tensor.reshape", {tensor_in(n.input(i)), c_ints(shape)});
  };
  Value* x = tensor_in(n.input(0));
  Value* scale = per_axis(1);
  Value* z = zp && zp->ne(0).any().item<bool>() ? per_axis(2) : nullptr;  // nullptr: zero
  if (quantize) {
    Value* q = method("torch.round", {method("torch.div", {x, scale})});
    if (z) q = method("torch.add", {q, z, c_int(1)});
    at::Tensor lo = at::empty({}, qtype), hi = at::empty({}, qtype);
    AT_DISPATCH_INTEGRAL_TYPES(qtype, "quantize_range", [&] {
      lo.fill_(std::numeric_limits<scalar_t>::lowest());
      hi.fill_(std::numeric_limits<scalar_t>::max());
    });
    q = method("torch.clamp", {q, c_float(lo.item<double>()), c_float(hi.item<double>())});
    DType d = dtype_from_scalar_type(static_cast<int64_t>(qtype));
    call("Tensor.to",
         {q, constant(d, Type::of(Type::Kind::ScalarType)), c_bool(false), c_bool(false), c_none()},
         n);
    return;
  }
  Value* f = method("Tensor.to", {x, constant(DType::F32, Type::of(Type::Kind::ScalarType)),
                                  c_bool(false), c_bool(false), c_none()});
  if (z) f = method("torch.sub", {f, z, c_int(1)});
  call("torch.mul", {f, scale}, n);
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
