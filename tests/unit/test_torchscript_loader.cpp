// TorchScript loader, op table and torch_io tests. The models come from
// scripts/make_loader_testmodels.py, run before this test (CTest fixture gen_loader_testmodels):
//   /usr/bin/python3 scripts/make_loader_testmodels.py --out $TT_TESTMODELS_DIR
// When TT_TESTMODELS_DIR is unset or the files are missing, the model cases are skipped.
#include "ir/ir.h"
#include "ir/op_table.h"
#include "loaders/loader.h"
#include "loaders/torch_io.h"
#include "support/diag.h"

#include <doctest/doctest.h>

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace tt;

namespace {

// Path of a generated test model, or "" (with a message) when it is not there.
std::string model_path(const std::string& name) {
  const char* dir = std::getenv("TT_TESTMODELS_DIR");
  if (!dir || !*dir) {
    MESSAGE(
        "TT_TESTMODELS_DIR is not set; skipping (run scripts/make_loader_testmodels.py --out DIR)");
    return "";
  }
  std::string p = std::string(dir) + "/" + name;
  if (!std::ifstream(p)) {
    MESSAGE("missing " << p << "; skipping (run scripts/make_loader_testmodels.py --out DIR)");
    return "";
  }
  return p;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

std::vector<Node*> module_nodes(const Graph& g, const std::string& path) {
  std::vector<Node*> out;
  for (Node* n : g.all_nodes())
    if (n->module() == path) out.push_back(n);
  return out;
}

Node* only_module_node(const Graph& g, const std::string& path) {
  auto nodes = module_nodes(g, path);
  REQUIRE_MESSAGE(nodes.size() == 1, "module " << path << " has " << nodes.size() << " nodes");
  return nodes[0];
}

bool has_diag(const Diagnostics& d, const std::string& code) {
  for (const auto& x : d.items())
    if (x.code == code) return true;
  return false;
}

ExitCode load_error(const std::string& path, std::string& message) {
  Diagnostics d;
  try {
    load_torchscript(path, d);
  } catch (const Error& e) {
    message = e.what();
    return e.code();
  }
  message = "";
  return ExitCode::Ok;
}

}  // namespace

TEST_CASE("op table: lookups by name and by ATen overload") {
  const OpInfo* relu = find_op("F.relu");
  REQUIRE(relu);
  CHECK(relu->kind == OpKind::Function);
  CHECK(find_op_by_aten("aten::relu") == relu);
  CHECK(find_op_by_aten("aten::relu_") == relu);  // in-place -> functional
  CHECK(find_op_by_aten("aten::relu.default") == relu);
  CHECK(find_op_by_aten("aten::add.Tensor")->name == "torch.add");
  CHECK(find_op_by_aten("aten::add_.Tensor")->name == "torch.add");
  CHECK(find_op_by_aten("aten::add.Scalar")->name == "torch.add");
  CHECK(find_op_by_aten("aten::add.int")->name ==
        "operator.add");  // int arithmetic is not torch.add
  CHECK(find_op_by_aten("aten::slice.Tensor")->name == "Tensor.slice");
  CHECK(find_op_by_aten("aten::select.int")->name == "Tensor.select");
  CHECK(find_op_by_aten("aten::hardtanh")->name == "F.hardtanh");
  CHECK(find_op_by_aten("aten::mean")->name == "Tensor.mean");
  CHECK(find_op_by_aten("aten::mean.dim")->name == "torch.mean");
  CHECK(find_op_by_aten("aten::__and__.Tensor") == nullptr);
  // Module rows and F.interpolate are not reachable from ATen names.
  CHECK(find_op_by_aten("aten::_convolution") == nullptr);
  CHECK(find_op_by_aten("aten::upsample_nearest2d.vec") == nullptr);
  CHECK(find_op("nn.Conv2d")->kind == OpKind::Module);
  CHECK(find_op("nn.Conv2d")->qclass == QuantClass::NeedsModule);
  CHECK(find_op("torch.cat")->qclass == QuantClass::FloatFunctional);
  CHECK(find_op("torch.matmul")->qclass == QuantClass::Float);
  CHECK(is_aten_fallback("aten::special_erfcx.default"));
  CHECK_FALSE(is_aten_fallback("F.relu"));
  // In-place activations without a Tensor method go through F (their values: the mutation tests).
  CHECK(functional_inplace_of("aten::leaky_relu_.default") == "leaky_relu_");
  CHECK(functional_inplace_of("aten::silu_.default") == "silu");  // F.silu(x, inplace=True)
  CHECK(functional_inplace_of("aten::relu_.default").empty());    // x.relu_()
  CHECK(functional_inplace_of("aten::leaky_relu.default").empty());
  CHECK_FALSE(written_as_torch_ops("aten::hardtanh_.default"));

  // Every row: unique name; py_args never puts a positional after a keyword.
  std::map<std::string, int> names;
  for (const OpInfo& op : all_ops()) {
    CHECK_MESSAGE(++names[op.name] == 1, "duplicate row " << op.name);
    bool keyword_seen = false;
    for (const std::string& a : op.py_args) {
      if (a == "-" || a == "=") continue;
      if (!a.empty()) keyword_seen = true;
      CHECK_MESSAGE(!(a.empty() && keyword_seen), op.name << ": positional after keyword");
    }
  }
}

TEST_CASE("torch_io: tensor dicts round-trip and load in Python") {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("tt_torch_io_" + std::to_string(::getpid()) + ".pth"))
                         .string();
  std::vector<std::pair<std::string, at::Tensor>> items = {
      {"conv.weight", at::arange(6, at::kFloat).reshape({2, 3})},
      {"bn.num_batches_tracked", at::scalar_tensor(7, at::kLong)},
      {"t", at::arange(12, at::kFloat).reshape({3, 4}).t()},  // non-contiguous
      // >= 1 MiB: its CRC-32 is computed on a second thread and patched in (Note [Writing
      // NAME.pth]); "big_view" shares its storage, which is written once.
      {"big", at::arange(300000, at::kFloat)},
  };
  items.emplace_back("big_view", items.back().second.narrow(0, 5, 10));
  save_tensor_dict(path, items);
  auto back = load_tensor_dict(path);
  REQUIRE(back.size() == items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    CHECK(back[i].first == items[i].first);
    CHECK(at::equal(back[i].second, items[i].second));
  }
  if (std::ifstream("/usr/bin/python3")) {
    // An independent zip reader checks every record's CRC-32 (testzip) and that each record's
    // data starts at a 64-byte boundary (local header: 30 bytes + name + extra field).
    std::string cmd =
        "/usr/bin/python3 -c \"import struct, torch, zipfile\n"
        "z = zipfile.ZipFile('" +
        path +
        "')\n"
        "assert z.testzip() is None, z.testzip()\n"
        "raw = open('" +
        path +
        "', 'rb').read()\n"
        "for i in z.infolist():\n"
        "    n, e = struct.unpack('<HH', raw[i.header_offset + 26:i.header_offset + 30])\n"
        "    assert (i.header_offset + 30 + n + e) % 64 == 0, i.filename\n"
        "d = torch.load('" +
        path +
        "', weights_only=True)\n"
        "assert d['big'].equal(torch.arange(300000.0)) and d['big_view'].tolist()[0] == 5.0\n"
        "print(type(d).__name__, list(d), d['t'].tolist()[0], len(z.namelist()))\" 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    char buf[512] = {0};
    std::string out;
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
    // 4 storages (big_view shares big's), data.pkl, version.
    CHECK(out ==
          "dict ['conv.weight', 'bn.num_batches_tracked', 't', 'big', 'big_view'] [0.0, 4.0, 8.0] "
          "6\n");
  }
  std::remove(path.c_str());
  CHECK_THROWS_AS(load_tensor_dict(path), Error);

  std::string py = model_path("ldr_tensors.pth");
  if (!py.empty()) {
    auto d = load_tensor_dict(py);
    REQUIRE(d.size() == 2);
    CHECK(d[0].first == "a");
    CHECK(d[0].second.sizes().vec() == std::vector<int64_t>{2, 3});
    CHECK((d[1].second.scalar_type() == at::kLong));
  }
  std::string not_dict = model_path("ldr_resblock.pt");
  if (!not_dict.empty()) {
    try {
      load_tensor_dict(not_dict);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::BadInput);
    }
  }
}

TEST_CASE("torchscript: --load-library names a library that cannot be loaded") {
  const std::string missing = "/nonexistent/libtt_ops.so";
  try {
    load_op_library(missing);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::BadInput);
    CHECK(std::string(e.what()).find("cannot load the op library " + missing) != std::string::npos);
    CHECK(std::string(e.what()).find("No such file") != std::string::npos);
  }
  // A file that is not a shared library.
  std::string not_lib = (std::filesystem::temp_directory_path() / "tt_not_a_library.so").string();
  { std::ofstream(not_lib) << "not an ELF file"; }
  CHECK_THROWS_AS(load_op_library(not_lib), Error);
  std::filesystem::remove(not_lib);
}

TEST_CASE("torchscript: a ResNet-like block lifts to module ops with constructor attrs") {
  std::string path = model_path("ldr_resblock.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  CHECK(diags.size() == 0);
  REQUIRE(g->inputs().size() == 1);
  CHECK(g->inputs()[0]->name() == "x");
  REQUIRE(g->outputs().size() == 1);

  Node* conv1 = only_module_node(*g, "conv1");
  CHECK(conv1->op() == "nn.Conv2d");
  CHECK(conv1->scope() == "");
  const Attrs& a = conv1->attrs();
  std::vector<std::string> keys;
  for (const auto& kv : a.items()) keys.push_back(kv.first);
  CHECK(keys == std::vector<std::string>{"in_channels", "out_channels", "kernel_size", "stride",
                                         "padding", "dilation", "groups", "bias", "padding_mode"});
  CHECK(a.get_int("in_channels") == 3);
  CHECK(a.get_int("out_channels") == 8);
  CHECK(a.get_ints("kernel_size") == std::vector<int64_t>{7, 7});
  CHECK(a.get_ints("stride") == std::vector<int64_t>{2, 2});
  CHECK(a.get_ints("padding") == std::vector<int64_t>{3, 3});
  CHECK(a.get_ints("dilation") == std::vector<int64_t>{1, 1});
  CHECK(a.get_int("groups") == 1);
  CHECK(a.get_bool("bias", true) == false);
  CHECK(a.get_str("padding_mode") == "zeros");
  CHECK(conv1->weight("weight") == "conv1.weight");
  CHECK(conv1->weight("bias") == "");
  REQUIRE(conv1->num_inputs() == 1);
  CHECK(conv1->input(0) == g->inputs()[0]);

  Node* bn = only_module_node(*g, "layer1.0.bn1");
  CHECK(bn->op() == "nn.BatchNorm2d");
  CHECK(bn->scope() == "layer1.0");
  CHECK(bn->attrs().get_int("num_features") == 8);
  CHECK(bn->attrs().get_float("eps") == doctest::Approx(1e-5));
  CHECK(bn->attrs().get_float("momentum") == doctest::Approx(0.1));
  CHECK(bn->attrs().get_bool("affine"));
  CHECK(bn->attrs().get_bool("track_running_stats"));
  CHECK(bn->weights().size() == 5);
  CHECK(bn->weight("running_var") == "layer1.0.bn1.running_var");
  CHECK(bn->weight("num_batches_tracked") == "layer1.0.bn1.num_batches_tracked");

  Node* mp = only_module_node(*g, "maxpool");
  CHECK(mp->op() == "nn.MaxPool2d");
  CHECK(mp->attrs().get_ints("kernel_size") == std::vector<int64_t>{3, 3});
  CHECK(mp->attrs().get_ints("stride") == std::vector<int64_t>{2, 2});
  CHECK(mp->attrs().get_ints("padding") == std::vector<int64_t>{1, 1});
  CHECK(only_module_node(*g, "avgpool")->op() == "nn.AdaptiveAvgPool2d");
  Node* fc = only_module_node(*g, "fc");
  CHECK(fc->op() == "nn.Linear");
  CHECK(fc->attrs().get_int("in_features") == 8);
  CHECK(fc->attrs().get_int("out_features") == 5);
  CHECK(fc->attrs().get_bool("bias"));
  CHECK(g->outputs()[0] == fc->output());

  int adds = 0, flattens = 0;
  for (Node* n : g->all_nodes()) {
    CHECK_MESSAGE(n->op().find("::") == std::string::npos, "unexpected fallback " << n->op());
    if (n->op() == "torch.add") {
      ++adds;
      CHECK((n->scope() == "layer1.0" || n->scope() == "layer1.1"));
    }
    if (n->op() == "torch.flatten") {
      ++flattens;
      CHECK(n->scope() == "");
      CHECK(n->loc().find("make_loader_testmodels.py:") == 0);
    }
  }
  CHECK(adds == 2);
  CHECK(flattens == 1);
}

TEST_CASE("torchscript: a reused module instance keeps one module path") {
  std::string path = model_path("ldr_resblock.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  auto relus = module_nodes(*g, "layer1.0.relu");
  REQUIRE(relus.size() == 2);  // forward and forward1 of the same instance
  for (Node* n : relus) {
    CHECK(n->op() == "nn.ReLU");
    CHECK(n->attrs().get_bool("inplace"));
    CHECK(n->scope() == "layer1.0");
  }
  CHECK(module_nodes(*g, "relu").size() == 1);
}

TEST_CASE("torchscript: weights are the state_dict in order") {
  for (const char* name : {"ldr_resblock", "ldr_leaves"}) {
    std::string path = model_path(std::string(name) + ".pt");
    if (path.empty()) return;
    Diagnostics diags;
    auto g = load_torchscript(path, diags);
    auto keys = read_lines(model_path(std::string(name) + ".keys"));
    CHECK(g->weights().names() == keys);
  }
  Diagnostics diags;
  auto g = load_torchscript(model_path("ldr_resblock.pt"), diags);
  CHECK(g->weights().at("conv1.weight").is_param);
  CHECK_FALSE(g->weights().at("bn1.running_mean").is_param);
  CHECK(g->weights().at("conv1.weight").tensor.sizes().vec() == std::vector<int64_t>{8, 3, 7, 7});
  CHECK_FALSE(g->weights().at("conv1.weight").tensor.requires_grad());
}

TEST_CASE("torchscript: an unknown ATen op falls back with a warning") {
  std::string path = model_path("ldr_unknown_op.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  Node* unknown = nullptr;
  for (Node* n : g->all_nodes())
    if (n->op() == "aten::_log_softmax.default") unknown = n;
  REQUIRE(unknown);
  CHECK(is_aten_fallback(unknown->op()));
  CHECK(written_as_torch_ops(unknown->op()));
  CHECK(unknown->input(0)->node()->op() == "nn.Linear");
  REQUIRE(has_diag(diags, "aten-fallback"));
  for (const auto& d : diags.items())
    if (d.code == "aten-fallback") CHECK(d.message.find("aten::_log_softmax") != std::string::npos);
}

TEST_CASE("torchscript: every leaf recipe") {
  std::string path = model_path("ldr_leaves.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  for (const std::string& line : read_lines(model_path("ldr_leaves.txt"))) {
    std::istringstream is(line);
    std::string mpath, op;
    is >> mpath >> op;
    auto nodes = module_nodes(*g, mpath);
    CHECK_MESSAGE(!nodes.empty(), mpath << " was not lifted as " << op);
    for (Node* n : nodes)
      CHECK_MESSAGE(n->op() == op, mpath << " is " << n->op() << ", expected " << op);
  }
  // InstanceNorm3d without affine/stats: num_features is unknown, so it is inlined, with a note.
  CHECK(module_nodes(*g, "in3").empty());
  bool inlined_in3 = false;
  for (Node* n : g->all_nodes())
    if (n->scope() == "in3" && n->op() == "F.instance_norm") inlined_in3 = true;
  CHECK(inlined_in3);
  CHECK(has_diag(diags, "leaf-inlined"));

  const Attrs& c2 = only_module_node(*g, "c2")->attrs();
  CHECK(c2.get_str("padding_mode") == "reflect");
  CHECK(c2.get_ints("padding") == std::vector<int64_t>{1, 1});
  CHECK(only_module_node(*g, "c2s")->attrs().get_str("padding") == "same");
  const Attrs& ct2 = only_module_node(*g, "ct2")->attrs();
  CHECK(ct2.get_int("in_channels") == 4);
  CHECK(ct2.get_int("out_channels") == 6);
  CHECK(ct2.get_int("groups") == 2);
  CHECK(ct2.get_ints("output_padding") == std::vector<int64_t>{1, 1});
  const Attrs& bn2 = only_module_node(*g, "bn2")->attrs();
  CHECK_FALSE(bn2.get_bool("affine", true));
  CHECK(bn2.get_float("momentum") == doctest::Approx(0.2));
  CHECK(bn2.get_float("eps") == doctest::Approx(1e-3));
  CHECK(only_module_node(*g, "gelu")->attrs().get_str("approximate") == "tanh");
  CHECK(only_module_node(*g, "softmax")->attrs().get_int("dim") == 1);
  CHECK(only_module_node(*g, "relu6")->attrs().get_bool("inplace"));
  CHECK(only_module_node(*g, "lrelu")->attrs().get_float("negative_slope") == doctest::Approx(0.2));
  CHECK(only_module_node(*g, "prelu")->attrs().get_int("num_parameters") == 6);
  CHECK(only_module_node(*g, "drop")->attrs().get_float("p") == doctest::Approx(0.3));
  CHECK(only_module_node(*g, "mp2")->attrs().get_bool("ceil_mode"));
  CHECK_FALSE(only_module_node(*g, "ap2")->attrs().get_bool("count_include_pad", true));
  const Attrs& up = only_module_node(*g, "up")->attrs();
  CHECK(up.get_str("mode") == "nearest");
  CHECK(std::get<std::vector<double>>(*up.find("scale_factor")) == std::vector<double>{2.0, 2.0});
  const Attrs& upb = only_module_node(*g, "upb")->attrs();
  CHECK(upb.get_ints("size") == std::vector<int64_t>{7, 9});
  CHECK(upb.get_bool("align_corners"));
  CHECK(only_module_node(*g, "zp")->attrs().get_ints("padding") ==
        std::vector<int64_t>{1, 2, 3, 4});
  CHECK(only_module_node(*g, "cp")->attrs().get_float("value") == doctest::Approx(0.5));
  auto emb = module_nodes(*g, "emb");
  CHECK(emb.size() == 4);  // called four times: forward, forward1, ...
  CHECK(emb[0]->attrs().get_int("padding_idx") == 0);
  CHECK(emb[0]->attrs().get_int("num_embeddings") == 10);

  Node* lstm = only_module_node(*g, "lstm");
  CHECK(lstm->attrs().get_int("input_size") == 8);
  CHECK(lstm->attrs().get_int("hidden_size") == 4);
  CHECK(lstm->attrs().get_int("num_layers") == 2);
  CHECK(lstm->attrs().get_bool("batch_first"));
  CHECK(lstm->attrs().get_bool("bidirectional"));
  CHECK(lstm->attrs().get_int("proj_size", -1) == 0);
  CHECK(lstm->weights().size() == 16);
  REQUIRE(lstm->num_outputs() == 1);
  CHECK(lstm->output()->type().kind == Type::Kind::Tuple);
  REQUIRE(lstm->output()->num_uses() == 1);
  CHECK(lstm->output()->uses()[0].user->op() == "prim.TupleUnpack");
  CHECK(only_module_node(*g, "lstmp")->attrs().get_int("proj_size") == 3);
  Node* gru = only_module_node(*g, "gru");
  CHECK(gru->attrs().get_int("hidden_size") == 5);
  CHECK_FALSE(gru->attrs().has("proj_size"));
}

TEST_CASE("torchscript: a subclass with its own forward is inlined, not a leaf") {
  std::string path = model_path("ldr_subclass.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  CHECK(module_nodes(*g, "conv").empty());
  bool conv = false, mul = false;
  for (Node* n : g->all_nodes()) {
    if (n->scope() == "conv" && n->op() == "F.conv2d") conv = true;
    if (n->scope() == "conv" && n->op() == "torch.mul") mul = true;
  }
  CHECK(conv);
  CHECK(mul);
  CHECK(only_module_node(*g, "plain")->op() == "nn.Conv2d");
}

TEST_CASE("torchscript: functional code and tracer noise") {
  std::string path = model_path("ldr_functional.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  CHECK(diags.size() == 0);
  std::map<std::string, int> ops;
  for (Node* n : g->all_nodes()) ++ops[n->op()];
  for (const char* op :
       {"F.conv2d", "F.relu", "F.interpolate", "Tensor.view", "Tensor.permute", "Tensor.contiguous",
        "Tensor.reshape", "Tensor.slice", "torch.arange", "Tensor.to", "Tensor.chunk", "torch.cat",
        "torch.flip", "F.softmax", "F.pad", "Tensor.mean", "Tensor.size", "prim.GetAttr"})
    CHECK_MESSAGE(ops[op] > 0, "missing " << op);
  CHECK(ops["prim.NumToTensor"] == 0);  // folded: aten::Int(prim::NumToTensor(n)) -> n
  CHECK(ops["Tensor.slice"] == 3);      // x[:, :, ::2] etc.: the full `:` slices are folded
  for (const auto& [op, count] : ops) CHECK_MESSAGE(op.find("::") == std::string::npos, op);
  for (Node* n : g->all_nodes()) {
    if (n->op() == "F.conv2d") {
      REQUIRE(n->num_inputs() == 7);  // conv2d schema order, not _convolution's
      CHECK(n->input(1)->node()->weight("value") == "w");
    }
    if (n->op() == "F.interpolate") {
      REQUIRE(n->num_inputs() == 5);
      CHECK(std::get<std::string>(*n->input(3)->constant()) == "bilinear");
      CHECK(std::get<bool>(*n->input(4)->constant()) == false);
    }
    if (n->op() == "Tensor.to") {
      REQUIRE(n->num_inputs() == 5);
      CHECK(n->input(1)->type().kind == Type::Kind::ScalarType);
      CHECK(std::get<DType>(*n->input(1)->constant()) == DType::F32);
    }
    if (n->op() == "torch.arange") CHECK(n->num_inputs() == 7);
  }
  REQUIRE(g->outputs().size() == 1);
  CHECK(g->outputs()[0]->node()->op() == "prim.TupleConstruct");
  CHECK(g->outputs()[0]->node()->num_inputs() == 3);
}

TEST_CASE("torchscript: tensor constants") {
  std::string path = model_path("ldr_bigconst.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  CHECK(has_diag(diags, "tensor-constant"));
  const Weight* w = g->weights().find("_constants.c0");
  REQUIRE(w);
  CHECK_FALSE(w->is_param);
  CHECK(w->tensor.numel() == 100);
  bool small = false;
  for (Node* n : g->all_nodes())
    if (const AttrValue* c = n->outputs().empty() ? nullptr : n->output()->constant())
      if (std::holds_alternative<at::Tensor>(*c)) small = true;
  CHECK(small);
}

TEST_CASE("torchscript: bad inputs give one-line errors with exit codes") {
  std::string msg;
  std::string p = model_path("ldr_scripted_if.pt");
  if (!p.empty()) {
    // Scripted control flow is lifted (issue 6): one prim.If with a block per branch.
    CHECK(load_error(p, msg) == ExitCode::Ok);
    Diagnostics d;
    auto g = load_torchscript(p, d);
    size_t ifs = 0;
    for (Node* n : g->all_nodes())
      if (n->is("prim.If")) {
        ++ifs;
        CHECK(n->blocks().size() == 2);
        CHECK(n->num_outputs() == 1);
      }
    CHECK(ifs == 1);
  }
  p = model_path("ldr_state_dict.pth");
  if (!p.empty()) {
    CHECK(load_error(p, msg) == ExitCode::BadInput);
    CHECK(msg.find("state_dict") != std::string::npos);
  }
  p = model_path("ldr_pickled_module.pth");
  if (!p.empty()) {
    CHECK(load_error(p, msg) == ExitCode::BadInput);
    CHECK(msg.find("torch.jit.trace") != std::string::npos);
  }
  p = model_path("ldr_truncated.pt");
  if (!p.empty()) {
    CHECK(load_error(p, msg) == ExitCode::BadInput);
    CHECK(msg.find('\n') == std::string::npos);
  }
  CHECK(load_error("/nonexistent/model.pt", msg) == ExitCode::BadInput);
}

// Note [Sharing prepared graphs]: 12 instances of one scripted block type in 3 variants of their
// config attributes are prepared once per variant (plus at most the container's own forward),
// not once per instance, and each instance still computes with its own values.
TEST_CASE("torchscript: instances of one scripted type share prepared graphs by their attributes") {
  std::string p = model_path("ldr_scripted_shared.pt");
  if (p.empty()) return;
  uint64_t before = loader_op_counts().scripted_graphs_prepared;
  Diagnostics d;
  auto g = load_torchscript(p, d);
  uint64_t prepared = loader_op_counts().scripted_graphs_prepared - before;
  CHECK(prepared >= 3);  // use_res true / false, scale 3.0: never merged
  CHECK(prepared <= 4);  // not 12
  for (int i = 0; i < 12; ++i) {
    std::string scope = std::to_string(i);
    size_t adds = 0;
    std::vector<double> scales;
    for (Node* n : g->all_nodes()) {
      if (n->scope() != scope) continue;
      if (n->is("torch.add")) ++adds;
      if (n->is("torch.mul"))
        if (const AttrValue* c = n->input(1)->constant())
          if (const double* v = std::get_if<double>(c)) scales.push_back(*v);
    }
    CAPTURE(i);
    CHECK(adds == (i % 3 != 0 ? 1u : 0u));
    REQUIRE(scales.size() == 1);
    CHECK(scales[0] == (i == 7 ? 3.0 : 2.0));
  }
}
