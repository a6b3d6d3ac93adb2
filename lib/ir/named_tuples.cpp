// NamedTuple types of a graph (ir/named_tuples.h).
#include "ir/named_tuples.h"

#include <cctype>
#include <set>

namespace tt {

namespace {

struct Seen {
  std::set<std::string> enums, named_tuples;
};

// Adds the types within `t` (its elements first: a field's class before the class holding it)
// and `t` itself to `out`, each qualified name once per list.
void visit(const Type& t, NamedTypes& out, Seen& seen) {
  for (const Type& e : t.elems) visit(e, out, seen);
  if (t.is_enum() && seen.enums.insert(t.name).second) out.enums.push_back(t);
  if (t.is_named_tuple() && seen.named_tuples.insert(t.name).second) out.named_tuples.push_back(t);
}

}  // namespace

// The types of `g`'s values (inputs, node outputs, block arguments, and nested in other types),
// one per qualified name, in the order met, a nested type first.
NamedTypes named_types(const Graph& g) { return named_types(g, g.all_nodes()); }

NamedTypes named_types(const Graph& g, const std::vector<Node*>& nodes) {
  NamedTypes out;
  Seen seen;
  for (const Value* v : g.inputs()) visit(v->type(), out, seen);
  for (const Node* n : nodes) {
    for (const Value* v : n->outputs()) visit(v->type(), out, seen);
    for (const auto& b : n->blocks())
      for (const Value* v : b->inputs()) visit(v->type(), out, seen);
  }
  return out;
}

std::vector<Type> named_tuple_types(const Graph& g) { return named_types(g).named_tuples; }

std::vector<Type> enum_types(const Graph& g) { return named_types(g).enums; }

std::string torchscript_named_tuple_name(const std::string& qualified_name) {
  std::string out = "_tt_";
  for (char c : qualified_name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

}  // namespace tt
