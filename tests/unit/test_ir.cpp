// Graph API invariants: use lists, ordering, destruction, names.
#include "ir/ir.h"
#include "support/diag.h"

#include <doctest/doctest.h>

using namespace tt;

TEST_CASE("ir: use lists follow every mutation") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32), "x");
  Node* a = g.insert("F.relu", {x}, 1, nullptr);
  Node* b = g.insert("torch.add", {a->output(), x}, 1, nullptr);
  g.add_output(b->output());
  CHECK(x->num_uses() == 2);
  CHECK(a->output()->num_uses() == 1);

  // Given %b = add(%a, %x); Execute a.rauw(x); Result add(%x, %x), %a dead.
  a->output()->replace_all_uses_with(x);
  CHECK(x->num_uses() == 3);
  CHECK(b->input(0) == x);
  CHECK_FALSE(a->output()->has_uses());
  a->destroy();
  CHECK(x->num_uses() == 2);
  CHECK(g.num_nodes() == 1);

  b->remove_input(0);
  CHECK(b->num_inputs() == 1);
  CHECK(x->uses()[0].index == 0);  // indices shift down
  b->insert_input(0, x);
  CHECK(b->num_inputs() == 2);
  for (const Use& u : x->uses()) CHECK(u.user->input(u.index) == x);
}

TEST_CASE("ir: destroying a used value is refused") {
  Graph g;
  Value* x = g.add_input(Type::tensor(), "x");
  Node* a = g.insert("F.relu", {x}, 1, nullptr);
  g.add_output(a->output());
  CHECK_THROWS_AS(a->destroy(), Error);
}

TEST_CASE("ir: order numbers survive many insertions at one spot") {
  Graph g;
  Value* x = g.add_input(Type::tensor(), "x");
  Node* first = g.insert("F.relu", {x}, 1, nullptr);
  Node* last = g.insert("F.relu", {x}, 1, nullptr);
  Node* pos = last;
  for (int i = 0; i < 200; ++i) {
    Node* n = g.create("F.relu", {x}, 1);
    n->insert_before(pos);
    pos = n;  // always insert right after `first`
  }
  CHECK(first->is_before(pos));
  CHECK(pos->is_before(last));
  int count = 0;
  for (Node* n = g.block()->front(); n && n->next(); n = n->next(), ++count)
    CHECK(n->is_before(n->next()));
  CHECK(count == 201);
  last->move_before(first);
  CHECK(last->is_before(first));
  CHECK(g.block()->front() == last);
}

TEST_CASE("ir: names are unique and sanitized") {
  Graph g;
  Value* a = g.add_input(Type::tensor(), sanitize_name("input.1"));
  Value* b = g.add_input(Type::tensor(), sanitize_name("input.3"));
  CHECK(a->name() == "input");
  CHECK(b->name() == "input_1");
  CHECK(sanitize_name("25") == "");
  CHECK(sanitize_name("self.layer1") == "self_layer1");
  Value* c = g.add_input(Type::tensor());
  CHECK(!c->name().empty());
  CHECK(g.find_value("input_1") == b);
}

TEST_CASE("ir: nested blocks are destroyed with their node") {
  Graph g;
  Value* x = g.add_input(Type::tensor(), "x");
  Node* iff = g.insert("prim.If", {x}, 1, nullptr);
  Block* t = iff->add_block();
  Node* inner = g.create("F.relu", {x}, 1);
  t->append(inner);
  t->add_output(inner->output());
  Block* e = iff->add_block();
  e->add_output(x);
  CHECK(x->num_uses() == 3);
  CHECK(g.num_nodes() == 2);
  CHECK(g.all_nodes().size() == 2);
  iff->destroy();
  CHECK(x->num_uses() == 0);
}

TEST_CASE("ir: types and attributes print canonically") {
  CHECK(Type::tensor(DType::F32, {1, -1, 3}).str() == "f32[1,?,3]");
  CHECK(Type::tensor().str() == "Tensor");
  CHECK(Type::list(Type::of(Type::Kind::Int)).str() == "List[int]");
  CHECK(Type::tuple({Type::tensor(), Type::of(Type::Kind::Int)}).str() == "Tuple[Tensor, int]");
  CHECK(attr_str(AttrValue{0.1}) == "0.1");
  CHECK(attr_str(AttrValue{2.0}) == "2.0");
  CHECK(attr_str(AttrValue{int64_t(-3)}) == "-3");
  CHECK(attr_str(AttrValue{std::vector<int64_t>{1, 2}}) == "[1,2]");
  CHECK(attr_str(AttrValue{DType::I64}) == "i64");
  CHECK(attr_str(AttrValue{std::string("a\"b")}) == "\"a\\\"b\"");
  Attrs a;
  a.set("k", int64_t(3));
  a.set("k", int64_t(4));
  CHECK(a.size() == 1);
  CHECK(a.get_int("k") == 4);
  CHECK(a.get_float("k") == 4.0);
}
