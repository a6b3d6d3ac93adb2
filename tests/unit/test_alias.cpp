// exec/alias.h: which results may share memory with which inputs, which nodes write in place,
// and the memory a graph writes (Note [In-place writes]).
#include "exec/alias.h"
#include "loaders/tir_parser.h"

#include <doctest/doctest.h>

#if defined(__SANITIZE_ADDRESS__)  // GCC
#define TT_TEST_ASAN 1
#elif defined(__has_feature)  // Clang
#if __has_feature(address_sanitizer)
#define TT_TEST_ASAN 1
#endif
#endif

namespace tt {
namespace {

std::unique_ptr<Graph> parse(const char* text) { return parse_tir(text, "test.tir"); }

const Node* node_of(const Graph& g, const char* value) { return g.find_value(value)->node(); }

}  // namespace

TEST_CASE("alias: views, containers and identity-like ops may return an input's memory") {
  CHECK(aten_may_return_alias("aten::slice.Tensor"));
  CHECK(aten_may_return_alias("aten::view"));
  CHECK(aten_may_return_alias("aten::chunk"));       // Tensor(a)[]
  CHECK(aten_may_return_alias("aten::contiguous"));  // self when already contiguous
  CHECK(aten_may_return_alias("aten::dropout"));  // input itself in eval, whatever the schema says
  CHECK(aten_may_return_alias("aten::type_as"));
  CHECK(aten_may_return_alias("aten::relu_"));  // returns self
  CHECK_FALSE(aten_may_return_alias("aten::relu"));
  CHECK_FALSE(aten_may_return_alias("aten::add.Tensor"));
  CHECK_FALSE(aten_may_return_alias("aten::clone"));
  CHECK(aten_may_return_alias("aten::no_such_op"));  // unknown: the worst is assumed
  // torch.dequantize(x) of a float tensor is x itself, though no schema of dequantize says so.
  CHECK(aten_may_return_alias("aten::dequantize.self"));
  CHECK(aten_may_return_alias("aten::dequantize.tensors"));  // each float tensor of the list
}

TEST_CASE("alias: aliased inputs follow the schema, not every argument") {
  auto g = parse(R"(graph @g(%x : f32[2,3], %y : f32[2,3]) {
  %one : int = prim.Constant[value=1]()
  %z : f32[2,3] = Tensor.add(%x, %y, %one)
  %w : f32[2,3] = aten::add_.Tensor(%z, %y, %one)
  %v : f32[3,2] = Tensor.expand_as(%w, %x)
  %l : List[Tensor] = prim.ListConstruct(%x, %y)
  %r : f32[2,3] = nn.ReLU[inplace=true](%z) #module=relu
  %s : f32[2,3] = nn.ReLU[inplace=false](%z) #module=relu2
  %d : f32[2,3] = aten::dequantize.self(%x)
  return %v
})");
  CHECK(aliased_inputs(*node_of(*g, "d")) == std::vector<size_t>{0});
  CHECK(aliased_inputs(*node_of(*g, "z")).empty());
  CHECK(aliased_inputs(*node_of(*g, "w")) == std::vector<size_t>{0});  // not the other operand
  CHECK(aliased_inputs(*node_of(*g, "v")) == std::vector<size_t>{0});  // not `other`
  CHECK(aliased_inputs(*node_of(*g, "l")) == std::vector<size_t>{0, 1});
  CHECK(aliased_inputs(*node_of(*g, "r")) == std::vector<size_t>{0});
  CHECK(aliased_inputs(*node_of(*g, "s")).empty());
  CHECK(written_inputs(*node_of(*g, "w")) == std::vector<size_t>{0});
  CHECK(written_inputs(*node_of(*g, "z")).empty());
}

TEST_CASE("alias: out= overloads write their out argument") {
  auto g = parse(R"(graph @g(%x : f32[2,3], %c : f32[2,3]) {
  %one : int = prim.Constant[value=1]()
  %o : f32[2,3] = aten::add.out(%x, %x, %one, %c)
  return %o
})");
  CHECK(written_inputs(*node_of(*g, "o")) == std::vector<size_t>{3});
}

TEST_CASE("alias: mutated_memory holds the written tensor, its base and its other views") {
  auto g = parse(R"(graph @g(%x : f32[4,3]) {
  %two : int = prim.Constant[value=2]()
  %y : f32[4,3] = Tensor.mul(%x, %two)
  %zero : int = prim.Constant[value=0]()
  %one : int = prim.Constant[value=1]()
  %a : f32[1,3] = Tensor.slice(%y, %zero, %zero, %one, %one)
  %b : f32[2,3] = Tensor.slice(%y, %zero, %one, %two, %one)
  %w : f32[1,3] = aten::exp_.default(%a)
  %u : f32[4,3] = Tensor.add(%y, %x, %one)
  %t : Tuple[Tensor, Tensor] = prim.TupleConstruct(%y, %u)
  return %t
})");
  auto m = mutated_memory(*g);
  for (const char* v : {"a", "y", "b", "w", "t"}) CHECK_MESSAGE(m.contains(g->find_value(v)), v);
  for (const char* v : {"x", "u"}) CHECK_MESSAGE(!m.contains(g->find_value(v)), v);
  CHECK(m.size() == 5);  // and nothing else: not the constants either
}

TEST_CASE("alias: a value of another graph is not in a graph's mutated memory") {
  // Values are kept by serial, and serials are per graph: the same serial in another graph is
  // another value.
  const char* text = R"(graph @g(%x : f32[4,3]) {
  %two : int = prim.Constant[value=2]()
  %y : f32[4,3] = Tensor.mul(%x, %two)
  %w : f32[4,3] = aten::exp_.default(%y)
  return %y
})";
  auto g = parse(text);
  auto h = parse(text);
  auto m = mutated_memory(*g);
  REQUIRE(m.contains(g->find_value("y")));
  REQUIRE(h->find_value("y")->serial() == g->find_value("y")->serial());
  CHECK_FALSE(m.contains(h->find_value("y")));
  CHECK_FALSE(m.contains(h->find_value("w")));
}

TEST_CASE("alias: a value made after mutated_memory is not in it, even at a freed address") {
  // A pass keeps the set across its rewrites. When it destroys a written value and then makes a
  // new one, the allocator may hand the new value the old address: the set must still say no, or
  // whether the pass rewrites would depend on the allocator (fold-constants did, issue #22).
  auto g = parse(R"(graph @g(%x : f32[4,3]) {
  %two : int = prim.Constant[value=2]()
  %y : f32[4,3] = Tensor.mul(%x, %two)
  %w : f32[4,3] = aten::exp_.default(%y)
  return %y
})");
  auto m = mutated_memory(*g);
  Value* w = g->find_value("w");
  REQUIRE(m.contains(w));
  const void* freed = w;
  w->node()->destroy();
  bool reused = false;
  for (int i = 0; i < 64 && !reused; ++i) {
    Value* c = g->constant(int64_t(i), Type::of(Type::Kind::Int));
    CHECK_FALSE(m.contains(c));
    reused = static_cast<const void*>(c) == freed;
  }
#ifndef TT_TEST_ASAN  // ASan's quarantine never hands a freed address back this soon
  CHECK_MESSAGE(reused, "the allocator never reused the address: the case above proved nothing");
#endif
  CHECK(m.contains(g->find_value("y")));
}

}  // namespace tt
