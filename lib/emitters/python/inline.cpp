// The Python emitter's inline expressions: which values are written inside the expression that
// reads them instead of as a statement of their own (Note [Expressions written inline]).
#include "emitters/python/emitter.h"
#include "passes/pass_util.h"

#include <unordered_map>

namespace tt::pyemit {

// Note [Expressions written inline]
// The model's source names the values it assigns to variables; TorchScript keeps those names
// (`attn`, `pad_H`) and numbers the rest, the subexpressions (`k.transpose(-2, -1)`, `W % 7`,
// `x.size(0)`). A numbered value is written inside the one expression that reads it, as the
// source had it, when that computes exactly what a statement of its own would:
// - it is made by a call without side effects that gives the same result every time (no write
//   into an input, no random op, no module: `self.conv1(x)` keeps its own line);
// - it is read exactly once, by a node of the same statement list (a block, or a class's
//   forward) that evaluates each of its inputs once, where it is written: a call, a module
//   call, an outlined child's call, a list, tuple or dict literal that is itself written inline,
//   a tuple index or unpack, torch.tensor(n), the model's return, or an if as its condition
//   (`if x.dim() == 4:`, tested once before either branch). Not: a loop (it re-tests its
//   condition), `bool(t)` that becomes an if's test, `x[i] = v` (its target is read twice), the
//   return of a module's forward (whether its result is read once depends on where the module
//   is used, and instances of one class must read alike);
// - no statement between the two has a side effect, so the expression, evaluated later, reads
//   the same tensors, lists and names. A value written inside another inline value is evaluated
//   where that one is, so the list is planned from its end backwards.
// For reading, calls nest at most kMaxCallDepth deep inside a statement's own call: a value
// that would nest deeper keeps its statement. Operators, subscripts and attributes do not count
// (`(7 - W % 7) % 7`, `x[:, :H, :W]`).
// Names stay bound as they were: a loop-carried variable is rebound only at the end of the loop
// body, after every node of it, and can_take_loop_var gives a body's result the loop variable
// early only when no inline value reads the old one. An optional child's call reads its input
// twice (`y = x`, then `y = self.child(x)`): emit_optional_call gives an inline input a name
// first.
// A slice of an inline slice on a dim the first left whole joins its subscript (try_slice).
// Every rule is about the graph's structure, never about the text, so the forwards of two
// instances compared for a class (with canonical names) inline the same values as the forward
// finally written.

namespace {

// A value the plan may write inline: the one result of a pure, deterministic call.
bool inlinable_def(const Node& d) {
  if (d.num_outputs() != 1 || !d.blocks().empty() || !d.module().empty()) return false;
  const Value* v = d.output(0);
  if (v->num_uses() != 1 || has_source_name(v)) return false;
  const std::string& op = d.op();
  if (op.rfind("prim.", 0) == 0 && op != "prim.NumToTensor" && op != "prim.TupleIndex")
    return false;
  return !has_side_effects(&d) && !is_nondeterministic(&d);
}

// A user that evaluates each input expression once, where it is written.
bool evaluates_inputs_once(const Node& u) {
  if (!u.blocks().empty()) return false;
  const std::string& op = u.op();
  if (op == "prim.TupleIndex" || op == "prim.TupleUnpack" || op == "prim.ListUnpack" ||
      op == "prim.NumToTensor" || op == "prim.RaiseException" || op == "prim.Print")
    return true;
  if (op.rfind("prim.", 0) == 0 || op == "bool") return false;
  return tensor_inplace_method_of(op) != "index_put_";
}

// At most this many calls nest inside the call of a statement (`F.softmax(F.max_pool2d(
// F.leaky_relu(x)), 1)` is as deep as it gets; operators and subscripts do not count).
constexpr int kMaxCallDepth = 2;

// Written as a call, not as an operator, a subscript or an attribute.
bool written_as_call(const Node& n) {
  const std::string& op = n.op();
  return !(python_binary_operator(op) || python_unary_operator(op) ||
           python_tensor_comparison(op) || arithmetic_is_infix(n) || is_attribute_op(op) ||
           op == "Tensor.slice" || op == "operator.getitem" || op == "list.slice" ||
           op == "operator.contains" || op == "prim.TupleIndex" || op == "aten::index.Tensor" ||
           op == "Tensor.index");
}

bool literal_construct(const Node& u) {
  return u.is("prim.ListConstruct") || u.is("prim.TupleConstruct") || u.is("prim.DictConstruct");
}

}  // namespace

void PyEmitter::plan_inline(const std::vector<Item>& seq, const Region* r, bool top) {
  // Where each node is evaluated: its item, or the call of the outlined child covering it.
  std::unordered_map<const Node*, size_t> at;
  for (size_t i = 0; i < seq.size(); ++i) {
    if (seq[i].node)
      at[seq[i].node] = i;
    else
      for (const Node* m : seq[i].call->covered) at[m] = i;
  }
  // barriers_before[i]: items with side effects among the first i.
  std::vector<size_t> barriers_before(seq.size() + 1, 0);
  for (size_t i = 0; i < seq.size(); ++i) {
    bool effect = false;
    if (seq[i].node) {
      effect = has_side_effects_deep(seq[i].node);
    } else {
      for (const Node* m : seq[i].call->covered) effect = effect || has_side_effects_deep(m);
    }
    barriers_before[i + 1] = barriers_before[i] + (effect ? 1 : 0);
  }
  const size_t end = seq.size();                  // the return
  std::unordered_map<const Value*, size_t> eval;  // where an inline value is evaluated
  // Where the one use of v evaluates it; nullopt when that is not one place of this list.
  std::function<std::optional<size_t>(const Value*)> eval_at =
      [&](const Value* v) -> std::optional<size_t> {
    const Use& u = v->uses().front();
    if (top && u.user == g_.block()->return_node() && (!r || !r->parent)) return end;
    auto it = at.find(u.user);
    if (it == at.end()) return std::nullopt;
    size_t j = it->second;
    if (!seq[j].node) {  // an outlined child's call: v must be one of its arguments
      const auto& ins = seq[j].call->inputs;
      if (std::count(ins.begin(), ins.end(), v) != 1) return std::nullopt;
      return j;
    }
    const Node& user = *seq[j].node;
    if (literal_construct(user)) {  // written inline only when used once
      if (user.num_outputs() != 1 || user.output(0)->num_uses() != 1) return std::nullopt;
      auto e = eval_at(user.output(0));
      if (e && *e <= j) return std::nullopt;
      return e;
    }
    // An if tests its condition once, before either branch runs: `if x.dim() == 4:`.
    if (user.is("prim.If")) return u.index == 0 ? std::optional<size_t>(j) : std::nullopt;
    if (!evaluates_inputs_once(user)) return std::nullopt;
    if (user.num_outputs() == 1)  // itself inline: evaluated where it is
      if (auto e = eval.find(user.output(0)); e != eval.end()) return e->second;
    return j;
  };
  std::vector<const Value*> planned;
  for (size_t i = seq.size(); i-- > 0;) {
    const Node* d = seq[i].node;
    if (!d || !inlinable_def(*d)) continue;
    std::optional<size_t> e = eval_at(d->output(0));
    if (!e || *e <= i || barriers_before[*e] != barriers_before[i + 1]) continue;
    eval[d->output(0)] = *e;
    planned.push_back(d->output(0));
  }
  // Calls nest at most kMaxCallDepth deep inside a statement's own call; a deeper one keeps its
  // statement (which only moves its evaluation earlier, to where it is made: still exact).
  std::unordered_map<const Value*, int> depth;
  std::function<int(const Value*)> depth_of = [&](const Value* v) -> int {
    if (auto it = depth.find(v); it != depth.end()) return it->second;
    const Node* p = v->node();
    int d = 0;
    if (p && literal_construct(*p) && v->num_uses() == 1)
      for (const Value* w : p->inputs()) d = std::max(d, depth_of(w));
    return d;
  };
  for (auto it = planned.rbegin(); it != planned.rend(); ++it) {  // in list order
    const Node& d = *(*it)->node();
    int inner = 0;
    for (const Value* w : d.inputs()) inner = std::max(inner, depth_of(w));
    int mine = inner + (written_as_call(d) ? 1 : 0);
    if (mine > kMaxCallDepth) continue;
    depth[*it] = mine;
    inline_.insert(*it);
  }
}

void PyEmitter::plan_inline(const Block& b) {
  std::vector<Item> seq;
  for (Node* n = b.front(); n; n = n->next()) seq.push_back(Item{n, nullptr});
  plan_inline(seq, nullptr, false);
}

}  // namespace tt::pyemit
