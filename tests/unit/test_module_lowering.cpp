// Module lowering (lib/ir/module_lowering.h): the one lowering the interpreter runs and the
// TorchScript emitter prints computes what the ATen kernels compute directly, including the
// run-time decisions (an unbatched RNN/attention input) both consumers must make alike.
#include "exec/interpreter.h"
#include "ir/module_lowering.h"
#include "ir/verifier.h"
#include "loaders/jit_runner.h"
#include "loaders/tir_parser.h"
#include "driver/torchscript.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

// A bidirectional sequence-first LSTM and a sequence-first attention, on an input whose rank
// (batched 3-d or unbatched 2-d) the graph does not fix.
const char* kSeqModel = R"TIR(graph @seq(%x : Tensor) {
  %r : Tuple[Tensor, Tuple[Tensor, Tensor]] = nn.LSTM[input_size=4, hidden_size=3, num_layers=1, bias=true, batch_first=false, dropout=0.0, bidirectional=true, proj_size=0](%x) @weight_ih_l0=rnn.weight_ih_l0 @weight_hh_l0=rnn.weight_hh_l0 @bias_ih_l0=rnn.bias_ih_l0 @bias_hh_l0=rnn.bias_hh_l0 @weight_ih_l0_reverse=rnn.weight_ih_l0_reverse @weight_hh_l0_reverse=rnn.weight_hh_l0_reverse @bias_ih_l0_reverse=rnn.bias_ih_l0_reverse @bias_hh_l0_reverse=rnn.bias_hh_l0_reverse #module=rnn
  %y : Tensor, %hc : Tuple[Tensor, Tensor] = prim.TupleUnpack(%r)
  %h : Tensor, %c : Tensor = prim.TupleUnpack(%hc)
  %a : Tuple[Tensor, Tensor] = nn.MultiheadAttention[embed_dim=6, num_heads=2, dropout=0.0, bias=true, add_bias_kv=false, add_zero_attn=false, kdim=6, vdim=6, batch_first=false](%y, %y, %y) @in_proj_weight=attn.in_proj_weight @in_proj_bias=attn.in_proj_bias @out_proj.weight=attn.out_proj.weight @out_proj.bias=attn.out_proj.bias #module=attn
  %o : Tensor, %w : Tensor = prim.TupleUnpack(%a)
  %t : Tuple[Tensor, Tensor, Tensor, Tensor] = prim.TupleConstruct(%o, %w, %h, %c)
  return %t
}
weights {
  rnn.weight_ih_l0 : f32[12,4] param = random(seed=1)
  rnn.weight_hh_l0 : f32[12,3] param = random(seed=2)
  rnn.bias_ih_l0 : f32[12] param = random(seed=3)
  rnn.bias_hh_l0 : f32[12] param = random(seed=4)
  rnn.weight_ih_l0_reverse : f32[12,4] param = random(seed=5)
  rnn.weight_hh_l0_reverse : f32[12,3] param = random(seed=6)
  rnn.bias_ih_l0_reverse : f32[12] param = random(seed=7)
  rnn.bias_hh_l0_reverse : f32[12] param = random(seed=8)
  attn.in_proj_weight : f32[18,6] param = random(seed=9)
  attn.in_proj_bias : f32[18] param = random(seed=10)
  attn.out_proj.weight : f32[6,6] param = random(seed=11)
  attn.out_proj.bias : f32[6] param = random(seed=12)
}
)TIR";

std::vector<at::Tensor> tensors(const c10::IValue& v) {
  std::vector<at::Tensor> out;
  for (const auto& e : v.toTupleRef().elements()) out.push_back(e.toTensor());
  return out;
}

// What the two modules compute on a batched (seq, batch, feature) input, straight from ATen.
std::vector<at::Tensor> reference(const tt::Graph& g, const at::Tensor& x) {
  auto w = [&](const char* name) { return g.weights().at(name).tensor; };
  std::vector<at::Tensor> params;
  for (const char* sfx : {"", "_reverse"})
    for (const char* k : {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"})
      params.push_back(w(("rnn." + std::string(k) + sfx).c_str()));
  at::Tensor h0 = at::zeros({2, x.size(1), 3});
  auto [y, h, c] = at::lstm(x, {h0, h0}, params, true, 1, 0.0, false, true, false);
  at::Tensor q = y.transpose(0, 1);
  auto [o, attn] = at::_native_multi_head_attention(
      q, q, q, 6, 2, w("attn.in_proj_weight"), w("attn.in_proj_bias"), w("attn.out_proj.weight"),
      w("attn.out_proj.bias"), c10::nullopt, true, true, c10::nullopt);
  return {o.transpose(0, 1), attn, h, c};
}

}  // namespace

TEST_CASE(
    "module lowering: batched and unbatched RNN/attention inputs, interpreter and TorchScript") {
  auto g = tt::parse_tir(kSeqModel);
  for (tt::Node* n : g->all_nodes()) {
    if (n->module().empty()) continue;
    std::string why;
    auto lowered = tt::lower_module(*n, why);
    REQUIRE_MESSAGE(lowered != nullptr, why);
    // Its weight reads name the parent graph's weights (Note [Module lowering]).
    for (const std::string& name : g->weights().names())
      lowered->weights().set(name, g->weights().at(name));
    std::vector<std::string> problems = tt::verify_graph(*lowered);
    std::string first = problems.empty() ? std::string() : problems[0];
    CHECK_MESSAGE(problems.empty(), first);
  }
  std::string path = (std::filesystem::temp_directory_path() /
                      ("tt_lowering_seq_" + std::to_string(::getpid()) + ".pt"))
                         .string();
  tt::save_torchscript(*g, path, "Seq");

  at::manual_seed(0);
  at::Tensor x = at::randn({5, 2, 4});
  std::vector<at::Tensor> expected = reference(*g, x);
  // The unbatched input is batch element 1 without its batch dim: its results are that batch
  // element's (the attention weights and states keep no batch dim either).
  std::vector<at::Tensor> expected_one = {expected[0].select(1, 1), expected[1].select(0, 1),
                                          expected[2].select(1, 1), expected[3].select(1, 1)};
  for (bool batched : {true, false}) {
    CAPTURE(batched);
    at::Tensor in = batched ? x : x.select(1, 1);
    const auto& want = batched ? expected : expected_one;
    tt::Interpreter interp(*g);
    std::vector<at::Tensor> got = tensors(interp.run({in}).at(0));
    std::vector<at::Tensor> got_ts = tensors(tt::run_torchscript_file(path, {in}));
    REQUIRE(got.size() == want.size());
    REQUIRE(got_ts.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i].sizes() == want[i].sizes());
      CHECK(at::allclose(got[i], want[i], 1e-5, 1e-6));
      CHECK(at::allclose(got_ts[i], want[i], 1e-5, 1e-6));
    }
  }
  std::remove(path.c_str());
}

TEST_CASE("module lowering: refusals say why, and an unknown module op has none") {
  auto g = tt::parse_tir(R"TIR(graph @m(%x : f32[2,3]) {
  %s : Tensor = nn.Softmax[dim=none](%x) #module=sm
  %u : Tensor = nn.Softsign(%s) #module=ss
  return %u
}
)TIR");
  std::vector<tt::Node*> nodes;
  for (tt::Node* n : g->all_nodes())
    if (!n->module().empty()) nodes.push_back(n);
  REQUIRE(nodes.size() == 2);
  std::string why;
  CHECK(tt::has_module_lowering("nn.Softmax"));
  CHECK(tt::lower_module(*nodes[0], why) == nullptr);
  CHECK(why.find("without dim") != std::string::npos);
  CHECK_FALSE(tt::has_module_lowering("nn.Softsign"));
  why.clear();
  CHECK(tt::lower_module(*nodes[1], why) == nullptr);
  CHECK(why.find("no lowering") != std::string::npos);
}
