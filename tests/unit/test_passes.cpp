// Passes: numerical checks of BatchNorm folding against ATen, the registry's file-name rule, and
// the ATen dispatch helper used by fold-constants.
#include "exec/dispatch.h"
#include "ir/ir.h"
#include "loaders/tir_parser.h"
#include "ir/verifier.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "passes/pass_util.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include "source_dir.h"

#include <cstring>
#include <fstream>

using namespace tt;

namespace {

struct ConvSpec {
  std::string op;  // nn.Conv2d / nn.ConvTranspose2d / nn.Linear / nn.Conv1d / nn.Conv3d
  int64_t in = 4, out = 6, groups = 1, k = 3;
  bool bias = false;
  int dims = 2;  // spatial dims
};

at::Tensor randn(at::IntArrayRef shape, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, gen, at::kFloat);
}

// Runs the producer then BN (eval) with ATen, from the graph's weights.
at::Tensor run_ref(const ConvSpec& s, const WeightStore& w, const at::Tensor& x, bool with_bn) {
  const at::Tensor& wt = w.at("layer.conv.weight").tensor;
  at::Tensor b = w.has("layer.conv.bias") ? w.at("layer.conv.bias").tensor : at::Tensor();
  at::Tensor y;
  std::vector<int64_t> one(static_cast<size_t>(s.dims), 1), zero(static_cast<size_t>(s.dims), 0);
  if (s.op == "nn.Linear")
    y = at::linear(x, wt, b);
  else if (s.op.find("Transpose") != std::string::npos)
    y = at::convolution(x, wt, b, one, zero, one, true, zero, s.groups);
  else
    y = at::convolution(x, wt, b, one, zero, one, false, zero, s.groups);
  if (!with_bn) return y;
  return at::batch_norm(y, w.at("layer.bn.weight").tensor, w.at("layer.bn.bias").tensor,
                        w.at("layer.bn.running_mean").tensor, w.at("layer.bn.running_var").tensor,
                        false, 0.1, 1e-3, false);
}

void check_fold(const ConvSpec& s) {
  CAPTURE(s.op);
  CAPTURE(s.groups);
  CAPTURE(s.bias);
  Graph g;
  std::vector<int64_t> xshape{2, s.in};
  for (int d = 0; d < s.dims; ++d) xshape.push_back(5);
  Value* x = g.add_input(Type::tensor(DType::F32, xshape), "x");

  // Weights: layout per op.
  std::vector<int64_t> wshape;
  if (s.op == "nn.Linear") {
    wshape = {s.out, s.in};
  } else if (s.op.find("Transpose") != std::string::npos) {
    wshape = {s.in, s.out / s.groups};
  } else {
    wshape = {s.out, s.in / s.groups};
  }
  for (int d = 0; d < s.dims; ++d) wshape.push_back(s.k);
  g.weights().set("layer.conv.weight", {randn(wshape, 1), true});
  if (s.bias) g.weights().set("layer.conv.bias", {randn({s.out}, 2), true});
  g.weights().set("layer.bn.weight", {randn({s.out}, 3), true});
  g.weights().set("layer.bn.bias", {randn({s.out}, 4), true});
  g.weights().set("layer.bn.running_mean", {randn({s.out}, 5), false});
  g.weights().set("layer.bn.running_var", {randn({s.out}, 6).abs() + 0.5, false});
  g.weights().set("layer.bn.num_batches_tracked", {at::zeros({}, at::kLong), false});

  Node* conv = g.insert(s.op, {x}, 1, nullptr);
  conv->set_module("layer.conv");
  conv->set_scope("layer");
  conv->output()->set_name("conv");
  conv->attrs().set("groups", s.groups);
  conv->attrs().set("bias", s.bias);
  conv->set_weight("weight", "layer.conv.weight");
  if (s.bias) conv->set_weight("bias", "layer.conv.bias");
  std::string bn_op =
      s.dims == 0 ? "nn.BatchNorm1d" : "nn.BatchNorm" + std::to_string(s.dims) + "d";
  Node* bn = g.insert(bn_op, {conv->output()}, 1, nullptr);
  bn->set_module("layer.bn");
  bn->attrs().set("num_features", s.out);
  bn->attrs().set("eps", 1e-3);
  for (const char* k : {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"})
    bn->set_weight(k, std::string("layer.bn.") + k);
  g.add_output(bn->output());

  at::Tensor input = randn(xshape, 7);
  at::Tensor before = run_ref(s, g.weights(), input, true);

  Diagnostics diags;
  PassManagerOptions o;
  o.verify_each = true;
  PassManager pm(parse_pipeline("fold-batchnorm"), o);
  CHECK(pm.run(g, diags));
  REQUIRE(pm.stats().size() == 1);
  CHECK(pm.stats()[0].rewrites == 1);
  CHECK(pm.stats()[0].nodes_before == 2);
  CHECK(pm.stats()[0].nodes_after == 1);

  // Structure: the conv remains, under its own name and module path, with a bias.
  REQUIRE(g.num_nodes() == 1);
  Node* folded = g.block()->front();
  CHECK(folded->op() == s.op);
  CHECK(folded->module() == "layer.conv");
  CHECK(folded->scope() == "layer");
  CHECK(folded->output()->name() == "conv");
  CHECK(folded->attrs().get_bool("bias"));
  CHECK(folded->weight("bias") == "layer.conv.bias");
  CHECK(g.outputs()[0] == folded->output());
  // BN's entries are gone from the state_dict; the new bias sits right after the weight.
  std::vector<std::string> expect_names{"layer.conv.weight", "layer.conv.bias"};
  CHECK(g.weights().names() == expect_names);

  at::Tensor after = run_ref(s, g.weights(), input, false);
  double err = (after - before).abs().max().item<double>();
  double scale = before.abs().max().item<double>();
  CHECK(err <= 1e-5 * std::max(1.0, scale));
}

}  // namespace

TEST_CASE("fold-batchnorm: folded weights reproduce conv+bn numerically") {
  check_fold({"nn.Conv2d", 4, 6, 1, 3, false, 2});
  check_fold({"nn.Conv2d", 4, 6, 2, 3, true, 2});
  check_fold({"nn.Conv2d", 4, 4, 4, 3, false, 2});  // depthwise
  check_fold({"nn.Conv1d", 4, 6, 2, 3, true, 1});
  check_fold({"nn.Conv3d", 2, 4, 1, 2, false, 3});
  check_fold({"nn.ConvTranspose2d", 4, 6, 1, 3, false, 2});
  check_fold({"nn.ConvTranspose2d", 4, 6, 2, 3, false, 2});
  check_fold({"nn.ConvTranspose2d", 6, 4, 2, 2, true, 2});
  check_fold({"nn.ConvTranspose1d", 4, 6, 2, 3, false, 1});
  check_fold({"nn.ConvTranspose3d", 2, 4, 2, 2, true, 3});
  check_fold({"nn.Linear", 5, 3, 1, 0, true, 0});
  check_fold({"nn.Linear", 5, 3, 1, 0, false, 0});
}

TEST_CASE("fold-batchnorm: the folded ConvTranspose differs from a conv-layout fold") {
  // Guard against scaling dim 0 (the Conv rule) for transposed weights: with groups=2 the two
  // differ, and only the transposed rule matches ATen (checked above); here the structure.
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {1, 2, 3, 3}), "x");
  g.weights().set("up.weight", {at::tensor({1.f, 2.f, 3.f, 4.f}).reshape({2, 2, 1, 1}), true});
  g.weights().set("bn.weight", {at::tensor({1.f, 2.f, 3.f, 4.f}), true});
  g.weights().set("bn.bias", {at::zeros({4}), true});
  g.weights().set("bn.running_mean", {at::zeros({4}), false});
  g.weights().set("bn.running_var", {at::ones({4}), false});
  Node* c = g.insert("nn.ConvTranspose2d", {x}, 1, nullptr);
  c->set_module("up");
  c->attrs().set("groups", int64_t(2));
  c->set_weight("weight", "up.weight");
  Node* bn = g.insert("nn.BatchNorm2d", {c->output()}, 1, nullptr);
  bn->set_module("bn");
  bn->attrs().set("eps", 0.0);
  for (const char* k : {"weight", "bias", "running_mean", "running_var"})
    bn->set_weight(k, std::string("bn.") + k);
  g.add_output(bn->output());
  Diagnostics d;
  PassContext ctx(d);
  ctx.set_pass_name("fold-batchnorm");
  CHECK(run_fold_batchnorm(g, ctx));
  at::Tensor w = g.weights().at("up.weight").tensor.reshape({-1});
  CHECK(at::allclose(w, at::tensor({1.f, 4.f, 9.f, 16.f})));
  CHECK(verify_graph(g).empty());
}

TEST_CASE("registry: every pass lives in passes/<name with _>.cpp and has a summary") {
  for (const auto& p : all_passes()) {
    std::string file = p.name;
    for (char& ch : file)
      if (ch == '-') ch = '_';
    std::ifstream in(std::string(TT_SOURCE_DIR) + "/passes/" + file + ".cpp");
    CHECK_MESSAGE(in.good(), "pass '" << p.name << "' has no file passes/" << file << ".cpp");
    CHECK(std::string(p.summary).size() > 10);
    CHECK(find_pass(p.name) == &p);
  }
  for (const auto& pl : all_pipelines()) CHECK_NOTHROW(parse_pipeline(pl.pipeline));
  REQUIRE(find_pipeline("fuse"));
  CHECK(parse_pipeline("fuse").str() == "eliminate-noops,fold-constants,fold-batchnorm,dce");
}

TEST_CASE("dispatch: call_aten picks the overload whose schema fits") {
  auto a = at::tensor({1.f, 2.f});
  auto r = call_aten("torch.add", {a, a, int64_t(1)});
  REQUIRE(r.has_value());
  CHECK(at::allclose(r->at(0).toTensor(), at::tensor({2.f, 4.f})));
  r = call_aten("torch.add", {a, 2.5, int64_t(1)});  // -> add.Scalar
  REQUIRE(r.has_value());
  CHECK(at::allclose(r->at(0).toTensor(), at::tensor({3.5f, 4.5f})));
  CHECK(resolve_aten_schema("torch.add", {a, 2.5, int64_t(1)}).rfind("aten::add.Scalar", 0) == 0);

  r = call_aten("Tensor.view", {at::arange(6), c10::List<int64_t>({2, 3})});
  REQUIRE(r.has_value());
  CHECK(r->at(0).toTensor().sizes() == at::IntArrayRef({2, 3}));
  // Defaults fill missing trailing arguments (sum's dtype).
  r = call_aten("aten::sum", {at::ones({3})});
  REQUIRE(r.has_value());
  CHECK(r->at(0).toTensor().item<float>() == 3.f);
  // An unknown spelling falls back to aten::<name>.
  r = call_aten("torch.special_erfcx", {at::zeros({1})});
  REQUIRE(r.has_value());
  CHECK(r->at(0).toTensor().item<float>() == doctest::Approx(1.0));

  // TorchScript's int arithmetic and conversions (outside the dispatcher), Python semantics.
  CHECK(call_aten("aten::floordiv.int", {int64_t(-7), int64_t(2)})->at(0).toInt() == -4);
  CHECK(call_aten("aten::remainder.int", {int64_t(-7), int64_t(2)})->at(0).toInt() == 1);
  CHECK(call_aten("aten::div.int", {int64_t(7), int64_t(2)})->at(0).toDouble() == 3.5);
  CHECK(call_aten("int", {at::tensor(5)})->at(0).toInt() == 5);
  CHECK(call_aten("Tensor.size", {at::zeros({2, 3})})->at(0).toIntVector() ==
        std::vector<int64_t>{2, 3});
  CHECK(call_aten("Tensor.size", {at::zeros({2, 3}), int64_t(1)})->at(0).toInt() == 3);
  CHECK_THROWS(call_aten("aten::floordiv.int", {int64_t(1), int64_t(0)}));

  // Nothing fits: nullopt, never a crash.
  CHECK_FALSE(call_aten("torch.add", {std::string("a")}).has_value());
  CHECK_FALSE(call_aten("aten::no_such_op", {a}).has_value());
  CHECK_FALSE(call_aten("nn.Conv2d", {a}).has_value());
  // In-place and out= overloads are never picked.
  CHECK(resolve_aten_schema("aten::relu", {a}).rfind("aten::relu(", 0) == 0);
}

TEST_CASE("passes: a rejected match leaves the graph untouched and verified") {
  const char* text = R"(graph @g(%x : f32[1,2,4,4]) {
  %c : f32[1,2,4,4] = nn.Conv2d[in_channels=2, out_channels=2, kernel_size=[1,1], stride=[1,1], padding=[0,0], dilation=[1,1], groups=1, bias=false, padding_mode="zeros"](%x) @weight=conv.weight #module=conv
  %b : f32[1,2,4,4] = nn.BatchNorm2d[num_features=2, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true](%c) @weight=bn.weight @bias=bn.bias @running_mean=bn.running_mean @running_var=bn.running_var #module=bn
  %t : Tuple[Tensor, Tensor] = prim.TupleConstruct(%b, %c)
  return %t
}
weights {
  conv.weight : f32[2,2,1,1] param
  bn.weight : f32[2] param
  bn.bias : f32[2] param
  bn.running_mean : f32[2] buffer
  bn.running_var : f32[2] buffer
}
)";
  auto g = parse_tir(text);
  Diagnostics d;
  PassManager pm(parse_pipeline("fold-batchnorm,fuse-linear,eliminate-noops"));
  CHECK_FALSE(pm.run(*g, d));
  CHECK(g->num_nodes() == 3);
  CHECK(g->weights().size() == 5);
  for (const auto& st : pm.stats()) {
    CHECK_FALSE(st.changed);
    CHECK(st.rewrites == 0);
  }
}

// Note [BatchNorm folding on raw data] (passes/fold_batchnorm.cpp): the plain-loop arithmetic
// must give the same bytes as the ATen formula it replaces, for every layout it accepts.
TEST_CASE("fold-batchnorm: raw-data arithmetic is bit-identical to the ATen formula") {
  at::Generator gen = at::detail::createCPUGenerator(7);
  auto rnd = [&](std::vector<int64_t> shape, at::ScalarType dt) {
    return (at::randn(shape, gen, at::TensorOptions().dtype(at::kDouble)) * 3).to(dt);
  };
  struct Case {
    std::vector<int64_t> wshape;
    int64_t groups;
    bool transpose;
  };
  const std::vector<Case> cases = {
      {{37, 5, 3, 3}, 1, false},    // Conv2d, odd channel count (vector tails)
      {{64, 1, 3, 3}, 64, false},   // depthwise
      {{19, 23}, 1, false},         // Linear
      {{12, 6, 2, 2}, 3, true},     // ConvTranspose2d, groups=3: out = 18
      {{8, 5, 3}, 1, true},         // ConvTranspose1d
      {{6, 4, 1, 2, 3}, 2, false},  // Conv3d
  };
  for (at::ScalarType wdt : {at::kFloat, at::kDouble})
    for (at::ScalarType sdt : {at::kFloat, at::kDouble})
      for (const Case& c : cases)
        for (int variant = 0; variant < 4; ++variant) {
          at::Tensor w = rnd(c.wshape, wdt);
          const int64_t oc = c.transpose ? c.wshape[1] * c.groups : c.wshape[0];
          at::Tensor b = rnd({oc}, sdt), mean = rnd({oc}, sdt), gamma = rnd({oc}, sdt),
                     beta = rnd({oc}, sdt);
          at::Tensor var = rnd({oc}, sdt).abs();
          var.index_put_({0}, 0.0);  // var + eps = eps
          const bool has_b = variant & 1, affine = variant & 2;
          BnFoldInputs in{&w,
                          has_b ? &b : nullptr,
                          &mean,
                          &var,
                          affine ? &gamma : nullptr,
                          affine ? &beta : nullptr,
                          1e-3 * (variant + 1),
                          c.groups,
                          c.transpose};
          at::Tensor w_raw, b_raw, w_ref, b_ref;
          REQUIRE(fold_bn_tensors(in, w_raw, b_raw));
          REQUIRE(!fold_bn_tensors(in, w_ref, b_ref, BnFoldMath::Aten));
          CAPTURE(c.wshape.size());
          CAPTURE(c.wshape[0]);
          CAPTURE(variant);
          REQUIRE((w_raw.scalar_type() == w_ref.scalar_type()));
          REQUIRE((b_raw.scalar_type() == b_ref.scalar_type()));
          REQUIRE((w_raw.sizes() == w_ref.sizes()));
          CHECK(std::memcmp(w_raw.const_data_ptr(), w_ref.const_data_ptr(), w_ref.nbytes()) == 0);
          CHECK(std::memcmp(b_raw.const_data_ptr(), b_ref.const_data_ptr(), b_ref.nbytes()) == 0);
          // Not vacuous: the fold changed the weight.
          CHECK(!at::equal(w_raw, w));
        }
  // Half weights and non-contiguous tensors take the ATen path.
  at::Tensor wh = at::ones({4, 2}, at::kHalf), m = at::zeros({4}), v = at::ones({4});
  at::Tensor v_strided = at::ones({8}).slice(0, 0, 8, 2);
  at::Tensor nw, nb;
  CHECK(!fold_bn_tensors({&wh, nullptr, &m, &v, nullptr, nullptr, 1e-5, 1, false}, nw, nb));
  at::Tensor wf = at::ones({4, 2});
  CHECK(!fold_bn_tensors({&wf, nullptr, &m, &v_strided, nullptr, nullptr, 1e-5, 1, false}, nw, nb));
  CHECK(fold_bn_tensors({&wf, nullptr, &m, &v, nullptr, nullptr, 1e-5, 1, false}, nw, nb));
}
