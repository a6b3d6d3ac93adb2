// Import pipelines (Note [Import pipeline] in lib/loaders/loader.h): the import passes' registry,
// the ONNX loader's pipeline, and fuse-activations checked numerically with the interpreter (the
// fused graph computes what the graph the ONNX loader lifts computes).
#include "driver/passes_cli.h"
#include "exec/interpreter.h"
#include "ir/verifier.h"
#include "loaders/loader.h"
#include "loaders/tir_parser.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include "source_dir.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

using namespace tt;

namespace {

// What the ONNX loader lifts for SiLU, Hardswish and erf GELU (and a gate it must leave alone),
// plus a weight only a dead node reads.
const char* kLifted = R"(graph @acts(%x : f32[2,3,4], %z : f32[2,3,4]) {
  %s : f32[2,3,4] = torch.sigmoid(%x)
  %silu : f32[2,3,4] = torch.mul(%x, %s) #scope=a
  %h : f32[2,3,4] = F.hardsigmoid(%silu)
  %hswish : f32[2,3,4] = torch.mul(%h, %silu) #scope=b
  %sqrt2 : float = prim.Constant[value=1.4142135381698608]()
  %d : f32[2,3,4] = torch.div(%hswish, %sqrt2)
  %e : f32[2,3,4] = torch.erf(%d)
  %one : float = prim.Constant[value=1.0]()
  %alpha : int = prim.Constant[value=1]()
  %a : f32[2,3,4] = torch.add(%e, %one, %alpha)
  %p : f32[2,3,4] = torch.mul(%hswish, %a)
  %half : float = prim.Constant[value=0.5]() #scope=c
  %gelu : f32[2,3,4] = torch.mul(%p, %half) #scope=c
  %sz : f32[2,3,4] = torch.sigmoid(%z)
  %other : f32[2,3,4] = torch.mul(%gelu, %sz)
  %w : Tensor = prim.GetAttr() @value=unused
  %dead : f32[2,3,4] = torch.add(%x, %w, %alpha)
  %k1 : Tensor = prim.GetAttr() @value=kept
  %k2 : Tensor = prim.GetAttr() @value=kept2
  %o1 : f32[2,3,4] = torch.add(%other, %k1, %alpha)
  %o2 : f32[2,3,4] = torch.add(%o1, %k2, %alpha)
  return %o2
}
weights {
  kept : f32[1] param = [0.25]
  unused : f32[2,3,4] buffer
  kept2 : f32[1] param = [-1.5]
}
)";

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> ops;
  for (Node* n : g.all_nodes()) ops.push_back(n->op());
  return ops;
}

bool has_op(const Graph& g, const std::string& op) {
  auto ops = ops_of(g);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace

TEST_CASE("import passes: registered apart from all_passes, one file each, listed on their own") {
  REQUIRE(!import_passes().empty());
  for (const auto& p : import_passes()) {
    std::string file = p.name;
    for (char& ch : file)
      if (ch == '-') ch = '_';
    std::ifstream in(std::string(TT_SOURCE_DIR) + "/passes/" + file + ".cpp");
    CHECK_MESSAGE(in.good(),
                  "import pass '" << p.name << "' has no file passes/" << file << ".cpp");
    CHECK(std::string(p.summary).size() > 10);
    CHECK(find_pass(p.name) == &p);
    for (const auto& q : all_passes()) CHECK(std::string(q.name) != p.name);
  }
  // The ONNX loader's import pipeline parses and names registered passes only.
  Pipeline onnx = parse_pipeline(kOnnxImportPipeline);
  CHECK(onnx.str() == "fuse-activations,dce,prune-weights");
  std::ostringstream list;
  print_pass_list(list);
  std::string s = list.str();
  size_t section = s.find("Import passes");
  REQUIRE(section != std::string::npos);
  for (const auto& p : import_passes()) CHECK(s.find(p.name, section) != std::string::npos);
}

TEST_CASE("import pipeline: the ONNX one fuses, sweeps and prunes, and computes the same") {
  auto lifted = parse_tir(kLifted);
  auto g = parse_tir(kLifted);
  Diagnostics diags;
  run_import_pipeline(kOnnxImportPipeline, *g, diags);
  CHECK(diags.size() == 0);
  CHECK(verify_graph(*g).empty());

  // Fused in place: the values keep their names and scopes.
  REQUIRE(g->find_value("silu"));
  CHECK(g->find_value("silu")->node()->op() == "F.silu");
  CHECK(g->find_value("silu")->node()->scope() == "a");
  CHECK(g->find_value("hswish")->node()->op() == "F.hardswish");
  CHECK(g->find_value("hswish")->node()->scope() == "b");
  Node* gelu = g->find_value("gelu")->node();
  CHECK(gelu->op() == "F.gelu");
  CHECK(gelu->scope() == "c");
  REQUIRE(gelu->num_inputs() == 2);
  CHECK(gelu->input(0) == g->find_value("hswish"));
  REQUIRE(gelu->input(1)->constant());
  CHECK(std::get<std::string>(*gelu->input(1)->constant()) == "none");
  CHECK(gelu->input(1)->node()->scope() == "c");
  // sigmoid(z) gates gelu, not z: left alone. The gate, erf chain and dead node are gone.
  CHECK(g->find_value("other")->node()->op() == "torch.mul");
  CHECK(g->find_value("sz"));
  for (const char* gone : {"s", "h", "d", "e", "a", "p", "dead", "w", "sqrt2"})
    CHECK_MESSAGE(!g->find_value(gone), gone);
  CHECK(!has_op(*g, "torch.erf"));
  CHECK(!has_op(*g, "F.hardsigmoid"));
  // Only the weight nobody reads goes; the others keep their order.
  CHECK(g->weights().names() == std::vector<std::string>{"kept", "kept2"});

  // Numerically the same as the graph the loader lifted.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(13);
  at::Tensor x = at::randn({2, 3, 4}, gen, at::kFloat) * 3;
  at::Tensor z = at::randn({2, 3, 4}, gen, at::kFloat);
  auto want = Interpreter(*lifted).run({x, z});
  auto got = Interpreter(*g).run({x, z});
  REQUIRE(want.size() == 1);
  REQUIRE(got.size() == 1);
  CHECK(at::allclose(got[0].toTensor(), want[0].toTensor(), 1e-5, 1e-6));
}

TEST_CASE("import pipeline: fuse-activations leaves x*sigmoid(y) and a gate with a second use") {
  auto g = parse_tir(R"(graph @gates(%x : f32[4], %y : f32[4]) {
  %sy : f32[4] = torch.sigmoid(%y)
  %m1 : f32[4] = torch.mul(%x, %sy)
  %sx : f32[4] = torch.sigmoid(%x)
  %m2 : f32[4] = torch.mul(%x, %sx)
  %alpha : int = prim.Constant[value=1]()
  %r : f32[4] = torch.add(%m1, %sx, %alpha)
  %t : Tuple[Tensor, Tensor] = prim.TupleConstruct(%r, %m2)
  return %t
}
)");
  Diagnostics diags;
  PassContext ctx(diags);
  CHECK(!run_fuse_activations(*g, ctx));
  CHECK(g->find_value("m1")->node()->op() == "torch.mul");
  CHECK(g->find_value("m2")->node()->op() == "torch.mul");
  // Empty text: nothing runs.
  run_import_pipeline("", *g, diags);
  CHECK(g->find_value("sy"));
}

TEST_CASE("import pipeline: the TorchScript one turns shape arithmetic into ints, same values") {
  CHECK(parse_pipeline(kTorchScriptImportPipeline).str() == "int-shapes");
  // Every op int-shapes rewrites, on values that go negative for small sizes, plus a true
  // division and a float tensor use that keep 0-dim int64 tensors (Note [Int shapes]).
  const char* text = R"(graph @shape_ops(%x : Tensor) {
  %one : int = prim.Constant[value=1]()
  %two : int = prim.Constant[value=2]()
  %ten : int = prim.Constant[value=10]()
  %m3 : int = prim.Constant[value=-3]()
  %floor : str = prim.Constant[value="floor"]()
  %trunc : str = prim.Constant[value="trunc"]()
  %c4 : i64[] = prim.Constant[value=tensor<i64[]>[4]]()
  %7 : int = Tensor.size(%x, %two)
  %h : Tensor = prim.NumToTensor(%7)
  %a : Tensor = torch.sub(%h, %ten, %one)
  %b : Tensor = torch.floor_divide(%a, %c4)
  %c : Tensor = torch.remainder(%a, %m3)
  %d : Tensor = torch.rsub(%b, %ten, %one)
  %e : Tensor = torch.neg(%c)
  %f : Tensor = torch.div(%a, %two, %floor)
  %g : Tensor = torch.div(%h, %c4, %trunc)
  %k : Tensor = torch.mul(%d, %e)
  %s : Tensor = torch.add(%k, %f, %one)
  %q : Tensor = torch.div(%a, %c4)
  %y : Tensor = torch.mul(%x, %s)
  %i : int = int(%g)
  return %s, %g, %q, %y, %i
}
)";
  auto before = parse_tir(text);
  auto g = parse_tir(text);
  Diagnostics diags;
  run_import_pipeline(kTorchScriptImportPipeline, *g, diags);
  CHECK(verify_graph(*g).empty());
  for (const char* op : {"torch.sub", "torch.floor_divide", "torch.remainder", "torch.rsub",
                         "torch.neg", "torch.add", "int"})
    CHECK_MESSAGE(!has_op(*g, op), op);
  CHECK(has_op(*g, "operator.floordiv"));
  CHECK(has_op(*g, "operator.mod"));
  CHECK(g->find_value("s")->type().kind == Type::Kind::Int);
  CHECK(g->find_value("h")->node()->op() == "Tensor.size");  // the int took the name
  CHECK(g->find_value("q")->node()->op() == "torch.div");    // true division stays

  for (int64_t h : {0, 1, 3, 9, 10, 13, 25}) {
    at::Tensor x = at::randn({1, 2, h, 1});
    auto want = Interpreter(*before).run({x});
    auto got = Interpreter(*g).run({x});
    REQUIRE(want.size() == got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      if (want[i].isTensor()) {
        REQUIRE(got[i].isTensor());
        CHECK((want[i].toTensor().scalar_type() == got[i].toTensor().scalar_type()));
        CHECK_MESSAGE(at::equal(want[i].toTensor(), got[i].toTensor()), "h=" << h << " out " << i);
      } else {
        REQUIRE(want[i].isInt());
        REQUIRE(got[i].isInt());
        CHECK_MESSAGE(want[i].toInt() == got[i].toInt(), "h=" << h << " out " << i);
      }
    }
  }
}
