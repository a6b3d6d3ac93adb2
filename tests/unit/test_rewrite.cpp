// The rewrite toolkit (lib/ir/rewrite.h): walk order into nested blocks and walks that destroy
// nodes, check-then-apply patterns and their rejections, weight-store edits that keep the order,
// and the float analysis of the quantization passes (lib/ir/dtype_analysis.h).
#include "ir/dtype_analysis.h"
#include "ir/printer.h"
#include "ir/rewrite.h"
#include "loaders/tir_parser.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tt;

namespace {

// A graph with an If (two blocks) inside a Loop, nodes before, between and after.
const char* kNested = R"(graph @nested(%x : f32[2], %n : int, %c : bool) {
  %true : bool = prim.Constant[value=true]()
  %a : Tensor = F.relu(%x)
  %y : Tensor = prim.Loop(%n, %true, %a) {
    block0(%i : int, %cy : Tensor) {
      %b : Tensor = torch.exp(%cy)
      %p : Tensor = prim.If(%c) {
        block0() {
          %t : Tensor = F.relu(%b)
          return %t
        }
        block1() {
          %e : Tensor = torch.neg(%b)
          return %e
        }
      }
      %m : Tensor = torch.mul(%p, %b)
      return %true, %m
    }
  }
  %z : Tensor = torch.exp(%y)
  return %z
}
)";

std::string first_name(const Node* n) { return n->num_outputs() ? n->output()->name() : "-"; }

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

struct Entry {
  std::string rule, node, why;  // why empty: a rewrite
};

// Records what a Rewriter reports.
class TestLog : public RewriteLog {
 public:
  void rewrite(const char* rule, const Node* n) override {
    entries.push_back({rule, first_name(n), ""});
  }
  void reject(const char* rule, const Node* n, const char* why) override {
    entries.push_back({rule, first_name(n), why});
  }
  std::vector<Entry> entries;
};

Weight w(float v) { return Weight{at::full({1}, v), true}; }

}  // namespace

TEST_CASE("walk_pre visits nested blocks in program order") {
  auto g = parse_tir(kNested);
  std::vector<std::string> seen;
  walk_pre(g->block(), [&](Node* n) {
    seen.push_back(first_name(n));
    return true;
  });
  CHECK(join(seen) == "true a y b p t e m z");
  // Same order as Graph::all_nodes (pre-order).
  std::vector<std::string> all;
  for (const Node* n : g->all_nodes()) all.push_back(first_name(n));
  CHECK(join(all) == join(seen));

  // Not descending into the If skips both of its blocks only.
  seen.clear();
  walk_pre(g->block(), [&](Node* n) {
    seen.push_back(first_name(n));
    return !n->is("prim.If");
  });
  CHECK(join(seen) == "true a y b p m z");
}

TEST_CASE("walk calls post after the nested blocks") {
  auto g = parse_tir(kNested);
  std::vector<std::string> events;
  walk(
      g->block(),
      [&](Node* n) {
        events.push_back("+" + first_name(n));
        return !n->blocks().empty();  // post only for nodes with blocks
      },
      [&](Node* n) { events.push_back("-" + first_name(n)); });
  CHECK(join(events) == "+true +a +y +b +p +t +e -p +m -y +z");
}

TEST_CASE("walk survives destroying the visited node") {
  auto g = parse_tir(R"(graph @dead(%x : f32[2]) {
  %a : Tensor = F.relu(%x)
  %b : Tensor = torch.exp(%x)
  %c : Tensor = torch.neg(%x)
  %d : Tensor = torch.exp(%c)
  return %a
}
)");
  std::vector<std::string> seen;
  // Forward: %b dies on its visit; %d too, and %c (whose only user was %d) after it.
  walk_pre(g->block(), [&](Node* n) {
    seen.push_back(first_name(n));
    if (n->is("torch.exp")) {
      Node* p = n->input(0)->node();
      n->destroy();
      if (p->is("torch.neg") && !p->output()->has_uses()) p->destroy();  // an earlier node
      return false;
    }
    return true;
  });
  CHECK(join(seen) == "a b c d");
  CHECK(g->block()->size() == 1);
  CHECK(g->block()->front()->is("F.relu"));
}

TEST_CASE("any_node looks into nested blocks") {
  auto g = parse_tir(kNested);
  CHECK(any_node(g->block(), [](const Node* n) { return n->is("torch.neg"); }));
  CHECK_FALSE(any_node(g->block(), [](const Node* n) { return n->is("torch.sin"); }));
}

TEST_CASE("Rewriter: a rejected check leaves the graph unchanged") {
  auto g = parse_tir(kNested);
  const std::string before = print_graph(*g);
  TestLog log;
  Rewriter rw(log);
  bool applied_any = false;
  // relu(x) -> x, only when x is a graph input: the check rejects the relu inside the If.
  auto check = [&](Node* n) -> Match<Value*> {
    if (!n->is("F.relu")) return {};
    if (n->input(0)->node() != g->block()->param_node())
      return Reject("input is not a graph input");
    if (n->output()->num_uses() != 1) return Reject(std::string("has ") + "other uses");
    return n->input(0);
  };
  walk_pre(g->block(), [&](Node* n) {
    if (!n->is("F.relu") || n->input(0)->node() == g->block()->param_node()) return true;
    applied_any |= rw.run("relu", n, check(n), [&](Value*) { FAIL("apply after a rejection"); });
    return true;
  });
  CHECK_FALSE(applied_any);
  CHECK(print_graph(*g) == before);
  REQUIRE(log.entries.size() == 1);
  CHECK(log.entries[0].rule == "relu");
  CHECK(log.entries[0].node == "t");
  CHECK(log.entries[0].why == "input is not a graph input");

  // A match runs apply; a node that is not the pattern's records nothing.
  log.entries.clear();
  walk_pre(g->block(), [&](Node* n) {
    bool top = n->is("F.relu") && n->input(0)->node() == g->block()->param_node();
    return !rw.run("relu", n, top ? check(n) : Match<Value*>(), [&](Value* src) {
      rw.rewrite("relu", n);
      n->output()->replace_all_uses_with(src);
      n->destroy();
    });
  });
  REQUIRE(log.entries.size() == 1);
  CHECK(log.entries[0].why == "");
  CHECK(log.entries[0].node == "a");
  CHECK(print_graph(*g).find("F.relu(%x)") == std::string::npos);
  CHECK(print_graph(*g).find("F.relu(%b)") != std::string::npos);

  // The one helper returns the Reject, a "no match" for any Match<T>; a made-up text survives.
  Match<int> m = rw.reject("r", g->block()->front(), Reject(std::string("made ") + "up"));
  CHECK(m.rejected());
  CHECK_FALSE(m.matched());
  CHECK(std::string(m.why()) == "made up");
  CHECK(log.entries.back().why == "made up");
}

TEST_CASE("WeightStore::apply keeps the order") {
  WeightStore s;
  for (const char* n : {"a.weight", "bn.weight", "bn.bias", "c.weight", "d"}) s.set(n, w(1));
  WeightEdits e;
  e.erase = {"bn.weight", "bn.bias"};
  e.insert_after["a.weight"].emplace_back("a.bias", w(2));
  e.insert_after["a.weight"].emplace_back("a.bias_1", w(3));
  e.insert_after["bn.bias"].emplace_back("x", w(4));  // after an erased entry: where it was
  e.rename["c.weight"] = "c.renamed";
  s.apply(std::move(e));
  CHECK(s.names() ==
        std::vector<std::string>{"a.weight", "a.bias", "a.bias_1", "x", "c.renamed", "d"});
  CHECK(s.at("a.bias_1").tensor.item<float>() == 3.0f);
  CHECK_FALSE(s.has("c.weight"));

  // WeightStore::set's meaning: a name written twice keeps its first place, its last value.
  WeightStore t;
  t.set("p", w(1));
  t.set("q", w(2));
  WeightEdits r;
  r.rename["p"] = "q";
  t.apply(std::move(r));
  CHECK(t.names() == std::vector<std::string>{"q"});
  CHECK(t.at("q").tensor.item<float>() == 2.0f);

  WeightStore u;
  u.set("k", w(1));
  u.apply(WeightEdits{});
  CHECK(u.names() == std::vector<std::string>{"k"});
}

TEST_CASE("float analysis") {
  CHECK(is_float_dtype(DType::BF16));
  CHECK_FALSE(is_float_dtype(DType::I64));
  CHECK(may_be_float_tensor(Type::tensor()));
  CHECK(may_be_float_tensor(Type::tensor(DType::F16)));
  CHECK_FALSE(may_be_float_tensor(Type::tensor(DType::Bool)));
  CHECK_FALSE(may_be_float_tensor(Type::any()));
  CHECK(float_kind_of_type(Type::of(Type::Kind::Int)) == FloatKind::NotFloat);
  CHECK(float_kind_of_type(Type::any()) == FloatKind::Unknown);
  CHECK(float_kind_of_type(Type::tensor(DType::F32)) == FloatKind::Float);

  auto g = parse_tir(R"(graph @kinds(%x : Tensor, %n : int, %h : float) {
  %false : bool = prim.Constant[value=false]()
  %none : None = prim.Constant[value=none]()
  %i64 : ScalarType = prim.Constant[value=i64]()
  %w : Tensor = prim.GetAttr() @value=w
  %k : Tensor = prim.GetAttr() @value=k
  %l : Tensor = nn.Linear[in_features=2, out_features=2, bias=false](%x) @weight=w #module=lin
  %am : Tensor = torch.argmax(%l, %n, %false)
  %gt : Tensor = torch.gt(%l, %h)
  %li : Tensor = Tensor.to(%l, %i64, %false, %false, %none)
  %ta : Tensor = Tensor.type_as(%l, %li)
  %ki : Tensor = torch.add(%k, %k, %n)
  %kf : Tensor = torch.mul(%k, %h)
  %u : Tensor = torch.add(%x, %x, %n)
  %v : Tensor, %ix : Tensor = torch.topk(%l, %n, %n, %false, %false)
  %t : Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor] = prim.TupleConstruct(%am, %gt, %li, %ta, %ki, %kf, %u, %l)
  return %t
}
weights {
  w : f32[2,2] param
  k : i64[2] buffer
}
)");
  FloatAnalysis fa(*g);
  walk_pre(g->block(), [&](Node* n) {
    fa.visit(n);
    return true;
  });
  auto kind = [&](const char* name) { return fa.of(g->find_value(name)); };
  CHECK(kind("x") == FloatKind::Unknown);  // an input of unknown dtype
  CHECK(kind("n") == FloatKind::NotFloat);
  CHECK(kind("w") == FloatKind::Float);  // from the weight
  CHECK(kind("k") == FloatKind::NotFloat);
  CHECK(kind("l") == FloatKind::Float);  // a module output
  CHECK(kind("am") == FloatKind::NotFloat);
  CHECK(kind("gt") == FloatKind::NotFloat);
  CHECK(kind("li") == FloatKind::NotFloat);  // to(int64)
  CHECK(kind("ta") == FloatKind::NotFloat);  // type_as an int tensor
  CHECK(kind("ki") == FloatKind::NotFloat);  // int + int
  CHECK(kind("kf") == FloatKind::Float);     // int * float number
  CHECK(kind("u") == FloatKind::Unknown);    // follows an unknown operand
  fa.set(g->find_value("u"), FloatKind::Float);
  CHECK(kind("u") == FloatKind::Float);

  // The producing op's answer, without the walk.
  CHECK(known_not_float(g->find_value("am")));
  CHECK(known_not_float(g->find_value("gt")));
  CHECK(known_not_float(g->find_value("li")));
  CHECK(known_not_float(g->find_value("ta")));  // through type_as's other operand
  CHECK_FALSE(known_not_float(g->find_value("l")));
  CHECK_FALSE(known_not_float(g->find_value("x")));
  CHECK_FALSE(known_not_float(g->find_value("ki")));  // the walk knows; the op alone does not
  CHECK(known_not_float(g->find_value("ix")));        // topk's indices
  CHECK_FALSE(known_not_float(g->find_value("v")));
}
