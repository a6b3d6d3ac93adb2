// known_complex's walk with a memo (Note [Complex values] in lib/ir/dtype_analysis.h): a pass that
// asks about every value of a chain of ops of unknown dtype looks at each value once, checked by
// an operation count (complex_walk_steps), not a time.
#include "ir/dtype_analysis.h"
#include "ir/ir.h"

#include <doctest/doctest.h>

using namespace tt;

namespace {

// x (dtype unknown) -> op -> op -> ... (n nodes); the last output is the graph's output.
std::vector<Node*> chain(Graph& g, const char* op, size_t n) {
  Value* v = g.add_input(Type::tensor(DType::Unknown), "x");
  std::vector<Node*> nodes;
  for (size_t i = 0; i < n; ++i) {
    nodes.push_back(g.insert(op, {v}, 1, nullptr));
    v = nodes.back()->output(0);
    v->set_type(Type::tensor(DType::Unknown));
  }
  g.add_output(v);
  return nodes;
}

}  // namespace

TEST_CASE(
    "dtype scale: FloatAnalysis over a 20k-op chain of unknown dtype looks at each value once") {
  constexpr size_t kN = 20000;
  Graph g;
  std::vector<Node*> nodes = chain(g, "aten::relu", kN);
  FloatAnalysis fa(g);
  uint64_t before = complex_walk_steps();
  for (Node* n : nodes) fa.visit(n);
  uint64_t steps = complex_walk_steps() - before;
  CHECK(steps <= 2 * kN + 2);  // without the memo: about kN^2 / 2
  CHECK(fa.of(nodes.back()->output(0)) == FloatKind::Unknown);
}

TEST_CASE("dtype scale: the memo keeps known_complex's answers") {
  Graph g;
  std::vector<Node*> nodes = chain(g, "aten::relu", 4);
  Node* c = g.insert("aten::view_as_complex", {nodes.back()->output(0)}, 1, nullptr);
  c->output(0)->set_type(Type::tensor(DType::Unknown));
  Node* r = g.insert("aten::neg", {c->output(0)}, 1, nullptr);
  r->output(0)->set_type(Type::tensor(DType::Unknown));
  ComplexMemo memo;
  CHECK_FALSE(known_complex(nodes.back()->output(0), &memo));
  CHECK(known_complex(r->output(0), &memo));  // follows its complex operand
  CHECK(known_complex(c->output(0), &memo));
  CHECK_FALSE(known_complex(nodes.front()->output(0), &memo));
  CHECK(known_complex(r->output(0)) == known_complex(r->output(0), &memo));
}
