// exec/interpreter.h: how long the interpreter holds the values it computes (Note [Freeing values
// after their last use]).
#include "exec/interpreter.h"
#include "exec/seeded_rng.h"
#include "loaders/tir_parser.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

// %a is read inside the loop's body: it must live until the loop is done.
const char* kGraph = R"(graph @free(%x : f32[2], %n : int, %c : bool) {
  %true : bool = prim.Constant[value=true]()
  %a : Tensor = torch.sin(%x)
  %s : Tensor = prim.If(%c) {
    block0() {
      %t : Tensor = torch.cos(%a)
      return %t
    }
    block1() {
      %e : Tensor = torch.tanh(%a)
      return %e
    }
  }
  %y : Tensor = prim.Loop(%n, %true, %s) {
    block0(%i : int, %cy : Tensor) {
      %b : Tensor = torch.sin(%cy)
      %m : Tensor = torch.mul(%b, %a)
      return %true, %m
    }
  }
  %z : Tensor = torch.cos(%y)
  return %z
}
)";

using WeakTensor = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;

}  // namespace

TEST_CASE("interpreter: a value is released after its last use, results unchanged") {
  auto g = tt::parse_tir(kGraph, "test.tir");
  for (bool c : {true, false}) {
    CAPTURE(c);
    at::Tensor x = at::tensor({0.5f, -0.25f});
    at::Tensor a = x.sin();
    at::Tensor want = c ? a.cos() : a.tanh();
    for (int i = 0; i < 3; ++i) want = want.sin() * a;
    want = want.cos();

    tt::Interpreter interp(*g);
    std::vector<std::pair<std::string, WeakTensor>> seen;  // a, t or e, s, and b of every trip
    size_t a_alive_in_loop = 0, released_at_z = 0;
    const std::set<std::string> tracked{"a", "t", "e", "s", "b"};
    interp.on_value = [&](const tt::Value* v, const c10::IValue& iv) {
      const std::string& name = v->name();
      if (name == "m") a_alive_in_loop += !seen.at(0).second.expired();
      if (name == "z")
        for (const auto& [n, w] : seen) {
          CAPTURE(n);
          CHECK(w.expired());  // the run holds none of them any more
          released_at_z += w.expired();
        }
      if (iv.isTensor() && tracked.count(name))
        seen.emplace_back(name, WeakTensor(iv.toTensor().getIntrusivePtr()));
    };
    auto out = interp.run({x, int64_t{3}, c});
    REQUIRE(out.size() == 1);
    CHECK(at::allclose(out[0].toTensor(), want));
    REQUIRE(seen.size() == 1 + 2 + 3);  // a; t or e, s; b per trip
    CHECK(seen.at(0).first == "a");
    CHECK(a_alive_in_loop == 3);
    CHECK(released_at_z == seen.size());
  }
}

// Note [Random draws under --verify] (exec/seeded_rng.h): every run draws the same numbers, and
// the caller's global generator continues as if the run had not happened.
TEST_CASE("interpreter: random draws start from the verify seed, the caller's generator goes on") {
  auto g = tt::parse_tir(R"(graph @noise(%x : f32[4]) {
  %n : Tensor = torch.randn_like(%x)
  %y : Tensor = torch.add(%x, %n)
  return %y
}
)");
  tt::Interpreter in(*g);
  at::Tensor x = at::zeros({4});
  at::manual_seed(123);
  at::Tensor before = at::randn({3});
  at::Tensor expected_next = at::randn({3});
  at::manual_seed(123);
  CHECK(at::equal(at::randn({3}), before));
  at::Tensor a = in.run({x}).at(0).toTensor();
  at::Tensor b = in.run({x}).at(0).toTensor();
  CHECK(at::equal(a, b));  // both runs start from kVerifySeed
  at::manual_seed(static_cast<uint64_t>(tt::kVerifySeed));
  CHECK(at::equal(a, at::randn({4})));  // what a run of the original from that seed draws
  at::manual_seed(123);
  at::randn({3});
  in.run({x});
  CHECK(at::equal(at::randn({3}), expected_next));  // the caller's sequence is not disturbed

  // A run inside a run (a module op's lowered graph) draws on; it does not start over.
  at::Tensor outer_first, inner_first;
  {
    tt::SeededGlobalRng outer;
    outer_first = at::randn({4});
    tt::SeededGlobalRng inner;
    inner_first = at::randn({4});
  }
  CHECK(at::equal(outer_first, a - x));  // the outer scope starts from kVerifySeed
  CHECK_FALSE(at::equal(inner_first, outer_first));
}
