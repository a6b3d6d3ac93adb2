// dce: dead-code elimination.
//
// Before:
//   %t : Tensor = Tensor.t(%w)
//   %y : Tensor = F.relu(%x)
//   aten::print.default(%y)
//   return %x
// After:
//   %y : Tensor = F.relu(%x)
//   aten::print.default(%y)
//   return %x
//
// Fires on a node when none of its outputs is used and it has no side effects
// (pass_util.h has_side_effects: ops named `x_` mutate an input; print, raise, list/dict mutation
// and nodes without outputs count as effects; module ops are pure in eval). A prim.If or
// prim.Loop is dead when its outputs are unused and nothing inside it has an effect; unused
// outputs of a prim.If are removed from the node and from both branches first, and loop-carried
// values of a prim.Loop that nothing reads (output unused, block argument unused or only passed
// on) are removed from the node, its block and its return. Model weights are
// never dropped here, even when no node reads them any more: they are the state_dict.
//
// Linear: each block is walked once from back to front, so the users of a node are settled before
// the node itself is looked at.
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace tt {
namespace {

class Dce {
 public:
  explicit Dce(PassContext& ctx) : ctx_(ctx) {}
  bool changed() const { return changed_; }

  // Returns whether the block (after cleaning) still holds a node with side effects.
  bool run_block(Block* b) {
    bool effects = false;
    for (Node* n = b->back(); n;) {
      Node* prev = n->prev();
      bool node_effects = has_side_effects(n);
      if (!n->blocks().empty()) {
        if (n->is("prim.If")) prune_if_outputs(n);
        if (n->is("prim.Loop")) prune_loop_carried(n);
        for (const auto& sub : n->blocks()) node_effects |= run_block(sub.get());
      }
      bool used = false;
      for (Value* v : n->outputs()) used |= v->has_uses();
      if (!used && !node_effects) {
        ctx_.rewrite("dead-node", n);
        n->destroy();
        changed_ = true;
      } else {
        effects |= node_effects;
      }
      n = prev;
    }
    return effects;
  }

 private:
  // prim.If outputs nobody reads: drop them from the node and from each branch's return, so
  // that what computed them inside the branches becomes dead too.
  void prune_if_outputs(Node* n) {
    for (size_t i = n->num_outputs(); i-- > 0;) {
      if (n->output(i)->has_uses()) continue;
      bool shaped = true;
      for (const auto& b : n->blocks()) shaped &= b->outputs().size() == n->num_outputs();
      if (!shaped) return;  // malformed If: leave it to the verifier
      ctx_.rewrite("dead-if-output", n);
      for (const auto& b : n->blocks()) b->erase_output(i);
      n->erase_output(i);
      changed_ = true;
    }
  }

  // Loop-carried values nobody reads: the Loop's output is unused and, in the body, the block
  // argument is unused or only passed on to the next iteration. Dropped from the inputs, the
  // block arguments, the block's return and the outputs; what computed them becomes dead.
  void prune_loop_carried(Node* n) {
    if (n->blocks().size() != 1 || n->num_inputs() < 2) return;
    Block* b = n->block(0);
    size_t k = n->num_outputs();
    if (n->num_inputs() != k + 2 || b->inputs().size() != k + 1 || b->outputs().size() != k + 1)
      return;
    for (size_t j = k; j-- > 0;) {
      Value* param = b->inputs()[j + 1];
      if (n->output(j)->has_uses()) continue;
      bool passed_on_only = true;
      for (const Use& u : param->uses())
        passed_on_only &= u.user == b->return_node() && u.index == j + 1;
      if (!passed_on_only) continue;
      ctx_.rewrite("dead-loop-carried", n);
      b->erase_output(j + 1);
      b->erase_input(j + 1);
      n->remove_input(j + 2);
      n->erase_output(j);
      changed_ = true;
    }
  }

  PassContext& ctx_;
  bool changed_ = false;
};

}  // namespace

bool run_dce(Graph& g, PassContext& ctx) {
  Dce dce(ctx);
  dce.run_block(g.block());
  return dce.changed();
}

}  // namespace tt
