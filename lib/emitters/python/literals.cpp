// The Python emitter's constants: the expression of a value, literals of every attribute kind
// (dtypes, layouts, devices, lists) and tensor constants as torch.tensor([...]).
#include "emitters/python/emitter.h"

#include <functional>

namespace tt::pyemit {
namespace {

const char* layout_python(int64_t v) {
  switch (v) {
    case 0:
      return "torch.strided";
    case 1:
      return "torch.sparse_coo";
    case 2:
      return "torch.sparse_csr";
    case 3:
      return "torch._mkldnn";
    case 4:
      return "torch.sparse_csc";
    case 5:
      return "torch.sparse_bsr";
    case 6:
      return "torch.sparse_bsc";
    default:
      return nullptr;
  }
}

const char* memory_format_python(int64_t v) {
  switch (v) {
    case 0:
      return "torch.contiguous_format";
    case 1:
      return "torch.preserve_format";
    case 2:
      return "torch.channels_last";
    case 3:
      return "torch.channels_last_3d";
    default:
      return nullptr;
  }
}

}  // namespace

DType tensor_dtype(const at::Tensor& t) {
  return dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type()));
}

bool is_float_dtype(DType d) {
  return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16;
}
bool is_complex_dtype(DType d) { return d == DType::C64 || d == DType::C128; }
bool is_quantized_dtype(DType d) { return d == DType::QI8 || d == DType::QU8 || d == DType::QI32; }

std::string shape_args(at::IntArrayRef sizes) {
  if (sizes.empty()) return "()";
  std::vector<std::string> dims;
  for (int64_t s : sizes) dims.push_back(std::to_string(s));
  return join(dims, ", ");
}

const Expr& PyEmitter::expr(const Value* v) const {
  auto it = expr_.find(v);
  TT_ASSERT(it != expr_.end(), "value %" + v->name() + " used before it was emitted");
  return it->second;
}

Expr PyEmitter::literal(const AttrValue& a, const Type& t) {
  using K = Type::Kind;
  if (t.is_enum())  // Note [Enums in Python]
    for (const EnumMember& m : enum_members(t))
      if (attr_equal(m.value, a)) return {named_tuple_class(t) + "." + m.name};
  if (std::holds_alternative<NoneAttr>(a)) return {"None"};
  if (auto* b = std::get_if<bool>(&a)) {
    if (t.kind == K::Tensor) return {std::string("torch.tensor(") + py_bool(*b) + ")"};
    return {py_bool(*b)};
  }
  if (auto* i = std::get_if<int64_t>(&a)) {
    switch (t.kind) {
      case K::ScalarType:
        return {dtype_python(dtype_from_scalar_type(*i))};
      case K::Layout:
        if (const char* s = layout_python(*i)) return {s};
        break;
      case K::MemoryFormat:
        if (const char* s = memory_format_python(*i)) return {s};
        break;
      case K::Tensor:
        return {"torch.tensor(" + std::to_string(*i) + ")"};
      default:
        break;
    }
    return {std::to_string(*i), *i >= 0};
  }
  if (auto* d = std::get_if<double>(&a)) {
    std::string s = py_float(*d);
    if (t.kind == K::Tensor) return {"torch.tensor(" + s + ")"};
    return {s, s[0] != '-'};
  }
  if (auto* s = std::get_if<std::string>(&a)) {
    if (t.kind == K::Device) return {"torch.device(" + py_str(*s) + ")"};
    return {py_str(*s)};
  }
  if (auto* l = std::get_if<std::vector<int64_t>>(&a)) {
    std::vector<std::string> items = int_items(*l);
    return {py_list(items), true, items};
  }
  if (auto* l = std::get_if<std::vector<double>>(&a)) {
    std::vector<std::string> items = float_items(*l);
    return {py_list(items), true, items};
  }
  if (auto* l = std::get_if<std::vector<std::string>>(&a)) {
    std::vector<std::string> items;
    for (const auto& x : *l) items.push_back(py_str(x));
    return {py_list(items), true, items};
  }
  if (auto* d = std::get_if<DType>(&a)) return {dtype_python(*d)};
  if (auto* dev = std::get_if<DeviceAttr>(&a)) return {"torch.device(" + py_str(dev->name) + ")"};
  if (auto* t2 = std::get_if<at::Tensor>(&a)) return {tensor_literal(*t2)};
  if (auto* z = std::get_if<std::complex<double>>(&a))  // Note [Complex scalars]
    return {"complex(" + py_float(z->real()) + ", " + py_float(z->imag()) + ")"};
  throw Error(ExitCode::Internal, "unhandled constant kind — this is a bug in tinytrace");
}

std::string PyEmitter::tensor_literal(const at::Tensor& t) {
  DType d = tensor_dtype(t);
  if (is_quantized_dtype(d) || d == DType::Unknown)
    throw Error(ExitCode::Unsupported,
                std::string("a tensor constant of dtype ") + c10::toString(t.scalar_type()) +
                    " cannot be written as Python — store it as a buffer instead");
  if (t.numel() == 0) {
    std::string s = "torch.zeros(" + shape_args(t.sizes());
    if (d != DType::F32) s += std::string(", dtype=") + dtype_python(d);
    return s + ")";
  }
  at::Tensor c = t.detach().to(at::kCPU).contiguous();
  std::vector<std::string> flat;
  flat.reserve(c.numel());
  if (is_float_dtype(d)) {
    at::Tensor f = c.to(d == DType::F64 ? at::kDouble : at::kFloat);
    for (int64_t i = 0; i < f.numel(); ++i)
      flat.push_back(d == DType::F64 ? py_float(f.data_ptr<double>()[i])
                                     : py_float(f.data_ptr<float>()[i]));
  } else if (is_complex_dtype(d)) {  // complex(re, im): exact for both parts, any sign
    at::Tensor f = at::view_as_real(c.resolve_conj().to(d == DType::C128 ? at::kComplexDouble
                                                                         : at::kComplexFloat))
                       .contiguous();
    auto part = [&](int64_t k) {
      return d == DType::C128 ? py_float(f.data_ptr<double>()[k])
                              : py_float(f.data_ptr<float>()[k]);
    };
    for (int64_t i = 0; i < c.numel(); ++i)
      flat.push_back("complex(" + part(2 * i) + ", " + part(2 * i + 1) + ")");
  } else if (d == DType::Bool) {
    at::Tensor b = c.to(at::kBool);
    for (int64_t i = 0; i < b.numel(); ++i) flat.push_back(py_bool(b.data_ptr<bool>()[i]));
  } else {
    at::Tensor l = c.to(at::kLong);
    for (int64_t i = 0; i < l.numel(); ++i)
      flat.push_back(std::to_string(l.data_ptr<int64_t>()[i]));
  }
  // Nest the flat values by the shape.
  std::vector<int64_t> sizes = t.sizes().vec();
  size_t pos = 0;
  std::function<std::string(size_t)> nest = [&](size_t dim) -> std::string {
    if (dim == sizes.size()) return flat[pos++];
    std::vector<std::string> items;
    for (int64_t i = 0; i < sizes[dim]; ++i) items.push_back(nest(dim + 1));
    return py_list(items);
  };
  std::string body = nest(0);
  DType natural = is_float_dtype(d)     ? DType::F32
                  : is_complex_dtype(d) ? DType::C64
                  : d == DType::Bool    ? DType::Bool
                                        : DType::I64;
  std::string s = "torch.tensor(" + body;
  if (d != natural) s += std::string(", dtype=") + dtype_python(d);
  return s + ")";
}

}  // namespace tt::pyemit
