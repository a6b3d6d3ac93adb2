// Located errors (Note [Located errors] in lib/support/diag.h): a fatal error about one node
// carries the node's place (value name, module scope, source line) as data, whether the
// interpreter, a module's lowering or the Python emitter raises it.
#include "emitters/python.h"
#include "exec/interpreter.h"
#include "loaders/tir_parser.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include <string>

using namespace tt;

namespace {

// Runs g on x and returns the error it must raise.
Error run_error(const Graph& g, const at::Tensor& x) {
  try {
    Interpreter(g).run({x});
  } catch (const Error& e) {
    return e;
  }
  FAIL("the run did not fail");
  return Error(ExitCode::Ok, "");
}

}  // namespace

TEST_CASE("located errors: describe names the parts a location has") {
  CHECK(describe(Location{"y", "layer1.0", "m.py:3"}) == "node %y in module 'layer1.0' at m.py:3");
  CHECK(describe(Location{"", "", "m.py:3"}) == "at m.py:3");
  CHECK(describe(Location{"y", "", ""}) == "node %y");
  CHECK(Location{}.empty());
  CHECK(describe(Location{}).empty());
  Error e(ExitCode::Unsupported, "what — fix");
  CHECK(e.where().empty());
  e.at({"y", "", ""});
  CHECK(e.where().node == "y");
}

TEST_CASE("located errors: source files are named by their package path") {
  CHECK(source_file_label("/usr/lib/python3/dist-packages/torch/nn/functional.py") ==
        "torch/nn/functional.py");
  CHECK(source_file_label("/venv/lib/python3.13/site-packages/torchvision/ops/boxes.py") ==
        "torchvision/ops/boxes.py");
  CHECK(source_file_label("/home/me/project/model.py") == "model.py");
  CHECK(source_file_label("model.py") == "model.py");
  CHECK(source_file_label("/a/site-packages/x/dist-packages/pkg/m.py") == "pkg/m.py");
}

TEST_CASE("located errors: first_line keeps the first line that says something") {
  CHECK(first_line("one\ntwo") == "one");
  CHECK(first_line("one  \r\ntwo") == "one");
  // LibTorch's load errors start with an empty line; the reason is the next one.
  CHECK(first_line("\nUnknown builtin op: torchvision::nms.\nHere are some suggestions:") ==
        "Unknown builtin op: torchvision::nms.");
  CHECK(first_line("  \n\t\n   indented  \n") == "indented");
  CHECK(first_line("") == "");
  CHECK(first_line("\n \n") == "");
}

TEST_CASE("located errors: the interpreter places a failing op at its node") {
  auto g = parse_tir(R"TIR(graph @g(%x : Tensor) {
  %s : List[int] = prim.Constant[value=[5,7]]()
  %r : Tensor = F.relu(%x) #scope=head
  %y : Tensor = Tensor.view(%r, %s) #scope=block.0 #loc="m.py:3"
  return %y
}
)TIR");
  Error e = run_error(*g, at::randn({2, 3}));
  CHECK(e.code() == ExitCode::Unsupported);
  CHECK(e.where().node == "y");
  CHECK(e.where().scope == "block.0");
  CHECK(e.where().loc == "m.py:3");
  CHECK(std::string(e.what()).find("Tensor.view node %y in module 'block.0' at m.py:3") !=
        std::string::npos);
}

TEST_CASE("located errors: an error inside a module's lowering is the module node's") {
  auto g = parse_tir(R"TIR(graph @g(%x : Tensor) {
  %fc : Tensor = nn.Linear[in_features=3, out_features=2, bias=true](%x) @weight=fc.weight @bias=fc.bias #module=fc #scope=head
  return %fc
}
weights {
  fc.weight : f32[2,3] param = random(seed=1)
  fc.bias : f32[2] param = random(seed=2)
}
)TIR");
  // 5 input features where the layer takes 3: the lowering's matmul fails.
  Error e = run_error(*g, at::randn({4, 5}));
  CHECK(e.where().node == "fc");
  CHECK(e.where().scope == "head");
}

TEST_CASE("located errors: the Python emitter places a node it cannot write") {
  auto g = parse_tir(R"TIR(graph @g(%x : Tensor) {
  %w : Tensor = prim.GetAttr() @value=missing.weight #scope=blocks.1 #loc="m.py:9"
  %y : Tensor = torch.add(%x, %w)
  return %y
}
)TIR");
  Diagnostics diags;
  try {
    emit_python(*g, PythonEmitOptions{}, diags);
    FAIL("the emitter accepted a read of a weight the graph does not have");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::Unsupported);
    CHECK(e.where().node == "w");
    CHECK(e.where().scope == "blocks.1");
    CHECK(e.where().loc == "m.py:9");
  }
}
