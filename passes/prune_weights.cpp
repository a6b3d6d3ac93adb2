// prune-weights: drop the weights no node reads (an import pass of the ONNX loader, after dce:
// Note [Import pipeline] in lib/loaders/loader.h).
//
// Before:
//   %y : Tensor = nn.Linear(%x) @weight=fc.weight @bias=fc.bias #module=fc
//   weights { fc.weight, scale, fc.bias }      (no node reads scale any more)
// After:
//   %y : Tensor = nn.Linear(%x) @weight=fc.weight @bias=fc.bias #module=fc
//   weights { fc.weight, fc.bias }
//
// Fires on every weight of the store that no node (nested blocks included) refers to. The weights
// left keep their order in the store (the state_dict's, NAME.pth's). The user's pipelines do not
// run it: there a weight nothing reads is still part of the model's state_dict (passes/dce.cpp).
#include "passes/pass.h"

#include <set>
#include <string>
#include <vector>

namespace tt {

bool run_prune_weights(Graph& g, PassContext& ctx) {
  std::set<std::string> read;
  for (Node* n : g.all_nodes())
    for (const auto& w : n->weights()) read.insert(w.second);
  std::vector<std::string> names = g.weights().names();
  bool changed = false;
  for (const auto& name : names) {
    if (read.count(name)) continue;
    ctx.rewrite("unread-weight", nullptr);
    g.weights().erase(name);
    changed = true;
  }
  return changed;
}

}  // namespace tt
