// cse: common-subexpression elimination.
//
// Before:
//   %a : Tensor = F.relu(%x)
//   %b : Tensor = F.relu(%x)
//   %c : Tensor = torch.add(%a, %b, %one)
// After:
//   %a : Tensor = F.relu(%x)
//   %c : Tensor = torch.add(%a, %a, %one)
//
// Fires on a node when an earlier node that is visible from it (same block or an enclosing one)
// has the same op, the same inputs (the same values, in order), equal attributes, the same weight
// references and module path, and as many outputs; for prim.Constant the output types must be
// equal too (3 as an int is not 3 as a ScalarType). Never for nodes with side effects, random or
// training-mode ops (rand*, bernoulli, normal, dropout with train=true, torch.empty ...), or nodes
// with nested blocks.
//
// Scoping: the table of available nodes is scoped by block; leaving a block forgets what was
// defined inside, so a value from an inner block is never used outside it.
//
// Mutation: when the graph holds any node with side effects (an in-place op, list append, ...),
// two equal-looking nodes may see different data, so only prim.GetAttr and non-tensor
// prim.Constant nodes are merged then.
//
// Linear: one walk; one hash lookup per node.
#include "passes/pass.h"
#include "passes/pass_util.h"

#include <functional>
#include <unordered_set>

namespace tt {
namespace {

size_t combine(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t hash_attr(const AttrValue& v) {
  if (const auto* t = std::get_if<at::Tensor>(&v)) {
    // Tensor values are compared exactly in equal_nodes; the hash only needs the outline.
    size_t h = std::hash<int>()(t->defined() ? static_cast<int>(t->scalar_type()) : -1);
    if (t->defined())
      for (int64_t d : t->sizes()) h = combine(h, std::hash<int64_t>()(d));
    return h;
  }
  return std::hash<std::string>()(attr_str(v));
}

struct NodeHash {
  size_t operator()(const Node* n) const {
    size_t h = std::hash<std::string>()(n->op());
    for (const Value* v : n->inputs()) h = combine(h, std::hash<const void*>()(v));
    for (const auto& kv : n->attrs().items()) {
      h = combine(h, std::hash<std::string>()(kv.first));
      h = combine(h, hash_attr(kv.second));
    }
    for (const auto& kv : n->weights()) h = combine(h, std::hash<std::string>()(kv.second));
    h = combine(h, std::hash<std::string>()(n->module()));
    return combine(h, n->num_outputs());
  }
};

struct NodeEq {
  bool operator()(const Node* a, const Node* b) const {
    if (a->op() != b->op() || a->inputs() != b->inputs() || a->num_outputs() != b->num_outputs() ||
        a->module() != b->module() || a->weights() != b->weights())
      return false;
    const auto& ia = a->attrs().items();
    const auto& ib = b->attrs().items();
    if (ia.size() != ib.size()) return false;
    for (size_t i = 0; i < ia.size(); ++i)
      if (ia[i].first != ib[i].first || !attr_equal(ia[i].second, ib[i].second)) return false;
    if (a->is("prim.Constant"))
      for (size_t i = 0; i < a->num_outputs(); ++i)
        if (a->output(i)->type() != b->output(i)->type()) return false;
    return true;
  }
};

class Cse {
 public:
  Cse(PassContext& ctx, bool graph_has_effects) : ctx_(ctx), restricted_(graph_has_effects) {}
  bool changed() const { return changed_; }

  void run_block(Block* b) {
    size_t mark = undo_.size();
    for (Node* n = b->front(); n;) {
      Node* nx = n->next();
      if (!n->blocks().empty()) {
        for (const auto& sub : n->blocks()) run_block(sub.get());
      } else if (eligible(n)) {
        auto it = table_.find(n);
        if (it != table_.end()) {
          Node* keep = *it;
          ctx_.rewrite("cse", n);
          for (size_t i = 0; i < n->num_outputs(); ++i)
            n->output(i)->replace_all_uses_with(keep->output(i));
          n->destroy();
          changed_ = true;
        } else {
          table_.insert(n);
          undo_.push_back(n);
        }
      }
      n = nx;
    }
    // Leave the scope: what this block defined is not visible outside it.
    while (undo_.size() > mark) {
      table_.erase(undo_.back());
      undo_.pop_back();
    }
  }

 private:
  bool eligible(const Node* n) const {
    if (n->num_outputs() == 0) return false;
    if (restricted_) {
      if (n->is("prim.GetAttr")) return true;
      if (!n->is("prim.Constant")) {
        ctx_.reject("cse", n, "the graph mutates values in place; only constants are merged");
        return false;
      }
      const AttrValue* v = n->attrs().find("value");
      return v && !std::holds_alternative<at::Tensor>(*v);
    }
    if (has_side_effects(n)) return false;
    if (is_nondeterministic(n)) {
      ctx_.reject("cse", n, "random or training-mode op");
      return false;
    }
    return true;
  }

  PassContext& ctx_;
  bool restricted_;
  bool changed_ = false;
  std::unordered_set<Node*, NodeHash, NodeEq> table_;
  std::vector<Node*> undo_;
};

}  // namespace

bool run_cse(Graph& g, PassContext& ctx) {
  Cse cse(ctx, any_node(g.block(), has_side_effects));
  cse.run_block(g.block());
  return cse.changed();
}

}  // namespace tt
