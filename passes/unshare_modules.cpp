// unshare-modules: give every call of a module instance its own instance, so that eager-mode
// quantization can observe (and later quantize) each call site separately (--quant-prep).
//
// Before:
//   %a : f32[1,8] = nn.ReLU[inplace=false](%x) #module=relu
//   %b : f32[1,8] = nn.Linear[in_features=8, out_features=8, bias=true](%a) @weight=fc.weight @bias=fc.bias #module=fc
//   %c : f32[1,8] = nn.ReLU[inplace=false](%b) #module=relu
//   %d : f32[1,8] = nn.Linear[in_features=8, out_features=8, bias=true](%c) @weight=fc.weight @bias=fc.bias #module=fc
// After:
//   %a : f32[1,8] = nn.ReLU[inplace=false](%x) #module=relu
//   %b : f32[1,8] = nn.Linear[...](%a) @weight=fc.weight @bias=fc.bias #module=fc
//   %c : f32[1,8] = nn.ReLU[inplace=false](%b) #module=relu_1
//   %d : f32[1,8] = nn.Linear[...](%c) @weight=fc_1.weight @bias=fc_1.bias #module=fc_1
//   (weights: fc_1.weight and fc_1.bias are clones of fc.weight and fc.bias, appended)
//
// The first call in program order (nested blocks included, pre-order) keeps the path; every
// other call gets "<path>_N", the first N >= 1 that is neither a module path nor a weight name
// nor a container of one (passes/module_paths.h). A copy of a module with parameters/buffers
// owns clones of them under "<new path>.<key>" (same param/buffer kind), so the state_dict grows
// by one set of weights per copy. Each copy is recorded with PassContext::record_module_copy
// (the report's "module_copies") and logged as rewrite rule "copy".
//
// A node inside a prim.Loop body is one call site even though it runs several times; the pass
// never moves nodes. After it, no module path is used by two nodes.
//
// Linear: one walk; one hash lookup per module node.
#include "passes/module_paths.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <optional>
#include <unordered_set>

namespace tt {

bool run_unshare_modules(Graph& g, PassContext& ctx) {
  std::unordered_set<std::string> seen;
  std::optional<ModulePaths> paths;  // built on the first shared call
  bool changed = false;
  walk_pre(g.block(), [&](Node* n) {
    const std::string orig = n->module();
    if (orig.empty()) return true;
    if (seen.insert(orig).second) return true;
    if (!paths) paths.emplace(g);
    std::string copy = paths->fresh_copy(orig);
    // Weight keys are snapshotted: set_weight rewrites the list being read.
    auto refs = n->weights();
    for (const auto& [key, name] : refs) {
      const Weight* w = g.weights().find(name);
      std::string dst = copy + "." + key;
      if (w) {
        Weight clone{w->tensor.defined() ? w->tensor.clone() : w->tensor, w->is_param};
        g.weights().set(dst, std::move(clone));
      }
      n->set_weight(key, dst);
    }
    n->set_module(copy);
    ctx.record_module_copy(copy, orig);
    ctx.rewrite("copy", n);
    changed = true;
    return true;
  });
  return changed;
}

}  // namespace tt
