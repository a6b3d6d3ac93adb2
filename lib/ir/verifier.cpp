// IR verifier: checks Note [IR ownership and invariants] (ir.h) and weight references, in time
// linear in the size of the graph. Run after every pass in tests (STYLE.md §2).
//
// Note [Verifier passes]
// Pass 1 records every node and value the graph owns (so later checks never dereference a
// pointer the graph does not own: a dangling input or a use by a destroyed node is reported,
// not followed) and checks structure, names and per-op rules. Pass 2 walks the blocks in order
// with a scoped set of visible values (a nested block sees the enclosing values defined before
// its owning node) to check dominance, then use lists are checked against inputs both ways.
#include "ir/verifier.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace tt {

namespace {

struct UseKey {
  const Node* user;
  size_t index;
  bool operator==(const UseKey& o) const { return user == o.user && index == o.index; }
};
struct UseKeyHash {
  size_t operator()(const UseKey& k) const {
    return std::hash<const void*>()(k.user) * 31 + std::hash<size_t>()(k.index);
  }
};

class Verifier {
 public:
  explicit Verifier(const Graph& g) : g_(g) {}

  std::vector<std::string> run() {
    collect(g_.block(), nullptr);
    walk(g_.block());
    check_uses();
    check_defaults();
    return std::move(msgs_);
  }

 private:
  // ------------------------------------------------------------------------------------------
  // descriptions (only of nodes/values the graph owns)

  std::string block_desc(const Block* b) const {
    if (b == g_.block()) return "the graph";
    const Node* owner = b->owning_node();
    size_t index = 0;
    for (size_t i = 0; i < owner->blocks().size(); ++i)
      if (owner->block(i) == b) index = i;
    return "block" + std::to_string(index) + " of " + node_desc(owner);
  }

  std::string node_desc(const Node* n) const {
    auto it = special_.find(n);
    if (it != special_.end()) {
      return (n == it->second->return_node() ? "the return of " : "the arguments of ") +
             block_desc(it->second);
    }
    if (n->num_outputs()) return "node %" + n->output(0)->name() + " (" + n->op() + ")";
    return "node " + n->op() + " (no outputs, in " +
           (n->owning_block() ? block_desc(n->owning_block()) : "no block") + ")";
  }

  void report(std::string m) { msgs_.push_back(std::move(m)); }

  // Note [Forward defaults] in ir.h: a trailing run of inputs, each of its input's type.
  void check_defaults() {
    const Value* last_default = nullptr;
    for (const Value* in : g_.inputs()) {
      const AttrValue* d = g_.input_default(in);
      if (!d) {
        if (last_default)
          report("graph input %" + in->name() + " has no default but %" + last_default->name() +
                 " before it has one (only the last inputs can have defaults)");
        continue;
      }
      last_default = in;
      if (!default_fits(in->type(), *d))
        report("the default " + attr_str(*d) + " of graph input %" + in->name() +
               " is not a value of its type " + in->type().str());
    }
  }

  // ------------------------------------------------------------------------------------------
  // pass 1: ownership, structure, names, per-op rules

  void add_node(const Node* n) {
    if (nodes_.insert(n).second) node_list_.push_back(n);
  }

  void collect_outputs(const Node* n) {
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* v = n->outputs()[i];
      if (values_.insert(v).second) value_list_.push_back(v);
      if (v->node() != n || v->offset() != i)
        report(node_desc(n) + ": output #" + std::to_string(i) + " %" + v->name() +
               " does not record this node and index as its producer");
      if (v->name().empty()) {
        report(node_desc(n) + ": output #" + std::to_string(i) + " has no name");
        continue;
      }
      auto ins = names_.emplace(v->name(), v);
      if (!ins.second)
        report("value name %" + v->name() + " is used by two values (" +
               node_desc(ins.first->second->node()) + " and " + node_desc(n) + ")");
      else if (g_.find_value(v->name()) != v)
        report("value %" + v->name() + " is missing from the graph's name table");
    }
  }

  void collect(const Block* b, const Node* owner) {
    if (b->graph() != &g_) report(block_desc(b) + " belongs to another graph");
    if (b->owning_node() != owner)
      report("a block of " + (owner ? node_desc(owner) : std::string("the graph")) +
             " records another owning node");
    const Node* param = b->param_node();
    const Node* ret = b->return_node();
    special_[param] = b;
    special_[ret] = b;
    add_node(param);
    add_node(ret);
    if (param->owning_block() != b || ret->owning_block() != b)
      report("the argument or return node of " + block_desc(b) + " records another block");
    if (!param->inputs().empty()) report("the arguments of " + block_desc(b) + " have inputs");
    if (!ret->outputs().empty()) report("the return of " + block_desc(b) + " has outputs");
    collect_outputs(param);

    for (const Node* n : b->nodes()) {  // not next(): it trusts owning_block()
      add_node(n);
      if (n->owning_block() != b)
        report(node_desc(n) + " is in " + block_desc(b) + " but records another owning block");
      if (n->graph() != &g_) report(node_desc(n) + " belongs to another graph");
      for (const auto& kv : n->weights())
        if (!g_.weights().has(kv.second))
          report(node_desc(n) + ": weight ref @" + kv.first + "=" + kv.second +
                 " names a weight missing from graph.weights()");
      if (n->op() == "prim.Constant") {
        if (!n->attrs().has("value")) report(node_desc(n) + " has no 'value' attribute");
        if (n->num_outputs() != 1)
          report(node_desc(n) + " has " + std::to_string(n->num_outputs()) +
                 " outputs, expected 1");
      } else if (n->op() == "prim.If" && n->blocks().size() != 2) {
        report(node_desc(n) + " has " + std::to_string(n->blocks().size()) + " blocks, expected 2");
      } else if (n->op() == "prim.Loop" && n->blocks().size() != 1) {
        report(node_desc(n) + " has " + std::to_string(n->blocks().size()) + " blocks, expected 1");
      }
      for (const auto& sub : n->blocks()) collect(sub.get(), n);
      collect_outputs(n);
    }
  }

  // ------------------------------------------------------------------------------------------
  // pass 2: dominance (Note [Verifier passes])

  void define(const Value* v) {
    visible_.insert(v);
    seen_.insert(v);
    scope_stack_.push_back(v);
  }

  void check_inputs(const Node* n) {
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const Value* v = n->inputs()[i];
      const std::string where = node_desc(n) + ": input #" + std::to_string(i);
      if (!values_.count(v)) {
        report(where + " is not a value of this graph (dangling or from another graph)");
        continue;
      }
      if (visible_.count(v)) continue;
      if (seen_.count(v))
        report(where + " %" + v->name() +
               " is not visible here (defined inside a block that does not enclose this use)");
      else
        report(where + " %" + v->name() + " is defined after its use");
    }
  }

  void walk(const Block* b) {
    const size_t mark = scope_stack_.size();
    for (const Value* v : b->inputs()) define(v);
    for (const Node* n : b->nodes()) {  // not next(): it trusts owning_block()
      check_inputs(n);
      for (const auto& sub : n->blocks()) walk(sub.get());
      for (const Value* v : n->outputs()) define(v);
    }
    check_inputs(b->return_node());
    while (scope_stack_.size() > mark) {
      visible_.erase(scope_stack_.back());
      scope_stack_.pop_back();
    }
  }

  // ------------------------------------------------------------------------------------------
  // use lists against inputs, both directions

  void check_uses() {
    std::unordered_map<UseKey, const Value*, UseKeyHash> recorded;
    for (const Value* v : value_list_) {
      for (const Use& u : v->uses()) {
        if (!nodes_.count(u.user)) {
          report("value %" + v->name() +
                 " records a use by a node that is not in this graph (detached or destroyed)");
          continue;
        }
        if (u.index >= u.user->inputs().size() || u.user->inputs()[u.index] != v) {
          report("value %" + v->name() + " records a use as input #" + std::to_string(u.index) +
                 " of " + node_desc(u.user) + ", which does not use it there");
          continue;
        }
        if (!recorded.emplace(UseKey{u.user, u.index}, v).second)
          report("value %" + v->name() + " records the use as input #" + std::to_string(u.index) +
                 " of " + node_desc(u.user) + " twice");
      }
    }
    for (const Node* n : node_list_) {
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        const Value* v = n->inputs()[i];
        if (!values_.count(v)) continue;  // reported by check_inputs
        auto it = recorded.find(UseKey{n, i});
        if (it == recorded.end() || it->second != v)
          report(node_desc(n) + ": input #" + std::to_string(i) + " %" + v->name() +
                 " is missing from the use list of %" + v->name());
      }
    }
  }

  const Graph& g_;
  std::vector<std::string> msgs_;
  std::unordered_set<const Node*> nodes_;
  std::unordered_set<const Value*> values_;
  // Same contents in walk order, so messages come out in a deterministic order.
  std::vector<const Node*> node_list_;
  std::vector<const Value*> value_list_;
  std::unordered_map<const Node*, const Block*> special_;  // param/return node -> its block
  std::unordered_map<std::string, const Value*> names_;
  std::unordered_set<const Value*> visible_, seen_;
  std::vector<const Value*> scope_stack_;
};

}  // namespace

std::vector<std::string> verify_graph(const Graph& g) { return Verifier(g).run(); }

}  // namespace tt
