// NamedTuple types of a graph (ir/named_tuples.h).
#include "ir/named_tuples.h"

#include <cctype>
#include <functional>
#include <set>

namespace tt {

namespace {

// The types of `g`'s values (inputs, node outputs, block arguments, and nested in other types)
// that `pick` accepts, one per qualified name, in the order met, a nested type first.
std::vector<Type> named_types(const Graph& g, bool (Type::*pick)() const) {
  std::vector<Type> out;
  std::set<std::string> seen;
  std::function<void(const Type&)> visit = [&](const Type& t) {
    for (const Type& e : t.elems) visit(e);  // a field's class first
    if ((t.*pick)() && seen.insert(t.name).second) out.push_back(t);
  };
  for (const Value* v : g.inputs()) visit(v->type());
  for (const Node* n : g.all_nodes()) {
    for (const Value* v : n->outputs()) visit(v->type());
    for (const auto& b : n->blocks())
      for (const Value* v : b->inputs()) visit(v->type());
  }
  return out;
}

}  // namespace

std::vector<Type> named_tuple_types(const Graph& g) {
  return named_types(g, &Type::is_named_tuple);
}

std::vector<Type> enum_types(const Graph& g) { return named_types(g, &Type::is_enum); }

std::string torchscript_named_tuple_name(const std::string& qualified_name) {
  std::string out = "_tt_";
  for (char c : qualified_name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

}  // namespace tt
