// The out-of-line part of the rewrite toolkit (lib/ir/rewrite.h): WeightStore::apply, the
// weight-store edits passes make (Note [Weight-store edits] in lib/ir/ir.h).
#include "ir/rewrite.h"

namespace tt {

void WeightStore::apply(WeightEdits edits) {
  if (edits.empty()) return;
  WeightStore fresh;
  for (const auto& name : names()) {
    Weight& w = index_.at(name).weight;
    if (!edits.erase.count(name)) {
      auto r = edits.rename.find(name);
      fresh.set(r == edits.rename.end() ? name : r->second, std::move(w));
    }
    auto ins = edits.insert_after.find(name);
    if (ins != edits.insert_after.end())
      for (auto& nw : ins->second) fresh.set(nw.first, std::move(nw.second));
  }
  *this = std::move(fresh);
}

}  // namespace tt
