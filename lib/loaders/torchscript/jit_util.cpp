// Helpers of the TorchScript loader (jit_util.h).
#include "loaders/torchscript/jit_util.h"

#include <algorithm>
#include <tuple>

namespace tt::ts {

std::string join_path(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string node_loc(const jit::Node* n) {
  try {
    jit::SourceRange sr = n->sourceRange();
    if (auto orig = sr.findSourceRangeThatGenerated()) sr = *orig;
    auto flc = sr.file_line_col();
    if (!flc) return "";
    const std::string& file = std::get<0>(*flc);
    if (file.empty()) return "";
    return source_file_label(file) + ":" + std::to_string(std::get<1>(*flc));
  } catch (const std::exception&) {
    return "";  // a missing source is not worth failing the load for
  }
}

std::string kind_str(const jit::Node* n) { return n->kind().toQualString(); }

std::string qualified_overload(const c10::FunctionSchema& s) {
  return s.overload_name().empty() ? s.name() : s.name() + "." + s.overload_name();
}

std::string plain_name(std::string q) {
  const std::string pre = "__torch__.";
  if (q.rfind(pre, 0) == 0) q = q.substr(pre.size());
  std::string out;
  size_t start = 0;
  while (start <= q.size()) {
    size_t dot = q.find('.', start);
    std::string comp = q.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (comp.rfind("___torch_mangle_", 0) != 0) out += (out.empty() ? "" : ".") + comp;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

std::string plain_type_name(const jit::Module& m) {
  return plain_name(m.type()->name() ? m.type()->name()->qualifiedName() : "");
}

// Note [Forward argument names]
// A method's schema names its arguments after its graph inputs. A scripted module's are the
// parameter names of its Python forward ("x", "input"). The tracer names a method's inputs after
// the values the caller passed in ("x" when the caller's value was named x) and "argument_N"
// when those had no name; such a placeholder is not a name from the source, so a forward with
// one records no names at all. Names that sanitize_name cannot make an identifier, or that repeat,
// drop the list too.
namespace {

bool is_tracer_placeholder(const std::string& s) {
  const std::string pre = "argument_";
  return s.size() > pre.size() && s.rfind(pre, 0) == 0 &&
         std::all_of(s.begin() + static_cast<long>(pre.size()), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> forward_arg_names(const jit::Module& m) {
  auto method = m.find_method("forward");
  if (!method) return {};  // ModuleList, ModuleDict, ...
  const auto& args = method->function().getSchema().arguments();
  std::vector<std::string> out;
  for (size_t i = 1; i < args.size(); ++i) {  // args[0] is self
    std::string s = sanitize_name(args[i].name());
    if (s.empty() || s == "self" || is_tracer_placeholder(s) ||
        std::find(out.begin(), out.end(), s) != out.end())
      return {};
    out.push_back(std::move(s));
  }
  return out;
}

void add_modules(const jit::Module& m, const std::string& path,
                 std::map<std::string, ModuleInfo>& out) {
  out[path] = ModuleInfo{plain_type_name(m), forward_arg_names(m)};
  for (const auto& c : m.named_children()) add_modules(c.value, join_path(path, c.name), out);
}

}  // namespace

std::map<std::string, ModuleInfo> module_table(const jit::Module& root) {
  std::map<std::string, ModuleInfo> out;
  add_modules(root, "", out);
  return out;
}

Type convert_type(const c10::TypePtr& t) {
  using TK = c10::TypeKind;
  switch (t->kind()) {
    case TK::TensorType: {
      auto tt = t->expect<c10::TensorType>();
      Type r = Type::tensor(tt->scalarType()
                                ? dtype_from_scalar_type(static_cast<int64_t>(*tt->scalarType()))
                                : DType::Unknown);
      if (auto sizes = tt->sizes().concrete_sizes()) r.shape = *sizes;
      return r;
    }
    case TK::IntType:
      return Type::of(Type::Kind::Int);
    case TK::FloatType:
      return Type::of(Type::Kind::Float);
    case TK::ComplexType:
      return Type::of(Type::Kind::Complex);
    case TK::BoolType:
      return Type::of(Type::Kind::Bool);
    case TK::StringType:
      return Type::of(Type::Kind::Str);
    case TK::NoneType:
      return Type::of(Type::Kind::None);
    case TK::DeviceObjType:
      return Type::of(Type::Kind::Device);
    case TK::GeneratorType:
      return Type::of(Type::Kind::Generator);
    case TK::ListType:
      return Type::list(convert_type(t->expect<c10::ListType>()->getElementType()));
    case TK::TupleType: {
      auto tt = t->expect<c10::TupleType>();
      std::vector<Type> elems;
      for (const auto& e : tt->elements()) elems.push_back(convert_type(e));
      // A NamedTuple keeps its name and fields (Note [NamedTuple types] in ir/ir.h).
      if (tt->name() && tt->schema()) {
        std::vector<std::string> fields;
        for (const c10::Argument& a : tt->schema()->arguments()) fields.push_back(a.name());
        if (fields.size() == elems.size())
          return Type::named_tuple(tt->name()->qualifiedName(), std::move(fields),
                                   std::move(elems));
      }
      return Type::tuple(std::move(elems));
    }
    case TK::OptionalType:
      return Type::optional(convert_type(t->expect<c10::OptionalType>()->getElementType()));
    case TK::DictType: {
      auto d = t->expect<c10::DictType>();
      return Type::dict(convert_type(d->getKeyType()), convert_type(d->getValueType()));
    }
    case TK::EnumType: {  // Note [Enum types] in ir/ir.h
      auto et = t->expect<c10::EnumType>();
      std::vector<std::string> members;
      for (const auto& [name, v] : et->enumNamesValues()) {
        if (v.isInt())
          members.push_back(enum_member_field(name, v.toInt()));
        else if (v.isDouble())
          members.push_back(enum_member_field(name, v.toDouble()));
        else if (v.isString())
          members.push_back(enum_member_field(name, v.toStringRef()));
        else
          return Type::any();
      }
      return Type::enum_type(et->qualifiedClassName().qualifiedName(),
                             convert_type(et->getValueType()), std::move(members));
    }
    default:
      return Type::any();
  }
}

IntRole int_role(const c10::Argument& arg) {
  c10::TypePtr t = arg.real_type();
  if (auto o = t->cast<c10::OptionalType>()) t = o->getElementType();
  switch (t->kind()) {
    case c10::TypeKind::ScalarTypeType:
      return IntRole::ScalarType;
    case c10::TypeKind::LayoutType:
      return IntRole::Layout;
    case c10::TypeKind::MemoryFormatType:
      return IntRole::MemoryFormat;
    default:
      return IntRole::Plain;
  }
}

std::string shape_str(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? "," : "") + std::to_string(t.size(i));
  return s + "]";
}

}  // namespace tt::ts
