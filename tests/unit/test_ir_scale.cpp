// Complexity claims of the IR (Note [Scale in graph size] in lib/ir/ir.h), each checked by an
// operation count (ir_op_counts()), not a time: removing 100k uses of one value touches O(100k)
// use slots, not O(10^10); prepending and appending never renumber; erasing weights is O(1)
// amortised and applying weight edits hashes only the names they mention; cse + dce over a value
// with 2N uses stays O(N).
#include "ir/ir.h"
#include "ir/verifier.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace tt;

namespace {

constexpr size_t kN = 100000;

// The counts an operation adds.
IrOpCounts delta(const IrOpCounts& before) {
  const IrOpCounts& now = ir_op_counts();
  return {now.use_slots_moved - before.use_slots_moved,
          now.use_slots_scanned - before.use_slots_scanned,
          now.nodes_renumbered - before.nodes_renumbered,
          now.input_indices_shifted - before.input_indices_shifted,
          now.weight_slots_moved - before.weight_slots_moved,
          now.node_count_updates - before.node_count_updates,
          now.weight_lookups - before.weight_lookups};
}

// Every use of every value points back at it, in both directions. In O(uses log uses): each
// input's use list is read once (looking up (n, i) in x's list for every one of x's 100k users
// would be 10^10 steps, minutes of the unit run spent in this helper rather than in the IR).
void check_use_lists(const Graph& g) {
  std::set<const Value*> inputs;
  for (Node* n : g.all_nodes())
    for (size_t i = 0; i < n->num_inputs(); ++i) inputs.insert(n->input(i));
  std::map<std::tuple<const Value*, const Node*, size_t>, size_t> listed;  // (value, user, index)
  for (const Value* v : inputs)
    for (const Use& u : v->uses()) ++listed[{v, u.user, u.index}];
  for (Node* n : g.all_nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      auto it = listed.find({n->input(i), n, i});
      size_t found = it == listed.end() ? 0 : it->second;
      REQUIRE(found == 1);
    }
    for (Value* v : n->outputs())
      for (const Use& u : v->uses()) REQUIRE(u.user->input(u.index) == v);
  }
}

// kN nodes `relu(x)` whose outputs nobody reads.
std::vector<Node*> fan_out(Graph& g, Value* x, size_t n) {
  std::vector<Node*> users;
  users.reserve(n);
  for (size_t i = 0; i < n; ++i) users.push_back(g.insert("F.relu", {x}, 1, nullptr));
  return users;
}

}  // namespace

TEST_CASE("ir scale: removing 100k uses of one value in any order touches O(100k) slots") {
  for (const char* order : {"forward", "backward", "shuffled"}) {
    CAPTURE(order);
    Graph g;
    Value* x = g.add_input(Type::tensor(DType::F32), "x");
    g.add_output(x);
    std::vector<Node*> users = fan_out(g, x, kN);
    if (std::string(order) == "backward") std::reverse(users.begin(), users.end());
    if (std::string(order) == "shuffled") std::shuffle(users.begin(), users.end(), std::mt19937(7));
    IrOpCounts before = ir_op_counts();
    // Half of them first: the survivors keep their order.
    for (size_t i = 0; i < kN / 2; ++i) users[i]->destroy();
    REQUIRE(x->num_uses() == kN / 2 + 1);
    check_use_lists(g);
    std::vector<Node*> rest(users.begin() + kN / 2, users.end());
    std::vector<const Node*> seen;
    for (const Use& u : x->uses()) seen.push_back(u.user);
    // The graph output was the first use, then the survivors in program order.
    std::vector<const Node*> program_order = {g.block()->return_node()};
    for (Node* n = g.block()->front(); n; n = n->next()) program_order.push_back(n);
    CHECK(seen == program_order);  // uses in the order they were added
    for (Node* n : rest) n->destroy();
    CHECK(x->num_uses() == 1);
    IrOpCounts d = delta(before);
    // The old list search and erase moved O(uses) entries per removal: ~2.5e9 here.
    CHECK(d.use_slots_moved <= 2 * kN);
    CHECK(d.use_slots_scanned == 0);
  }
}

TEST_CASE("ir scale: replace_all_uses_with and input edits are O(what they touch)") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32), "x");
  Value* y = g.add_input(Type::tensor(DType::F32), "y");
  std::vector<Node*> users = fan_out(g, x, kN);
  Node* cat = g.insert("prim.ListConstruct", {x, x, x, y}, 1, nullptr);
  g.add_output(cat->output());
  IrOpCounts before = ir_op_counts();
  x->replace_all_uses_with(y);
  CHECK_FALSE(x->has_uses());
  CHECK(y->num_uses() == kN + 4);
  // Inserting and removing an input shifts that node's later inputs, whatever their use counts.
  cat->insert_input(0, x);
  cat->remove_input(1);
  cat->remove_input(0);
  IrOpCounts d = delta(before);
  CHECK(d.input_indices_shifted == 4 + 3 + 3);
  CHECK(d.use_slots_moved <= 2 * kN);
  check_use_lists(g);
  // Dropping the first uses of y one by one (what cse does to the oldest users first).
  before = ir_op_counts();
  for (Node* n : users) n->replace_input(0, x);
  CHECK(y->num_uses() == 3);  // the list's three
  CHECK(x->num_uses() == kN);
  CHECK(delta(before).use_slots_moved <= 2 * kN);
  check_use_lists(g);
  CHECK(x->uses()[0].user == users.front());
}

TEST_CASE("ir scale: num_nodes is kept up to date in O(nesting depth) per link") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32), "x");
  auto walked = [&] { return g.all_nodes().size(); };
  IrOpCounts before = ir_op_counts();
  std::vector<Node*> top = fan_out(g, x, kN);
  // One update per appended node in the top block: no walk.
  CHECK(delta(before).node_count_updates == kN);
  CHECK(g.num_nodes() == kN);

  // A node whose blocks are filled while it is detached brings their nodes along when inserted.
  Node* outer = g.create("prim.If", {x}, 0);
  Block* b0 = outer->add_block();
  Block* b1 = outer->add_block();
  b0->append(g.create("F.relu", {x}, 1));
  Node* inner = g.create("prim.Loop", {x}, 0);
  Block* ib = inner->add_block();
  ib->append(g.create("F.relu", {x}, 1));
  ib->append(g.create("F.relu", {x}, 1));
  b1->append(inner);  // b1 is not in the graph yet: num_nodes unchanged
  CHECK(g.num_nodes() == kN);
  outer->insert_before(top[10]);
  CHECK(g.num_nodes() == kN + 5);
  CHECK(g.num_nodes() == walked());
  // Linking into a nested block updates every enclosing block (here 3: ib, b1, top).
  before = ir_op_counts();
  ib->prepend(g.create("F.relu", {x}, 1));
  CHECK(delta(before).node_count_updates == 3);
  CHECK(g.num_nodes() == kN + 6);
  // Moving keeps the count; moving a node with blocks out of a nested block and back too.
  inner->move_before(top[0]);
  CHECK(g.num_nodes() == kN + 6);
  CHECK(b1->empty());
  inner->move_after(b1->param_node());
  CHECK(g.num_nodes() == walked());
  // Destroying a node in a nested block, then a node with nested blocks.
  ib->front()->destroy();
  CHECK(g.num_nodes() == kN + 5);
  outer->destroy();
  CHECK(g.num_nodes() == kN);
  for (size_t i = 0; i < kN; i += 2) top[i]->destroy();
  CHECK(g.num_nodes() == kN / 2);
  CHECK(g.num_nodes() == walked());
}

TEST_CASE("ir scale: appending and prepending 100k nodes never renumbers the block") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32), "x");
  IrOpCounts before = ir_op_counts();
  Node* first = g.insert("F.relu", {x}, 1, nullptr);
  for (size_t i = 0; i < kN; ++i) g.insert("F.relu", {x}, 1, nullptr);
  std::vector<Value*> consts;
  for (size_t i = 0; i < kN; ++i)
    consts.push_back(g.constant(int64_t(i), Type::of(Type::Kind::Int)));  // at the block's start
  CHECK(delta(before).nodes_renumbered == 0);
  CHECK(consts.back()->node() == g.block()->front());
  CHECK(consts.back()->node()->is_before(consts.front()->node()));
  CHECK(consts.front()->node()->is_before(first));
  CHECK(first->is_before(g.block()->back()));
}

TEST_CASE("ir scale: erasing 100k of 200k weights is O(200k) and keeps the order") {
  WeightStore w;
  for (size_t i = 0; i < 2 * kN; ++i) w.set("w" + std::to_string(i), Weight{});
  IrOpCounts before = ir_op_counts();
  for (size_t i = 0; i < 2 * kN; i += 2) CHECK(w.erase("w" + std::to_string(i)));
  CHECK(w.size() == kN);
  const auto& names = w.names();
  REQUIRE(names.size() == kN);
  CHECK(names.front() == "w1");
  CHECK(names[1] == "w3");
  CHECK(names.back() == "w" + std::to_string(2 * kN - 1));
  CHECK(delta(before).weight_slots_moved <= kN);
  // An erased name set again goes to the end.
  w.set("w0", Weight{});
  w.erase("w1");
  CHECK(w.names().front() == "w3");
  CHECK(w.names().back() == "w0");
}

TEST_CASE("ir scale: applying edits to k of n weights looks up O(k) names, not O(n)") {
  // Note [Weight-store slots]: the sweep over the order does not hash the names it keeps.
  const size_t n = 2 * kN;
  WeightStore w;
  for (size_t i = 0; i < n; ++i) w.set("w" + std::to_string(i), Weight{});
  WeightEdits e;
  std::vector<std::string> expected;
  for (size_t i = 0; i < n; ++i) {
    const std::string name = "w" + std::to_string(i);
    if (i % 16 == 0) {
      e.erase.insert(name);
    } else {
      expected.push_back(name);
    }
    // New entries after an erased entry (they take its place) and after a kept one.
    if (i % 32 == 0 || i % 32 == 5) {
      e.insert_after[name].emplace_back("new" + std::to_string(i), Weight{});
      expected.push_back("new" + std::to_string(i));
    }
  }
  const size_t edits = e.erase.size() + e.insert_after.size();
  IrOpCounts before = ir_op_counts();
  w.apply(std::move(e));
  IrOpCounts d = delta(before);
  CHECK(d.weight_lookups <= 4 * edits);  // 3 * n before the slots
  CHECK(edits * 8 <= n);
  CHECK(w.names() == expected);
  CHECK(w.size() == expected.size());
  CHECK(w.find("new0") != nullptr);
  CHECK(w.find("w16") == nullptr);
  // The slots stay right for later erasures and compactions, in the store and in a copy.
  WeightStore copy = w;
  CHECK(w.erase("w1"));
  CHECK(w.names().front() == "new0");
  CHECK(copy.erase("new0"));
  CHECK(copy.names().front() == "w1");
  CHECK(copy.names()[1] == "w2");
  copy.set("w1", Weight{});  // replaced in place
  CHECK(copy.names().front() == "w1");
  CHECK(copy.names().size() == expected.size() - 1);
}

TEST_CASE("ir scale: cse,dce over one value with 2N uses is O(N)") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {2}), "x");
  Value* one = g.constant(int64_t(1), Type::of(Type::Kind::Int));
  Value* one_b = g.constant(int64_t(1), Type::of(Type::Kind::Int));
  (void)one;
  for (size_t i = 0; i < kN; ++i) g.insert("torch.add", {x, x, one_b}, 1, nullptr);
  g.add_output(x);
  IrOpCounts before = ir_op_counts();
  Diagnostics d;
  PassManager pm(parse_pipeline("cse,dce"));
  pm.run(g, d);
  CHECK(g.num_nodes() == 0);
  CHECK(x->num_uses() == 1);  // the graph output
  IrOpCounts c = delta(before);
  CHECK(c.use_slots_moved + c.use_slots_scanned <= 4 * kN);
  CHECK(c.nodes_renumbered == 0);
  CHECK(verify_graph(g).empty());
}
