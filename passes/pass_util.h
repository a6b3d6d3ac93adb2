// Small structural matchers shared by the passes (OpenVINO-style predicates: has_one_use,
// calls_aten, const_int, ...). Nothing here changes the graph.
//
// Note [Recognising ops]
// Passes recognise function and method ops by the ATen op they lower to, not by their Python
// spelling: `calls_aten(n, "aten::dropout")` is true for F.dropout, for whatever name the op table
// gives aten::dropout, and for a fallback "aten::dropout.default". The op table's `aten` list is
// the source; for an op the table does not know, "Tensor.x" / "torch.x" / "F.x" count as
// "aten::x". Module ops ("nn.Dropout") never match calls_aten: they carry weights and attributes
// and are matched by name.
#pragma once

#include "ir/ir.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tt {

// "aten::add.Tensor" -> "aten::add"; "aten::add" -> "aten::add".
std::string aten_base(std::string_view qualified);
// The ATen base names ("aten::dropout") an IR op lowers to; empty for module and prim ops.
const std::vector<std::string>& aten_bases(const std::string& op);
bool calls_aten(const Node* n, std::string_view base);
bool is_module_op(const Node* n);

// Side effects of the node itself (not of its nested blocks): mutation of an input (ops named
// `x_`), printing, raising, list/dict mutation, setting attributes; a node without outputs that
// is not known to be pure. Module ops are pure (models run in eval).
bool has_side_effects(const Node* n);
// Same, including everything in the node's nested blocks (linear in their size).
bool has_side_effects_deep(const Node* n);
// Results differ between two runs with the same inputs (random ops, training-mode dropout,
// uninitialised memory such as torch.empty).
bool is_nondeterministic(const Node* n);

// Constants.
std::optional<int64_t> const_int(const Value* v);
std::optional<double> const_float(const Value* v);  // int constants are read as float too
std::optional<bool> const_bool(const Value* v);
bool const_is_none(const Value* v);
// A dtype constant: DType attr or an int typed ScalarType (c10::ScalarType code).
std::optional<DType> const_dtype(const Value* v);

// Structure.
inline bool has_one_use(const Value* v) { return v->num_uses() == 1; }
// The producer of v when it is a real node (not a block parameter) with op `op`.
Node* producer_is(const Value* v, const char* op);
// Known shape of a tensor value (nullopt when the rank is unknown; -1 entries unknown).
const std::optional<std::vector<int64_t>>& shape_of(const Value* v);
bool has_complete_shape(const Value* v);
// Rank of a tensor value: from its type, else from the op that made it when that fixes the rank
// (flatten(start_dim=1, end_dim=-1) -> 2; view/reshape to a list of N sizes -> N).
std::optional<size_t> rank_of(const Value* v);

// Renames weights (old state_dict name -> new): the store keeps its order and every node's
// reference follows (one walk over the graph, one rebuild of the store).
void rename_weights(Graph& g, const std::unordered_map<std::string, std::string>& renames);

// Calls f(node) for every node of `b` in order, depth-first pre-order into nested blocks when f
// returns true. f may destroy the node it is given (or earlier ones) and then must return false;
// nodes f inserts after the current one are not visited.
template <typename F>
void walk_pre(Block* b, F&& f) {
  for (Node* n = b->front(); n;) {
    Node* nx = n->next();
    bool descend = f(n);
    if (descend)
      for (const auto& sub : n->blocks()) walk_pre(sub.get(), f);
    n = nx;
  }
}

}  // namespace tt
