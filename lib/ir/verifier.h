// IR verifier: checks the invariants of Note [IR ownership and invariants] and weight references.
#pragma once

#include "ir/ir.h"

#include <string>
#include <vector>

namespace tt {

// Returns one message per problem found ("node %y (nn.Conv2d): input %x is defined after use");
// empty when the graph is well-formed.
std::vector<std::string> verify_graph(const Graph& g);

}  // namespace tt
