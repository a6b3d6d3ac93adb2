// Graph API invariants: use lists, ordering, destruction, names.
#include "ir/ir.h"
#include "support/diag.h"

#include <doctest/doctest.h>

#include <memory>
#include <set>

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

TEST_CASE("ir: a node's op, module, scope and location are kept once per graph") {
  // Note [Interned node strings]: nodes of one graph share one copy of each string; a node
  // copying another graph's provenance gets its own graph's copy, so it outlives the other graph.
  Graph g;
  Node* a = g.insert("aten::relu", {}, 0, nullptr);
  Node* b = g.insert("aten::relu", {}, 0, nullptr);
  std::string scope = "encoder.layers.123.self_attn";  // longer than a short string's buffer
  a->set_scope(scope);
  b->set_scope(scope);
  a->set_loc("transformer.py:417");
  b->set_module("encoder.layers.123.self_attn.out_proj");
  CHECK(&a->scope() == &b->scope());
  CHECK(&a->op() == &b->op());
  CHECK(a->scope() == scope);
  CHECK(b->loc().empty());
  CHECK(a->module().empty());
  CHECK(b->module() == "encoder.layers.123.self_attn.out_proj");
  b->set_scope("");
  CHECK(b->scope().empty());
  CHECK(a->scope() == scope);  // a rename of one node leaves the other alone
  b->set_op("aten::sigmoid");
  CHECK(b->op() == "aten::sigmoid");
  CHECK(a->is("aten::relu"));
  Graph h;
  Node* c = h.insert("aten::relu", {}, 0, nullptr);
  {
    auto other = std::make_unique<Graph>();
    Node* d = other->insert("aten::relu", {}, 0, nullptr);
    d->set_scope(scope + ".x");
    d->set_loc("other.py:1");
    c->copy_provenance(d);
    CHECK(&c->scope() != &d->scope());
  }  // the other graph and its strings are gone
  CHECK(c->scope() == scope + ".x");
  CHECK(c->loc() == "other.py:1");
  b->copy_provenance(a);  // the same graph: the same string
  CHECK(&b->scope() == &a->scope());
  CHECK(b->loc() == "transformer.py:417");
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

// Note [Numbered names]: numbered names live in a vector, the rest in a map; which names are
// taken must not depend on where they are kept.
TEST_CASE("ir: numbered names, near and far, are taken and freed like any other") {
  Graph g;
  Value* n0 = g.add_input(Type::tensor());  // unnamed: "0"
  CHECK(n0->name() == "0");
  Value* h2 = g.add_input(Type::tensor(), "2");  // a numbered hint ahead of the counter
  CHECK(h2->name() == "2");
  Value* n1 = g.add_input(Type::tensor());
  Value* n3 = g.add_input(Type::tensor());  // skips the "2" the hint took
  CHECK(n1->name() == "1");
  CHECK(n3->name() == "3");
  Value* again = g.add_input(Type::tensor(), "2");  // taken: a suffix
  CHECK(again->name() == "2_1");
  Value* zero = g.add_input(Type::tensor(), "007");  // a leading zero: not a number
  CHECK(zero->name() == "007");
  Value* far = g.add_input(Type::tensor(), "99999999");  // far past the counter: the map
  CHECK(far->name() == "99999999");
  Value* huge = g.add_input(Type::tensor(), "123456789012345678901234");
  CHECK(huge->name() == "123456789012345678901234");
  for (Value* v : {n0, n1, h2, n3, again, zero, far, huge}) CHECK(g.find_value(v->name()) == v);
  CHECK(g.find_value("4") == nullptr);
  CHECK(g.find_value("99999998") == nullptr);
  CHECK(g.find_value("07") == nullptr);
  // Renaming frees the old name (a number, the far one) for the next value that asks.
  h2->set_name("x");
  far->set_name("y");
  CHECK(g.find_value("2") == nullptr);
  CHECK(g.find_value("99999999") == nullptr);
  CHECK(g.add_input(Type::tensor(), "2")->name() == "2");
  CHECK(g.add_input(Type::tensor(), "99999999")->name() == "99999999");
  CHECK(g.add_input(Type::tensor(), "99999999")->name() == "99999999_1");
  // A far number stays taken after the counter's vector grows past it.
  Graph h;
  Value* early = h.add_input(Type::tensor(), "70000");
  for (int i = 0; i < 70005; ++i) h.add_input(Type::tensor());
  CHECK(h.find_value("70000") == early);
  std::set<std::string> names;
  for (Value* v : h.inputs()) CHECK(names.insert(v->name()).second);
  CHECK(h.find_value("70005") == h.inputs().back());
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
