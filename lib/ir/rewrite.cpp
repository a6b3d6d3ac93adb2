// The out-of-line part of the rewrite toolkit (lib/ir/rewrite.h): WeightStore::apply, the
// weight-store edits passes make (Note [Weight-store edits] in lib/ir/ir.h).
#include "ir/rewrite.h"

#include <algorithm>
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
        fresh_names = fresh_names && !has(nw.first) && added.insert(nw.first).second;
    if (fresh_names) {
      // Note [Weight-store slots]: only the names the edits mention are looked up; the sweep over
      // the order goes through slots_. New entries are placed by the position of the entry they
      // follow, taken before any entry goes (an erased entry's new entries still go in its place).
      compact();
      using NewEntries = std::vector<std::pair<std::string, Weight>>;
      std::vector<std::pair<size_t, NewEntries*>> inserts;
      inserts.reserve(edits.insert_after.size());
      for (auto& kv : edits.insert_after) {
        auto it = lookup(kv.first);
        if (it != index_.end()) inserts.emplace_back(it->second.pos, &kv.second);
      }
      std::sort(inserts.begin(), inserts.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      size_t erased = 0;
      for (const std::string& name : edits.erase) {
        auto it = lookup(name);
        if (it == index_.end()) continue;
        slots_[it->second.pos] = nullptr;
        index_.erase(it);
        ++erased;
      }
      std::vector<std::string> order;
      std::vector<Entry*> slots;
      order.reserve(order_.size() - erased + added.size());
      slots.reserve(order.capacity());
      auto ins = inserts.begin();
      for (size_t i = 0; i < order_.size(); ++i) {
        if (Entry* e = slots_[i]) {
          e->pos = order.size();
          order.push_back(std::move(order_[i]));
          slots.push_back(e);
        }
        for (; ins != inserts.end() && ins->first == i; ++ins)
          for (auto& nw : *ins->second) {
            ++ir_op_counts().weight_lookups;
            Entry& e = index_.try_emplace(nw.first).first->second;
            e.weight = std::move(nw.second);
            e.pos = order.size();
            order.push_back(nw.first);
            slots.push_back(&e);
          }
      }
      order_ = std::move(order);
      slots_ = std::move(slots);
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
