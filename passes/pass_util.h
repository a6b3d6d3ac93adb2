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

namespace at {
class Tensor;
}

namespace tt {

// Side effects of the node itself (not of its nested blocks): mutation of an input (ops named
// `x_`), printing, raising, list/dict mutation, setting attributes; a node without outputs that
// is not known to be pure. Module ops are pure (models run in eval).
bool has_side_effects(const Node* n);
// Whether `n` seeds or draws from a torch.Generator object (an input of type Generator: Note
// [Generator values] in ir/ir.h): an effect even where its result is unused.
bool uses_generator(const Node* n);
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

// The arithmetic of fold-batchnorm (passes/fold_batchnorm.cpp): W' = W * s and
// b' = (b - mean) * s + beta with s = gamma / sqrt(var + eps), per output channel, in float64, cast
// back to W's and b's dtype (W's when there is no b). b, gamma, beta may be null. `transpose`: W is
// a ConvTranspose weight [in, out/groups, k...]. Raw loops over float/double data where they can
// run (Note [BatchNorm folding on raw data]), else ATen ops; `Aten` forces the latter (tests).
struct BnFoldInputs {
  const at::Tensor *w, *b, *mean, *var, *gamma, *beta;
  double eps;
  int64_t groups;
  bool transpose;
};
enum class BnFoldMath { Fastest, Aten };
// Returns true when the raw loops ran.
bool fold_bn_tensors(const BnFoldInputs& in, at::Tensor& new_w, at::Tensor& new_b,
                     BnFoldMath math = BnFoldMath::Fastest);

}  // namespace tt
