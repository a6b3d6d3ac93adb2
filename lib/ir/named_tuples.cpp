// NamedTuple types of a graph (ir/named_tuples.h).
#include "ir/named_tuples.h"

#include <cctype>
#include <functional>
#include <set>

namespace tt {

std::vector<Type> named_tuple_types(const Graph& g) {
  std::vector<Type> out;
  std::set<std::string> seen;
  std::function<void(const Type&)> visit = [&](const Type& t) {
    for (const Type& e : t.elems) visit(e);  // a field's class first
    if (t.is_named_tuple() && seen.insert(t.name).second) out.push_back(t);
  };
  for (const Value* v : g.inputs()) visit(v->type());
  for (const Node* n : g.all_nodes()) {
    for (const Value* v : n->outputs()) visit(v->type());
    for (const auto& b : n->blocks())
      for (const Value* v : b->inputs()) visit(v->type());
  }
  return out;
}

std::string torchscript_named_tuple_name(const std::string& qualified_name) {
  std::string out = "_tt_";
  for (char c : qualified_name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

}  // namespace tt
