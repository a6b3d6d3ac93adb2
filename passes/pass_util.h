// Small structural matchers shared by the passes: those of lib/ir/match.h (calls_aten,
// const_int, producer_is, ...; Note [Recognising ops]), the walk drivers of lib/ir/rewrite.h, and
// the ones that need execution facts (side effects) or only passes use. Nothing here changes the
// graph.
#pragma once

#include "ir/ir.h"
#include "ir/match.h"
#include "ir/rewrite.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tt {

// Side effects of the node itself (not of its nested blocks): mutation of an input (ops named
// `x_`), printing, raising, list/dict mutation, setting attributes; a node without outputs that
// is not known to be pure. Module ops are pure (models run in eval).
bool has_side_effects(const Node* n);
// Same, including everything in the node's nested blocks (linear in their size).
bool has_side_effects_deep(const Node* n);
// Results differ between two runs with the same inputs (random ops, training-mode dropout,
// uninitialised memory such as torch.empty).
bool is_nondeterministic(const Node* n);

// Structure.
inline bool has_one_use(const Value* v) { return v->num_uses() == 1; }
// Known shape of a tensor value (nullopt when the rank is unknown; -1 entries unknown).
const std::optional<std::vector<int64_t>>& shape_of(const Value* v);
bool has_complete_shape(const Value* v);
// Rank of a tensor value: from its type, else from the op that made it when that fixes the rank
// (flatten(start_dim=1, end_dim=-1) -> 2; view/reshape to a list of N sizes -> N).
std::optional<size_t> rank_of(const Value* v);

// Renames weights (old state_dict name -> new): the store keeps its order and every node's
// reference follows (one walk over the graph, one rebuild of the store).
void rename_weights(Graph& g, const std::unordered_map<std::string, std::string>& renames);

}  // namespace tt
