// Boxed ATen calls by name with schema-based overload choice (see dispatch.h,
// Note [Picking an ATen overload]).
#include "exec/dispatch.h"

#include "ir/op_table.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace tt {
namespace {

using c10::IValue;

// ---------------------------------------------------------------------------------------------
// names

struct OpName {
  std::string base;      // "aten::add"
  std::string overload;  // "Tensor", "" = default overload
  bool any_overload = false;
};

OpName split_qualified(const std::string& q) {
  OpName n;
  size_t ns = q.find("::");
  size_t dot = q.find('.', ns == std::string::npos ? 0 : ns + 2);
  if (dot == std::string::npos) {
    n.base = q;
  } else {
    n.base = q.substr(0, dot);
    n.overload = q.substr(dot + 1);
    if (n.overload == "default") n.overload.clear();
  }
  return n;
}

// The candidate ATen names for an op, in order of preference.
std::vector<OpName> candidates_for(const std::string& op) {
  std::vector<OpName> out;
  if (size_t sep = op.find("::"); sep != std::string::npos) {
    // "aten::add.Tensor", an op of a custom library ("torchvision::nms") or a TorchScript
    // builtin of another namespace ("prim::max.int").
    OpName n = split_qualified(op);
    // "aten::relu": the default overload first, then any other if that does not fit.
    bool had_dot = op.find('.', sep + 2) != std::string::npos;
    out.push_back(n);
    if (!had_dot) {
      OpName any = n;
      any.any_overload = true;
      out.push_back(any);
    }
    return out;
  }
  if (const OpInfo* info = find_op(op)) {
    if (info->kind == OpKind::Module || info->kind == OpKind::Prim) return out;
    for (const auto& a : info->aten) out.push_back(split_qualified(a));
    if (!out.empty()) return out;
  }
  // Unknown spelling: Tensor.foo / torch.foo / F.foo -> every overload of aten::foo.
  if (std::string base = spelled_aten_base(op); !base.empty()) {
    OpName n;
    n.base = base;
    n.any_overload = true;
    out.push_back(n);
  }
  return out;
}

// Every registered overload of each op name, default overload first (built once).
const std::vector<c10::OperatorHandle>& overloads_of(const std::string& base) {
  static std::once_flag once;
  static std::unordered_map<std::string, std::vector<c10::OperatorHandle>>* table = nullptr;
  std::call_once(once, [] {
    table = new std::unordered_map<std::string, std::vector<c10::OperatorHandle>>();
    auto& d = c10::Dispatcher::singleton();
    auto names = d.getAllOpNames();
    std::sort(names.begin(), names.end(),
              [](const c10::OperatorName& a, const c10::OperatorName& b) {
                return a.name != b.name ? a.name < b.name : a.overload_name < b.overload_name;
              });
    for (const auto& on : names) {
      auto h = d.findSchema(on);
      if (h) (*table)[on.name].push_back(*h);
    }
  });
  static const std::vector<c10::OperatorHandle> none;
  auto it = table->find(base);
  return it == table->end() ? none : it->second;
}

std::vector<c10::OperatorHandle> handles_for(const OpName& n) {
  if (n.any_overload) return overloads_of(n.base);
  auto h = c10::Dispatcher::singleton().findSchema({n.base, n.overload});
  if (h) return {*h};
  return {};
}

// ---------------------------------------------------------------------------------------------
// binding inputs to a schema

std::optional<IValue> coerce(const IValue& v, const c10::TypePtr& t, c10::optional<int32_t> n) {
  using K = c10::TypeKind;
  switch (t->kind()) {
    case K::OptionalType:
      if (v.isNone()) return v;
      return coerce(v, t->castRaw<c10::OptionalType>()->getElementType(), n);
    case K::AnyType:
      return v;
    case K::ClassType:
      // A TorchScript object (quantized packed params): passed as it is.
      if (v.isObject()) return v;
      return std::nullopt;
    case K::TensorType:
      if (v.isTensor()) return v;
      return std::nullopt;
    case K::IntType:
    case K::SymIntType:
      if (v.isInt()) return v;
      return std::nullopt;
    case K::FloatType:
      if (v.isDouble()) return v;
      if (v.isInt()) return IValue(static_cast<double>(v.toInt()));
      return std::nullopt;
    case K::NumberType:
      if (v.isInt() || v.isDouble() || v.isBool()) return v;
      return std::nullopt;
    case K::BoolType:
      if (v.isBool()) return v;
      return std::nullopt;
    case K::StringType:
      if (v.isString()) return v;
      return std::nullopt;
    case K::DeviceObjType:
      if (v.isDevice()) return v;
      if (v.isString()) return IValue(c10::Device(v.toStringRef()));
      return std::nullopt;
    case K::GeneratorType:  // a torch.Generator object (Note [Generator values] in ir/ir.h)
      if (v.isGenerator()) return v;
      return std::nullopt;
    case K::ListType: {
      auto elem = t->castRaw<c10::ListType>()->getElementType();
      switch (elem->kind()) {
        case K::IntType:
        case K::SymIntType:
          if (v.isIntList()) return v;
          if (v.isInt() && n)
            return IValue(c10::List<int64_t>(std::vector<int64_t>(*n, v.toInt())));
          return std::nullopt;
        case K::FloatType:
          if (v.isDoubleList()) return v;
          if (v.isIntList()) {
            c10::List<double> out;
            for (int64_t x : v.toIntVector()) out.push_back(static_cast<double>(x));
            return IValue(out);
          }
          if ((v.isDouble() || v.isInt()) && n)
            return IValue(c10::List<double>(
                std::vector<double>(*n, v.isDouble() ? v.toDouble() : double(v.toInt()))));
          return std::nullopt;
        case K::BoolType:
          if (v.isBoolList()) return v;
          return std::nullopt;
        case K::TensorType:
          if (v.isTensorList()) return v;
          if (v.isList()) {
            c10::List<at::Tensor> out;
            for (const IValue& x : v.toListRef()) {
              if (!x.isTensor()) return std::nullopt;
              out.push_back(x.toTensor());
            }
            return IValue(out);
          }
          return std::nullopt;
        case K::OptionalType: {
          // Tensor?[] (aten::index): a list of tensors or None.
          auto inner = elem->castRaw<c10::OptionalType>()->getElementType();
          if (inner->kind() != K::TensorType || !v.isList()) return std::nullopt;
          c10::List<c10::optional<at::Tensor>> out;
          for (const IValue& x : v.toListRef()) {
            if (x.isNone())
              out.push_back(c10::nullopt);
            else if (x.isTensor())
              out.push_back(x.toTensor());
            else
              return std::nullopt;
          }
          return IValue(out);
        }
        case K::ClassType: {
          // TorchScript objects (nnqd.LSTM's packed cells): a list typed as the schema says,
          // which the kernel checks.
          if (!v.isList()) return std::nullopt;
          c10::impl::GenericList out(elem);
          for (const IValue& x : v.toListRef()) {
            if (!x.isObject()) return std::nullopt;
            out.push_back(x);
          }
          return IValue(out);
        }
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

std::optional<torch::jit::Stack> bind_schema(const c10::FunctionSchema& s,
                                             const std::vector<IValue>& in,
                                             bool allow_mutation = false) {
  if ((s.is_mutable() && !allow_mutation) || s.is_vararg()) return std::nullopt;
  const auto& args = s.arguments();
  if (in.size() > args.size()) return std::nullopt;
  torch::jit::Stack st;
  st.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (i < in.size()) {
      auto v = coerce(in[i], a.type(), a.N());
      if (!v) return std::nullopt;
      st.push_back(std::move(*v));
    } else if (a.default_value()) {
      st.push_back(*a.default_value());
    } else {
      return std::nullopt;
    }
  }
  return st;
}

// ---------------------------------------------------------------------------------------------
// ops TorchScript runs outside the dispatcher

bool is_number(const IValue& v) { return v.isInt() || v.isDouble() || v.isBool(); }
double as_double(const IValue& v) {
  return v.isDouble() ? v.toDouble() : v.isInt() ? double(v.toInt()) : double(v.toBool());
}
int64_t as_int(const IValue& v) { return v.isInt() ? v.toInt() : int64_t(v.toBool()); }

int64_t py_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t py_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double py_fmod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// "...{}...".format(args): each {} (or {:spec}, spec ignored) replaced by the next argument as
// str() writes it. The text of floats and tensors may differ from TorchScript's; the scripted
// models use it only for messages (and whether the string is empty).
std::string py_format(const std::vector<IValue>& in) {
  auto str = [](const IValue& v) -> std::string {
    if (v.isString()) return v.toStringRef();
    if (v.isBool()) return v.toBool() ? "True" : "False";
    if (v.isNone()) return "None";
    if (v.isInt()) return std::to_string(v.toInt());
    std::ostringstream os;
    if (v.isDouble()) {
      os << v.toDouble();
      return os.str();
    }
    os << v;
    return os.str();
  };
  const std::string& fmt = in[0].toStringRef();
  std::string out;
  size_t next = 1;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
    } else if (fmt[i] == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
      out += '}';
      ++i;
    } else if (fmt[i] == '{') {
      size_t close = fmt.find('}', i);
      if (close == std::string::npos) break;
      if (next < in.size()) out += str(in[next++]);
      i = close;
    } else {
      out += fmt[i];
    }
  }
  return out;
}

// x.tolist(): nested lists of ints, floats or bools by x's dtype, as Python gives them (a
// number for a 0-d tensor).
IValue tensor_to_list(const at::Tensor& t) {
  if (t.dim() == 0) {
    at::Scalar s = t.item();
    if (t.is_floating_point()) return s.toDouble();
    if (t.scalar_type() == at::kBool) return s.toBool();
    return s.toLong();
  }
  c10::TypePtr elem = t.is_floating_point()          ? c10::FloatType::get()
                      : t.scalar_type() == at::kBool ? c10::TypePtr(c10::BoolType::get())
                                                     : c10::TypePtr(c10::IntType::get());
  for (int64_t i = 1; i < t.dim(); ++i) elem = c10::ListType::create(elem);
  c10::impl::GenericList out(elem);
  for (int64_t i = 0; i < t.size(0); ++i) out.push_back(tensor_to_list(t[i]));
  return IValue(out);
}

std::optional<std::vector<IValue>> call_builtin(const OpName& n, const std::vector<IValue>& in) {
  const std::string& b = n.base;
  auto one = [](IValue v) {
    return std::optional<std::vector<IValue>>(std::vector<IValue>{std::move(v)});
  };

  // Conversions.
  if (in.size() == 1 && (b == "aten::Int" || b == "aten::Float" || b == "aten::Bool")) {
    const IValue& v = in[0];
    IValue s;
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.numel() != 1) return std::nullopt;
      at::Scalar sc = t.item();
      s = sc.isFloatingPoint() ? IValue(sc.toDouble())
          : sc.isBoolean()     ? IValue(sc.toBool())
                               : IValue(sc.toLong());
    } else if (is_number(v)) {
      s = v;
    } else {
      return std::nullopt;
    }
    if (b == "aten::Int")
      return one(s.isDouble() ? IValue(static_cast<int64_t>(std::trunc(s.toDouble())))
                              : IValue(as_int(s)));
    if (b == "aten::Float") return one(as_double(s));
    return one(s.isDouble() ? s.toDouble() != 0 : as_int(s) != 0);
  }
  if (b == "aten::size" && in.size() == 1 && in[0].isTensor())
    return one(c10::List<int64_t>(in[0].toTensor().sizes().vec()));
  if (b == "aten::dim" && in.size() == 1 && in[0].isTensor())
    return one(static_cast<int64_t>(in[0].toTensor().dim()));
  if (b == "aten::len" && in.size() == 1) {
    if (in[0].isTensor() && in[0].toTensor().dim() > 0) return one(in[0].toTensor().size(0));
    if (in[0].isList()) return one(static_cast<int64_t>(in[0].toListRef().size()));
    if (in[0].isString()) return one(static_cast<int64_t>(in[0].toStringRef().size()));
    return std::nullopt;
  }

  // Scripted-model builtins on lists and None (operator.getitem / is_ / is_not).
  if (b == "aten::__getitem__" && in.size() == 2 && in[1].isInt() &&
      (in[0].isList() || in[0].isTuple())) {
    auto items = in[0].isList() ? in[0].toListRef().vec() : in[0].toTupleRef().elements().vec();
    int64_t i = in[1].toInt(), len = static_cast<int64_t>(items.size());
    if (i < 0) i += len;
    if (i < 0 || i >= len) throw std::runtime_error("list index out of range");
    return one(items[static_cast<size_t>(i)]);
  }
  if (b == "aten::slice" && in.size() == 4 && (in[0].isList() || in[0].isString()) &&
      (in[1].isNone() || in[1].isInt()) && (in[2].isNone() || in[2].isInt()) && in[3].isInt()) {
    // l[start:end:step] with Python's index adjustment (negative, None and out-of-range bounds).
    int64_t len = in[0].isList() ? static_cast<int64_t>(in[0].toListRef().size())
                                 : static_cast<int64_t>(in[0].toStringRef().size());
    int64_t step = in[3].toInt();
    if (step == 0) throw std::runtime_error("slice step cannot be zero");
    auto adjust = [&](const IValue& v, int64_t dflt) {
      if (v.isNone()) return dflt;
      int64_t i = v.toInt();
      if (i < 0)
        i = std::max(i + len, step < 0 ? int64_t(-1) : int64_t(0));
      else if (i >= len)
        i = step < 0 ? len - 1 : len;
      return i;
    };
    int64_t start = adjust(in[1], step < 0 ? len - 1 : 0), end = adjust(in[2], step < 0 ? -1 : len);
    std::vector<size_t> picked;
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step)
      picked.push_back(static_cast<size_t>(i));
    if (in[0].isString()) {
      std::string out;
      for (size_t i : picked) out += in[0].toStringRef()[i];
      return one(out);
    }
    c10::impl::GenericList out(in[0].toList().elementType());
    for (size_t i : picked) out.push_back(in[0].toListRef()[i]);
    return one(out);
  }
  if (b == "aten::__getitem__" && in.size() == 2 && in[0].isGenericDict()) {  // d["key"]
    auto d = in[0].toGenericDict();
    auto it = d.find(in[1]);
    if (it == d.end()) throw std::runtime_error("KeyError: the dict has no such key");
    return one(it->value());
  }
  if ((b == "aten::__is__" || b == "aten::__isnot__") && in.size() == 2) {
    bool same;
    if (in[0].isNone() || in[1].isNone())
      same = in[0].isNone() && in[1].isNone();
    else if (in[0].isTensor() && in[1].isTensor())
      same = in[0].toTensor().is_same(in[1].toTensor());
    else
      return std::nullopt;
    return one(b == "aten::__is__" ? same : !same);
  }

  // l + m on lists: a new list.
  if (b == "aten::add" && in.size() == 2 && in[0].isList() && in[1].isList()) {
    c10::impl::GenericList out(in[0].toList().elementType());
    for (const IValue& v : in[0].toListRef()) out.push_back(v);
    for (const IValue& v : in[1].toListRef()) out.push_back(v);
    return one(IValue(out));
  }
  // dict(pairs) / dict(d) / dict(): a new dict (the JIT's own needs typed (k, v) lists).
  if (b == "aten::dict" && in.empty())
    return one(IValue(c10::impl::GenericDict(c10::StringType::get(), c10::TensorType::get())));
  if (b == "aten::dict" && in.size() == 1 && in[0].isGenericDict())
    return one(in[0].toGenericDict().copy());
  if (b == "aten::dict" && in.size() == 1 && in[0].isList()) {
    const auto& pairs = in[0].toListRef();
    auto pair_ok = [](const IValue& p) {
      return p.isTuple() && p.toTupleRef().elements().size() == 2;
    };
    if (!std::all_of(pairs.begin(), pairs.end(), pair_ok)) return std::nullopt;
    c10::TypePtr key = c10::StringType::get(), value = c10::TensorType::get();
    if (!pairs.empty()) {
      key = pairs[0].toTupleRef().elements()[0].type();
      value = pairs[0].toTupleRef().elements()[1].type();
    }
    for (const IValue& p : pairs)
      if (*p.toTupleRef().elements()[1].type() != *value) value = c10::AnyType::get();
    c10::impl::GenericDict out(key, value);
    for (const IValue& p : pairs)
      out.insert_or_assign(p.toTupleRef().elements()[0], p.toTupleRef().elements()[1]);
    return one(IValue(out));
  }
  if (b == "prim::tolist" && in.size() == 1 && in[0].isTensor() && !in[0].toTensor().is_complex())
    return one(tensor_to_list(in[0].toTensor()));
  if (b == "prim::dtype" && in.size() == 1 && in[0].isTensor())
    return one(static_cast<int64_t>(in[0].toTensor().scalar_type()));
  if (b == "prim::device" && in.size() == 1 && in[0].isTensor())
    return one(in[0].toTensor().device());
  if (b == "prim::is_nested" && in.size() == 1 && in[0].isTensor())
    return one(in[0].toTensor().is_nested());
  if (b == "prim::is_cuda" && in.size() == 1 && in[0].isTensor())
    return one(in[0].toTensor().is_cuda());
  if (b == "prim::requires_grad" && in.size() == 1 && in[0].isTensor())
    return one(in[0].toTensor().requires_grad());
  if (b == "aten::is_contiguous" && !in.empty() && in.size() <= 2 && in[0].isTensor()) {
    // x.is_contiguous([memory_format]): a TorchScript builtin, not a dispatcher op.
    if (in.size() == 1) return one(in[0].toTensor().is_contiguous());
    if (!in[1].isInt()) return std::nullopt;
    return one(in[0].toTensor().is_contiguous(static_cast<at::MemoryFormat>(in[1].toInt())));
  }
  if (b == "prim::type" && in.size() == 1 && in[0].isDevice())
    return one(c10::DeviceTypeName(in[0].toDevice().type(), /*lower_case=*/true));
  if (b == "aten::format" && !in.empty() && in[0].isString()) return one(py_format(in));
  if (b == "aten::is_autocast_enabled" && in.empty()) return one(false);  // never under autocast
  if (b == "aten::is_grad_enabled" && in.empty()) return one(at::GradMode::is_enabled());
  if (b == "aten::set_grad_enabled" && in.size() == 1 && in[0].isBool()) {
    at::GradMode::set_enabled(in[0].toBool());  // the interpreter's run restores the caller's
    return std::vector<IValue>{};
  }
  // `k in d`: also for dicts whose IR type the interpreter does not know (an empty dict made by
  // torch.jit.annotate is typed Dict[str, Tensor] here, and the registry's overloads check it).
  if (b == "aten::__contains__" && in.size() == 2 && in[0].isGenericDict())
    return one(in[0].toGenericDict().contains(in[1]));
  // TorchScript's list builtins (not in the dispatcher): `item in l`, any(l), all(l).
  if (b == "aten::__contains__" && in.size() == 2 && in[0].isList()) {
    for (const IValue& e : in[0].toListRef())
      if (e == in[1]) return one(true);
    return one(false);
  }
  if (b == "aten::tensor" && in.size() == 4 && (is_number(in[0]) || in[0].isList()) &&
      (in[1].isNone() || in[1].isInt()) && (in[2].isNone() || in[2].isDevice())) {
    // torch.tensor(data, dtype=None, device=None, requires_grad=False) of a number or a nested list
    // of numbers: int64, the default float dtype or bool when dtype is None, as Python's.
    std::vector<int64_t> shape;
    std::vector<IValue> flat;
    bool any_float = false, all_bool = true;
    std::function<bool(const IValue&, size_t)> walk = [&](const IValue& v, size_t depth) {
      if (is_number(v)) {
        if (depth != shape.size()) return false;
        any_float |= v.isDouble();
        all_bool &= v.isBool();
        flat.push_back(v);
        return true;
      }
      if (!v.isList()) return false;
      const auto items = v.toListRef();
      if (depth == shape.size()) {
        if (!flat.empty()) return false;  // ragged
        shape.push_back(static_cast<int64_t>(items.size()));
      } else if (depth > shape.size() || shape[depth] != static_cast<int64_t>(items.size())) {
        return false;
      }
      for (const IValue& e : items)
        if (!walk(e, depth + 1)) return false;
      return true;
    };
    if (!walk(in[0], 0)) return std::nullopt;
    at::ScalarType dtype = !in[1].isNone()             ? static_cast<at::ScalarType>(in[1].toInt())
                           : any_float                 ? at::get_default_dtype_as_scalartype()
                           : all_bool && !flat.empty() ? at::kBool
                           : flat.empty() && in[0].isList() ? at::get_default_dtype_as_scalartype()
                                                            : at::kLong;
    // the values as doubles, int64 or bools first, then converted as torch.tensor does
    at::ScalarType read = any_float                   ? at::kDouble
                          : all_bool && !flat.empty() ? at::kBool
                                                      : at::kLong;
    at::Tensor t = at::empty(shape, at::TensorOptions().dtype(read));
    for (size_t i = 0; i < flat.size(); ++i) {
      const IValue& e = flat[i];
      if (read == at::kDouble)
        t.data_ptr<double>()[i] = as_double(e);
      else if (read == at::kBool)
        t.data_ptr<bool>()[i] = e.toBool();
      else
        t.data_ptr<int64_t>()[i] = as_int(e);
    }
    // the device of the tensor written into (meta while shapes are inferred)
    auto opts = at::TensorOptions().dtype(dtype);
    if (in[2].isDevice()) opts = opts.device(in[2].toDevice());
    t = t.to(opts);
    if (in[3].isBool() && in[3].toBool()) t.set_requires_grad(true);
    return one(t);
  }
  if (b == "aten::sum" && in.size() == 1 && in[0].isList()) {
    // sum(l): a float for float[] (also when empty), an int for int[] and bool[].
    if (in[0].toList().elementType()->kind() == c10::TypeKind::FloatType) {
      double s = 0.0;
      for (const IValue& e : in[0].toListRef()) s += e.toDouble();
      return one(s);
    }
    int64_t s = 0;
    for (const IValue& e : in[0].toListRef()) s += e.isBool() ? int64_t(e.toBool()) : e.toInt();
    return one(s);
  }
  if ((b == "aten::any" || b == "aten::all") && in.size() == 1 && in[0].isList()) {
    bool any = b == "aten::any";
    for (const IValue& e : in[0].toListRef()) {
      bool truthy = e.isBool()     ? e.toBool()
                    : e.isInt()    ? e.toInt() != 0
                    : e.isDouble() ? e.toDouble() != 0.0
                                   : !e.toStringRef().empty();
      if (truthy == any) return one(any);
    }
    return one(!any);
  }
  if (b == "aten::list" && in.size() == 1 && in[0].isList())
    return one(IValue(in[0].toList().copy()));
  if ((b == "aten::eq" || b == "aten::ne") && in.size() == 2 && in[0].isList() && in[1].isList()) {
    auto x = in[0].toListRef(), y = in[1].toListRef();
    bool same = x.size() == y.size();
    for (size_t i = 0; same && i < x.size(); ++i) same = x[i] == y[i];
    return one(b == "aten::eq" ? same : !same);
  }

  // int / float arithmetic (Python semantics).
  for (const auto& v : in)
    if (!is_number(v)) return std::nullopt;
  if (in.size() == 1) {
    const IValue& a = in[0];
    if (b == "aten::neg") return one(a.isDouble() ? IValue(-a.toDouble()) : IValue(-as_int(a)));
    if (b == "aten::floor")
      return one(a.isDouble() ? static_cast<int64_t>(std::floor(a.toDouble())) : as_int(a));
    if (b == "aten::ceil")
      return one(a.isDouble() ? static_cast<int64_t>(std::ceil(a.toDouble())) : as_int(a));
    if (b == "aten::sqrt") return one(std::sqrt(as_double(a)));
    if (b == "aten::abs")
      return one(a.isDouble() ? IValue(std::fabs(a.toDouble()))
                              : IValue(static_cast<int64_t>(std::llabs(as_int(a)))));
    if (b == "aten::__not__" && a.isBool()) return one(!a.toBool());
    return std::nullopt;
  }
  if (in.size() != 2) return std::nullopt;
  const IValue &x = in[0], &y = in[1];
  const bool fp = x.isDouble() || y.isDouble();
  auto cmp = [&](auto op) {
    return one(fp ? op(as_double(x), as_double(y)) : op(as_int(x), as_int(y)));
  };
  if (b == "aten::eq") return cmp([](auto p, auto q) { return p == q; });
  if (b == "aten::ne") return cmp([](auto p, auto q) { return p != q; });
  if (b == "aten::lt") return cmp([](auto p, auto q) { return p < q; });
  if (b == "aten::le") return cmp([](auto p, auto q) { return p <= q; });
  if (b == "aten::gt") return cmp([](auto p, auto q) { return p > q; });
  if (b == "aten::ge") return cmp([](auto p, auto q) { return p >= q; });
  if (b == "aten::__and__" && !fp) return one(as_int(x) & as_int(y));
  if (b == "aten::__or__" && !fp) return one(as_int(x) | as_int(y));
  if (b == "aten::__xor__" && !fp) return one(as_int(x) ^ as_int(y));
  if (b == "aten::add")
    return one(fp ? IValue(as_double(x) + as_double(y)) : IValue(as_int(x) + as_int(y)));
  if (b == "aten::sub")
    return one(fp ? IValue(as_double(x) - as_double(y)) : IValue(as_int(x) - as_int(y)));
  if (b == "aten::mul")
    return one(fp ? IValue(as_double(x) * as_double(y)) : IValue(as_int(x) * as_int(y)));
  if (b == "aten::div") {
    if (as_double(y) == 0) throw std::runtime_error("division by zero");
    return one(as_double(x) / as_double(y));
  }
  if (b == "aten::floordiv") {
    if (as_double(y) == 0) throw std::runtime_error("integer division or modulo by zero");
    if (fp) return one(std::floor(as_double(x) / as_double(y)));
    return one(py_floordiv(as_int(x), as_int(y)));
  }
  if (b == "aten::remainder" || b == "aten::fmod") {
    if (as_double(y) == 0) throw std::runtime_error("integer division or modulo by zero");
    if (b == "aten::fmod") return one(std::fmod(as_double(x), as_double(y)));
    if (fp) return one(py_fmod(as_double(x), as_double(y)));
    return one(py_mod(as_int(x), as_int(y)));
  }
  if (b == "aten::pow") {
    if (n.overload == "int_to_int" && !fp) {
      int64_t r = 1, base = as_int(x), e = as_int(y);
      if (e < 0) return std::nullopt;
      while (e-- > 0) r *= base;
      return one(r);
    }
    return one(std::pow(as_double(x), as_double(y)));
  }
  return std::nullopt;
}

BuiltinRunner g_builtin_runner = nullptr;

}  // namespace

void set_builtin_runner(BuiltinRunner runner) { g_builtin_runner = runner; }
BuiltinRunner builtin_runner() { return g_builtin_runner; }

std::optional<std::vector<c10::IValue>> call_aten(const std::string& op,
                                                  std::vector<c10::IValue> inputs,
                                                  bool allow_mutation) {
  auto cands = candidates_for(op);
  for (const auto& c : cands) {
    for (const auto& h : handles_for(c)) {
      // Only an op named as in-place (aten::fill_.Tensor) may pick a mutable overload.
      const std::string& b = c.base;
      // So may an explicitly named out= overload (aten::add.out), which the loader keeps only
      // where its write matters (Note [In-place writes while lifting]).
      bool inplace =
          allow_mutation && ((b.size() > 2 && b.back() == '_' && b[b.size() - 2] != '_') ||
                             (!c.any_overload && !c.overload.empty()));
      auto st = bind_schema(h.schema(), inputs, inplace);
      if (!st) continue;
      h.callBoxed(*st);
      return std::vector<c10::IValue>(std::make_move_iterator(st->begin()),
                                      std::make_move_iterator(st->end()));
    }
  }
  // Note [TorchScript builtins through LibTorch's registry]
  if (g_builtin_runner)
    for (const auto& c : cands)
      if (auto r =
              g_builtin_runner(c.base, c.any_overload ? "*" : c.overload, inputs, allow_mutation))
        return r;
  for (const auto& c : cands)
    if (auto r = call_builtin(c, inputs)) return r;
  return std::nullopt;
}

std::string resolve_aten_schema(const std::string& op, const std::vector<c10::IValue>& inputs) {
  for (const auto& c : candidates_for(op))
    for (const auto& h : handles_for(c))
      if (bind_schema(h.schema(), inputs)) {
        std::ostringstream os;
        os << h.schema();
        return os.str();
      }
  return "";
}

}  // namespace tt
