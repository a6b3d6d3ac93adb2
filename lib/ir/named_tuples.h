// NamedTuple and Enum types of a graph (Notes [NamedTuple types], [Enum types] in ir/ir.h), for
// the emitters.
#pragma once

#include "ir/ir.h"

#include <string>
#include <vector>

namespace tt {

// The NamedTuple types the graph's values hold (inputs, node outputs, block arguments, and
// nested in other types), one per qualified name, in the order met, a field's type before the
// type that holds it: the order a file must define their classes in.
std::vector<Type> named_tuple_types(const Graph& g);
// The Enum types (Note [Enum types] in ir/ir.h) the graph's values hold, found the same way.
std::vector<Type> enum_types(const Graph& g);
// Both, in one walk over the graph (a deep model's graph is far larger than the caches); the
// second form walks `nodes`, the graph's all_nodes() a caller already has.
struct NamedTypes {
  std::vector<Type> enums, named_tuples;
};
NamedTypes named_types(const Graph& g);
NamedTypes named_types(const Graph& g, const std::vector<Node*>& nodes);

// The identifier --emit torchscript's source spells a NamedTuple class with (its saving half
// resolves it to the class; Note [NamedTuples in TorchScript] in emitters/torchscript.cpp):
// "_tt_" + the qualified name with every character other than [A-Za-z0-9] as '_'.
std::string torchscript_named_tuple_name(const std::string& qualified_name);

}  // namespace tt
