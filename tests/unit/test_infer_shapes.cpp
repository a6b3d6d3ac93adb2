// infer-shapes: shapes from meta tensors and shape rules equal the shapes of a real run.
#include "exec/interpreter.h"
#include "loaders/tir_parser.h"
#include "passes/pass.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include <map>
#include <string>

namespace {

const char* kModel = R"TIR(graph @shapes(%x : f32[2,3,17,16]) {
  %c1 : Tensor = nn.Conv2d[in_channels=3, out_channels=8, kernel_size=[3,3], stride=[2,2], padding=[1,1], dilation=[1,1], groups=1, bias=true, padding_mode="zeros"](%x) @weight=c1.weight @bias=c1.bias #module=c1
  %b1 : Tensor = nn.BatchNorm2d[num_features=8, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true](%c1) @weight=b1.weight @bias=b1.bias @running_mean=b1.running_mean @running_var=b1.running_var #module=b1
  %r1 : Tensor = nn.ReLU[inplace=false](%b1) #module=r1
  %c2 : Tensor = nn.Conv2d[in_channels=8, out_channels=8, kernel_size=[3,3], stride=[1,1], padding=[2,2], dilation=[2,2], groups=4, bias=false, padding_mode="reflect"](%r1) @weight=c2.weight #module=c2
  %t1 : Tensor = nn.ConvTranspose2d[in_channels=8, out_channels=6, kernel_size=[3,3], stride=[2,2], padding=[1,1], output_padding=[1,1], groups=2, bias=true, dilation=[1,1], padding_mode="zeros"](%c2) @weight=t1.weight @bias=t1.bias #module=t1
  %r2 : Tensor = F.relu(%t1)
  %one : int = prim.Constant[value=1]()
  %m1 : int = prim.Constant[value=-1]()
  %f : Tensor = torch.flatten(%r2, %one, %m1)
  %s : Tensor = Tensor.sum(%f, %none)
  %n : int = int(%s)
  %l : Tensor = nn.Linear[in_features=1728, out_features=5, bias=true](%f) @weight=fc.weight @bias=fc.bias #module=fc
  %pair : Tuple[Tensor, Tensor] = prim.TupleConstruct(%l, %f)
  return %pair
}
weights {
  c1.weight : f32[8,3,3,3] param = random(seed=1)
  c1.bias : f32[8] param = random(seed=2)
  b1.weight : f32[8] param = random(seed=3)
  b1.bias : f32[8] param = random(seed=4)
  b1.running_mean : f32[8] buffer = random(seed=5)
  b1.running_var : f32[8] buffer = [1.0, 2.0, 0.5, 1.5, 1.0, 1.0, 1.0, 1.0]
  c2.weight : f32[8,2,3,3] param = random(seed=6)
  t1.weight : f32[8,3,3,3] param = random(seed=7)
  t1.bias : f32[6] param = random(seed=8)
  fc.weight : f32[5,1728] param = random(seed=9)
  fc.bias : f32[5] param = random(seed=10)
}
)TIR";

std::string model_text() {
  std::string t = kModel;
  t.replace(t.find("  %s : Tensor"), 0, "  %none : None = prim.Constant[value=none]()\n");
  return t;
}

}  // namespace

TEST_CASE("infer-shapes: every tensor value gets the shape of a real run") {
  auto g = tt::parse_tir(model_text());
  tt::Diagnostics diags;
  tt::PassContext ctx(diags);
  CHECK(tt::run_infer_shapes(*g, ctx));
  CHECK(diags.size() == 0);

  // The same graph run for real, value by value.
  std::map<std::string, std::vector<int64_t>> real;
  tt::Interpreter interp(*g);
  interp.on_value = [&](const tt::Value* v, const c10::IValue& iv) {
    if (iv.isTensor()) real[v->name()] = iv.toTensor().sizes().vec();
  };
  interp.run({at::randn({2, 3, 17, 16})});
  REQUIRE(real.size() >= 8);
  for (const auto& [name, sizes] : real) {
    tt::Value* v = g->find_value(name);
    REQUIRE(v);
    CAPTURE(name);
    CHECK(v->type().str() == tt::Type::tensor(tt::DType::F32, sizes).str());
  }
  CHECK(g->find_value("c1")->type().str() == "f32[2,8,9,8]");
  CHECK(g->find_value("l")->type().str() == "f32[2,5]");
  CHECK(g->find_value("pair")->type().str() == "Tuple[f32[2,5], f32[2,1728]]");
  CHECK(g->find_value("n")->type().kind == tt::Type::Kind::Int);  // non-tensors keep their type
}

TEST_CASE("infer-shapes: without complete input types nothing changes") {
  std::string t = model_text();
  t.replace(t.find("f32[2,3,17,16]"), std::string("f32[2,3,17,16]").size(), "Tensor");
  auto g = tt::parse_tir(t);
  tt::Diagnostics diags;
  tt::PassContext ctx(diags);
  CHECK_FALSE(tt::run_infer_shapes(*g, ctx));
  CHECK(g->find_value("c1")->type().str() == "Tensor");
  CHECK(diags.size() == 0);
}

TEST_CASE("infer-shapes: a failing op stops inference with a warning, earlier values keep shapes") {
  std::string t = model_text();
  // fc's weight does not fit the flattened input: the real run fails too.
  t.replace(t.find("fc.weight : f32[5,1728]"), std::string("fc.weight : f32[5,1728]").size(),
            "fc.weight : f32[5,7]");
  auto g = tt::parse_tir(t);
  tt::Diagnostics diags;
  tt::PassContext ctx(diags);
  CHECK(tt::run_infer_shapes(*g, ctx));
  REQUIRE(diags.size() == 1);
  CHECK(diags.items()[0].code == "infer-shapes");
  CHECK(diags.items()[0].node == "l");  // the warning places the op that failed
  CHECK(g->find_value("f")->type().str() == "f32[2,1728]");
  CHECK(g->find_value("l")->type().str() == "Tensor");
}
