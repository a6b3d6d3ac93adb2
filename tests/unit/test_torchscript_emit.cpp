// --emit torchscript: the saved archive loads with torch::jit::load and computes what the
// interpreter computes on the same IR.
#include "exec/interpreter.h"
#include "loaders/tir_parser.h"
#include "loaders/jit_runner.h"
#include "driver/torchscript.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

const char* kSmallCnn = R"TIR(graph @small(%x : f32[2,3,8,8]) {
  %c : Tensor = nn.Conv2d[in_channels=3, out_channels=4, kernel_size=[3,3], stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, bias=true, padding_mode="zeros"](%x) @weight=features.0.weight @bias=features.0.bias #module=features.0
  %b : Tensor = nn.BatchNorm2d[num_features=4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true](%c) @weight=features.1.weight @bias=features.1.bias @running_mean=features.1.running_mean @running_var=features.1.running_var @num_batches_tracked=features.1.num_batches_tracked #module=features.1
  %r : Tensor = nn.ReLU[inplace=false](%b) #module=features.2
  %p : Tensor = nn.MaxPool2d[kernel_size=[2,2], stride=[2,2], padding=[0,0], dilation=[1,1], return_indices=false, ceil_mode=false](%r) #module=features.3
  %a : Tensor = nn.AdaptiveAvgPool2d[output_size=[1,1]](%p) #module=pool
  %one : int = prim.Constant[value=1]()
  %m1 : int = prim.Constant[value=-1]()
  %none : None = prim.Constant[value=none]()
  %f : Tensor = torch.flatten(%a, %one, %m1)
  %y : Tensor = nn.Linear[in_features=4, out_features=5, bias=true](%f) @weight=fc.weight @bias=fc.bias #module=fc
  %scale : Tensor = prim.GetAttr() @value=scale
  %z : Tensor = torch.mul(%y, %scale)
  %s : Tensor = F.softmax(%z, %one, %none)
  %t : Tuple[Tensor, Tensor] = prim.TupleConstruct(%z, %s)
  return %t
}
weights {
  features.0.weight : f32[4,3,3,3] param = random(seed=1)
  features.0.bias : f32[4] param = random(seed=2)
  features.1.weight : f32[4] param = random(seed=3)
  features.1.bias : f32[4] param = random(seed=4)
  features.1.running_mean : f32[4] buffer = random(seed=5)
  features.1.running_var : f32[4] buffer = [1.0, 2.0, 0.5, 1.5]
  features.1.num_batches_tracked : i64[] buffer = [0]
  fc.weight : f32[5,4] param = random(seed=6)
  fc.bias : f32[5] param = random(seed=7)
  scale : f32[1] param = [2.5]
}
)TIR";

const char* kControlFlow = R"TIR(graph @flow(%x : Tensor, %n : int, %flag : bool) {
  %zero : int = prim.Constant[value=0]()
  %true : bool = prim.Constant[value=true]()
  %y : Tensor = prim.If(%flag) {
    block0() {
      %r : Tensor = F.relu(%x)
      return %r
    }
    block1() {
      %s : Tensor = torch.sigmoid(%x)
      return %s
    }
  }
  %acc : Tensor = prim.Loop(%n, %true, %y) {
    block0(%i : int, %carry : Tensor) {
      %big : bool = aten::gt.int(%i, %zero)
      %next : Tensor = prim.If(%big) {
        block0() {
          %m : Tensor = torch.mul(%carry, %x)
          return %m
        }
        block1() {
          return %carry
        }
      }
      return %true, %next
    }
  }
  %dims : List[int] = prim.ListConstruct(%zero)
  %k : bool = prim.Constant[value=false]()
  %sum : Tensor = torch.sum(%acc, %dims, %k, %none2)
  return %sum
}
)TIR";

std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "_" + std::to_string(::getpid()) + ".pt"))
      .string();
}

at::Tensor first_tensor(const c10::IValue& v) {
  if (v.isTuple()) return v.toTupleRef().elements().at(0).toTensor();
  return v.toTensor();
}

}  // namespace

TEST_CASE("torchscript emit: small CNN loads and matches the interpreter") {
  auto g = tt::parse_tir(kSmallCnn);
  std::string path = temp_path("tt_small_cnn");
  tt::save_torchscript(*g, path, "SmallCnn");

  at::Tensor x = at::randn({2, 3, 8, 8}, at::TensorOptions().dtype(at::kFloat));
  tt::Interpreter interp(*g);
  auto expected = interp.run({x});
  REQUIRE(expected.size() == 1);
  c10::IValue got = tt::run_torchscript_file(path, {x});
  REQUIRE(got.isTuple());
  const auto& ge = got.toTupleRef().elements();
  const auto& ee = expected[0].toTupleRef().elements();
  REQUIRE(ge.size() == 2);
  for (size_t i = 0; i < 2; ++i)
    CHECK(at::allclose(ge[i].toTensor(), ee[i].toTensor(), 1e-5, 1e-6));
  std::remove(path.c_str());
}

TEST_CASE("torchscript emit: if/loop and int arithmetic") {
  std::string text = kControlFlow;
  // %none2 is declared here so the text above reads like the model it mimics.
  text.replace(text.find("  %dims"), 0, "  %none2 : None = prim.Constant[value=none]()\n");
  auto g = tt::parse_tir(text);
  std::string src = tt::torchscript_forward_source(*g);
  CHECK(src.find("while") != std::string::npos);
  std::string path = temp_path("tt_flow");
  tt::save_torchscript(*g, path, "Flow");
  at::Tensor x = at::randn({3, 4});
  for (bool flag : {true, false})
    for (int64_t n : {0, 1, 3}) {
      tt::Interpreter interp(*g);
      auto expected = interp.run({x, n, flag});
      c10::IValue got = tt::run_torchscript_file(path, {x, n, flag});
      CHECK(at::allclose(first_tensor(got), expected.at(0).toTensor(), 1e-5, 1e-6));
    }
  std::remove(path.c_str());
}

TEST_CASE("torchscript emit: unsupported nodes fail with exit code 4") {
  auto g = tt::parse_tir(
      "graph @g(%x : Tensor) {\n  %y : Tensor = prim.Frobnicate(%x)\n  return %y\n}\n");
  try {
    tt::torchscript_forward_source(*g);
    FAIL("expected an error");
  } catch (const tt::Error& e) {
    CHECK(e.code() == tt::ExitCode::Unsupported);
  }
}
