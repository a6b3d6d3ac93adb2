// The out-of-line part of the rewrite toolkit (lib/ir/rewrite.h): WeightStore::apply, the
// weight-store edits passes make (Note [Weight-store edits] in lib/ir/ir.h).
#include "ir/rewrite.h"

#include <string_view>
#include <unordered_set>

namespace tt {

void WeightStore::apply(WeightEdits edits) {
  if (edits.empty()) return;
  // Without renames, and when every new name is new to the store and given once, the result is
  // the store with entries dropped and new ones spliced into the order: done in place, the
  // surviving entries (and their tensors and names) are not moved into a second table. On the
  // 730k weights of scripts/bench_passes.sh's 1M-node graph that rebuild was most of
  // fold-batchnorm's time (issue #22).
  if (edits.rename.empty()) {
    std::unordered_set<std::string_view> added;
    bool fresh_names = true;
    for (const auto& kv : edits.insert_after)
      for (const auto& nw : kv.second)
        fresh_names = fresh_names && !index_.count(nw.first) && added.insert(nw.first).second;
    if (fresh_names) {
      compact();
      std::vector<std::string> order;
      order.reserve(order_.size() + added.size());
      for (std::string& name : order_) {
        auto ins = edits.insert_after.find(name);
        if (edits.erase.count(name)) {
          index_.erase(name);
        } else {
          index_.at(name).pos = order.size();
          order.push_back(std::move(name));
        }
        if (ins == edits.insert_after.end()) continue;
        for (auto& nw : ins->second) {
          index_.emplace(nw.first, Entry{std::move(nw.second), order.size()});
          order.push_back(nw.first);
        }
      }
      order_ = std::move(order);
      return;
    }
  }
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
