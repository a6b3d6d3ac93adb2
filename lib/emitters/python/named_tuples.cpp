// The Python emitter's NamedTuple and Enum classes (Notes [NamedTuples in Python], [Enums in
// Python]).
//
// Note [NamedTuples in Python]
// A tuple value whose type is a NamedTuple (Note [NamedTuple types] in ir/ir.h) is built in
// NAME.py with its class, as the model's source did, so that a caller's `out.logits` works:
//
//   from typing import NamedTuple, Optional
//
//   class GoogLeNetOutputs(NamedTuple):
//       logits: torch.Tensor
//       aux_logits2: Optional[torch.Tensor]
//       aux_logits1: Optional[torch.Tensor]
//   ...
//           return GoogLeNetOutputs(x, None, None)
//
// Each qualified name gets one class, named after the name's last component (made unique
// against the model's classes, the helpers and the names the code uses), defined before the
// model's classes in the order met, a field's class before the class using it. Field
// annotations come from the IR type (a tensor of any shape is torch.Tensor, what the IR does not
// know is Any); Python does not check them. Reading a field stays a subscript by position
// (prim.TupleIndex), which a NamedTuple supports.
#include "emitters/python/emitter.h"
#include "ir/named_tuples.h"

namespace tt::pyemit {
namespace {

std::string enum_value_literal(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return py_float(*d);
  return py_str(std::get<std::string>(v));
}

}  // namespace

void PyEmitter::collect_named_tuples() {
  NameAllocator names{python_reserved};
  names.take(class_name());
  names.take("OrderedDict");
  for (const std::string& h : helpers_) names.take(h);
  for (const char* t : {"NamedTuple", "Optional", "List", "Dict", "Tuple", "Any", "Enum"})
    names.take(t);
  // Note [Enums in Python]
  // A value of an Enum type (Note [Enum types] in ir/ir.h) is a member of a class NAME.py defines
  // as the model's source did, before the NamedTuples (a field may hold one):
  //
  //   class Mode(Enum):
  //       SCALE = 1
  //       SHIFT = 2
  //
  // named like a NamedTuple class; a constant is written Mode.SCALE, Enum.name / Enum.value as
  // m.name / m.value, == and != as they are: Python compares members as TorchScript does (the
  // same class and value).
  NamedTypes types = named_types(g_, graph_nodes());
  for (const Type& t : types.enums) {
    for (const EnumMember& m : enum_members(t))
      if (!is_identifier(m.name) || is_keyword(m.name) || m.name[0] == '_')
        throw Error(ExitCode::Unsupported, "the Enum " + t.name + " has a member '" + m.name +
                                               "', which NAME.py cannot define");
    named_tuple_class_[t.name] = names.unique(t.name.substr(t.name.rfind('.') + 1));
    enums_.push_back(t);
  }
  for (const Type& t : types.named_tuples) {
    for (const std::string& f : t.fields)
      if (!is_identifier(f) || is_keyword(f) || f[0] == '_')
        throw Error(ExitCode::Unsupported,
                    "the NamedTuple " + t.name + " has a field '" + f +
                        "', which a Python NamedTuple cannot have — rename the field");
    named_tuple_class_[t.name] = names.unique(t.name.substr(t.name.rfind('.') + 1));
    named_tuples_.push_back(t);
  }
}

std::string PyEmitter::named_tuple_class(const Type& t) const {
  return named_tuple_class_.at(t.name);
}

std::string PyEmitter::annotation(const Type& t, std::set<std::string>& typing) const {
  using K = Type::Kind;
  auto elem = [&](size_t i) { return i < t.elems.size() ? annotation(t.elems[i], typing) : "Any"; };
  switch (t.kind) {
    case K::Tensor:
      return "torch.Tensor";
    case K::Int:
      return "int";
    case K::Float:
      return "float";
    case K::Complex:
      return "complex";
    case K::Bool:
      return "bool";
    case K::Str:
      return "str";
    case K::None:
      return "None";
    case K::Device:
      return "torch.device";
    case K::ScalarType:
      return "torch.dtype";
    case K::Layout:
      return "torch.layout";
    case K::MemoryFormat:
      return "torch.memory_format";
    case K::List:
      typing.insert("List");
      return "List[" + elem(0) + "]";
    case K::Optional:
      typing.insert("Optional");
      return "Optional[" + elem(0) + "]";
    case K::Dict:
      typing.insert("Dict");
      return "Dict[" + elem(0) + ", " + elem(1) + "]";
    case K::Tuple: {
      if (t.is_named_tuple()) return named_tuple_class(t);
      typing.insert("Tuple");
      std::vector<std::string> e;
      for (size_t i = 0; i < t.elems.size(); ++i) e.push_back(elem(i));
      return "Tuple[" + (e.empty() ? std::string("()") : join(e, ", ")) + "]";
    }
    case K::Enum:
      return named_tuple_class(t);
    case K::Generator:
      return "torch.Generator";
    case K::Any:
      break;
  }
  typing.insert("Any");
  return "Any";
}

void PyEmitter::write_named_tuples(std::ostream& os) const {
  for (const Type& t : enums_) {
    os << "class " << named_tuple_class(t) << "(Enum):\n";
    for (const EnumMember& m : enum_members(t))
      os << "    " << m.name << " = " << enum_value_literal(m.value) << "\n";
    os << "\n\n";
  }
  for (const Type& t : named_tuples_) {
    std::set<std::string> unused;
    os << "class " << named_tuple_class(t) << "(NamedTuple):\n";
    for (size_t i = 0; i < t.elems.size(); ++i)
      os << "    " << t.fields[i] << ": " << annotation(t.elems[i], unused) << "\n";
    if (t.elems.empty()) os << "    pass\n";
    os << "\n\n";
  }
}

// The `from typing import ...` line the classes need (added to the file's imports).
void PyEmitter::import_named_tuple_types() {
  if (!enums_.empty()) imports_.insert("from enum import Enum");
  if (named_tuples_.empty()) return;
  std::set<std::string> typing = {"NamedTuple"};
  for (const Type& t : named_tuples_)
    for (const Type& e : t.elems) annotation(e, typing);
  imports_.insert("from typing import " +
                  join(std::vector<std::string>(typing.begin(), typing.end()), ", "));
}

}  // namespace tt::pyemit
