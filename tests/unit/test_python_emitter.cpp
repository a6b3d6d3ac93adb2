// Python emitter: text checks on hand-built graphs, goldens in testdata/emitters/, and the strong
// check in Python (pyflakes clean, importable, state_dict keys and order equal the graph's
// weights, __main__ runs, numbers match a reference).
#include "emitters/python.h"
#include "ir/op_table.h"
#include "loaders/tir_parser.h"
#include "loaders/torch_io.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <doctest/doctest.h>
#include "python_session.h"
#include "source_dir.h"
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

using namespace tt;
namespace fs = std::filesystem;

namespace {

const char* kPython = "/usr/bin/python3";

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tt_pyemit_XXXXXX").string();
    char* p = mkdtemp(tmpl.data());
    REQUIRE(p != nullptr);
    path = p;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs a shell command, returning its exit status and combined output.
int run(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) output.append(buf.data(), n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool python_has_torch() {
  static const bool ok = [] {
    std::string out;
    return run(std::string(kPython) + " -c 'import torch, pyflakes'", out) == 0;
  }();
  return ok;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t c = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++c;
  return c;
}

// Names assigned in forward() must never be digits-only or v123-style.
void check_readable_names(const std::string& py) {
  std::regex assign(R"(^        ([A-Za-z0-9_, ]+?),? = )");
  std::istringstream lines(py);
  std::string line;
  bool in_forward = false;
  while (std::getline(lines, line)) {
    if (line.rfind("    def forward", 0) == 0)
      in_forward = true;
    else if (line.rfind("    def ", 0) == 0 || line.rfind("if __name__", 0) == 0)
      in_forward = false;
    std::smatch m;
    if (!in_forward || !std::regex_search(line, m, assign)) continue;
    std::stringstream names(m[1].str());
    std::string name;
    while (std::getline(names, name, ',')) {
      while (!name.empty() && name.front() == ' ') name.erase(0, 1);
      INFO("line: " << line);
      CHECK_FALSE(std::regex_match(name, std::regex(R"(\d+)")));
      CHECK_FALSE(std::regex_match(name, std::regex(R"(v\d+)")));
    }
  }
}

at::Tensor randn(std::vector<int64_t> shape, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, gen);
}

Node* module_op(Graph& g, const std::string& op, const std::string& path,
                std::vector<Value*> inputs, std::vector<std::pair<std::string, AttrValue>> attrs,
                std::vector<std::string> weight_keys, const std::string& scope = "") {
  Node* n = g.insert(op, inputs, 1, nullptr);
  for (auto& [k, v] : attrs) n->attrs().set(k, v);
  for (const auto& k : weight_keys) n->set_weight(k, path + "." + k);
  n->set_module(path);
  n->set_scope(scope);
  return n;
}

Value* cint(Graph& g, int64_t v) { return g.constant(v, Type::of(Type::Kind::Int)); }

// x -> conv1 -> bn1 -> relu, like the head of a ResNet.
std::unique_ptr<Graph> conv_bn_relu() {
  auto g = std::make_unique<Graph>();
  g->set_name("tiny");
  Value* x = g->add_input(Type::tensor(DType::F32, {1, 3, 8, 8}), "x");
  Node* conv = module_op(*g, "nn.Conv2d", "conv1", {x},
                         {{"in_channels", int64_t(3)},
                          {"out_channels", int64_t(4)},
                          {"kernel_size", std::vector<int64_t>{3, 3}},
                          {"stride", std::vector<int64_t>{1, 1}},
                          {"padding", std::vector<int64_t>{1, 1}},
                          {"dilation", std::vector<int64_t>{1, 1}},
                          {"groups", int64_t(1)},
                          {"bias", false},
                          {"padding_mode", std::string("zeros")}},
                         {"weight"});
  Node* bn = module_op(*g, "nn.BatchNorm2d", "bn1", {conv->output()},
                       {{"num_features", int64_t(4)},
                        {"eps", 1e-5},
                        {"momentum", 0.1},
                        {"affine", true},
                        {"track_running_stats", true}},
                       {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  Node* relu = g->insert("F.relu", {bn->output()}, 1, nullptr);
  g->add_output(relu->output());
  g->weights().set("conv1.weight", {randn({4, 3, 3, 3}, 1), true});
  g->weights().set("bn1.weight", {randn({4}, 2), true});
  g->weights().set("bn1.bias", {randn({4}, 3), true});
  g->weights().set("bn1.running_mean", {randn({4}, 4), false});
  g->weights().set("bn1.running_var", {randn({4}, 5).abs() + 0.5, false});
  g->weights().set("bn1.num_batches_tracked", {at::zeros({}, at::kLong), false});
  return g;
}

// conv_bn_relu with float64 weights (num_batches_tracked stays int64) and a float64 input.
std::unique_ptr<Graph> conv_bn_relu_f64() {
  auto g = conv_bn_relu();
  g->inputs()[0]->set_type(Type::tensor(DType::F64, {1, 3, 8, 8}));
  for (const std::string& name : g->weights().names()) {
    auto w = g->weights().at(name);
    if (w.tensor.is_floating_point()) w.tensor = w.tensor.to(at::kDouble);
    g->weights().set(name, w);
  }
  return g;
}

// A graph with a nested Sequential-style path, a custom parameter on a container read with
// prim.GetAttr, a root buffer, a reused module, an aten fallback, indexing/view/cat/chunk and a
// tuple output.
std::unique_ptr<Graph> mixed() {
  auto g = std::make_unique<Graph>();
  g->set_name("mixed");
  Value* x = g->add_input(Type::tensor(DType::F32, {2, 4}), "x");
  Node* fc = module_op(*g, "nn.Linear", "layer1.0.fc", {x},
                       {{"in_features", int64_t(4)}, {"out_features", int64_t(4)}, {"bias", true}},
                       {"weight", "bias"}, "layer1.0");
  Node* scale = g->insert("prim.GetAttr", {}, 1, nullptr);
  scale->set_weight("value", "layer1.0.scale");
  scale->set_scope("layer1.0");
  Node* mul = g->insert("torch.mul", {fc->output(), scale->output()}, 1, nullptr);
  mul->set_scope("layer1.0");
  Node* act1 = module_op(*g, "nn.ReLU", "act", {mul->output()}, {{"inplace", false}}, {});
  Node* offset = g->insert("prim.GetAttr", {}, 1, nullptr);
  offset->set_weight("value", "offset");
  Node* add = g->insert("torch.add", {act1->output(), offset->output(), cint(*g, 1)}, 1, nullptr);
  Node* add2 = g->insert("torch.add", {add->output(), x, cint(*g, 2)}, 1, nullptr);
  Node* erfcx = g->insert("aten::special_erfcx.default", {add2->output()}, 1, nullptr);
  Node* act2 = module_op(*g, "nn.ReLU", "act", {erfcx->output()}, {{"inplace", false}}, {});
  // n = x.size(0); v = act2.view(n, -1); s = v[:, 1:]; a, b = s.chunk(...)... kept small:
  Node* size = g->insert("Tensor.size", {x, cint(*g, 0)}, 1, nullptr);
  size->output()->set_type(Type::of(Type::Kind::Int));
  Node* shape = g->insert("prim.ListConstruct", {size->output(), cint(*g, -1)}, 1, nullptr);
  Node* view = g->insert("Tensor.view", {act2->output(), shape->output()}, 1, nullptr);
  Value* none = g->constant(NoneAttr{}, Type::of(Type::Kind::None));
  Node* slice = g->insert("Tensor.slice",
                          {view->output(), cint(*g, 1), cint(*g, 1),
                           cint(*g, std::numeric_limits<int64_t>::max()), cint(*g, 1)},
                          1, nullptr);
  (void)none;
  Node* chunk = g->insert("Tensor.chunk", {x, cint(*g, 2), cint(*g, 1)}, 1, nullptr);
  chunk->output()->set_type(Type::list(Type::tensor(DType::F32)));
  Node* unpack = g->insert("prim.ListUnpack", {chunk->output()}, 2, nullptr);
  Node* parts = g->insert("prim.ListConstruct", {unpack->output(1), unpack->output(0)}, 1, nullptr);
  Node* cat = g->insert("torch.cat", {parts->output(), cint(*g, 1)}, 1, nullptr);
  Node* out = g->insert("prim.TupleConstruct", {act1->output(), slice->output(), cat->output()}, 1,
                        nullptr);
  for (Node* n : {fc, mul, act1, add, add2, erfcx, act2, view, slice, cat})
    n->output()->set_type(Type::tensor(DType::F32));
  g->add_output(out->output());

  g->weights().set("offset", {randn({4}, 10), false});
  g->weights().set("layer1.0.scale", {randn({4}, 11), true});
  g->weights().set("layer1.0.fc.weight", {randn({4, 4}, 12), true});
  g->weights().set("layer1.0.fc.bias", {randn({4}, 13), true});
  return g;
}

// The flat layout (--flat): these cases check how nodes and modules are written; the classes of
// the default layout are checked by the "python emitter: classes" cases and tests/e2e.
std::string emit(const Graph& g, const std::string& cls, const std::string& weights_file,
                 std::vector<InputSpec> examples = {}, bool flat = true) {
  PythonEmitOptions o;
  o.flat = flat;
  o.class_name = cls;
  o.weights_file = weights_file;
  o.example_inputs = std::move(examples);
  Diagnostics d;
  return emit_python(g, o, d);
}

// Golden files: testdata/emitters/<name>.py; TT_UPDATE_GOLDEN=1 rewrites them.
void check_golden(const std::string& name, const std::string& text) {
  fs::path p = fs::path(TT_SOURCE_DIR) / "testdata" / "emitters" / (name + ".py");
  if (std::getenv("TT_UPDATE_GOLDEN")) {
    fs::create_directories(p.parent_path());
    write_file(p, text);
  }
  REQUIRE_MESSAGE(fs::exists(p), "missing golden " << p << " (run with TT_UPDATE_GOLDEN=1)");
  CHECK(read_file(p) == text);
}

// Writes the module and the graph's weights, then runs `check` (Python source) with `module`
// importable and `names` = the graph's weight names in order. Returns the script's output.
void run_python_checks(const Graph& g, const std::string& py, const std::string& stem,
                       const std::string& check) {
  if (!python_has_torch()) {
    MESSAGE("skipped: /usr/bin/python3 lacks torch or pyflakes");
    return;
  }
  TempDir dir;
  write_file(dir.path / (stem + ".py"), py);
  std::vector<std::pair<std::string, at::Tensor>> items;
  for (const auto& n : g.weights().names()) items.emplace_back(n, g.weights().at(n).tensor);
  save_tensor_dict((dir.path / (stem + ".pth")).string(), items);
  std::string out;
  int rc = run(std::string(kPython) + " -m pyflakes " + (dir.path / (stem + ".py")).string(), out);
  INFO("pyflakes: " << out);
  CHECK(rc == 0);
  CHECK(out.empty());

  nlohmann::json names = g.weights().names();
  std::string script =
      "import importlib.util, json, runpy, sys\n"
      "import torch\n"
      "spec = importlib.util.spec_from_file_location('" +
      stem + "', r'" + (dir.path / (stem + ".py")).string() +
      "')\n"
      "module = importlib.util.module_from_spec(spec)\n"
      "spec.loader.exec_module(module)\n"
      "names = json.loads(r'''" +
      names.dump() + "''')\n" + check +
      "\nprint('--- __main__ ---')\n"
      "runpy.run_path(spec.origin, run_name='__main__')\n";
  write_file(dir.path / "check.py", script);
  rc = test::run_python({(dir.path / "check.py").string()}, out);
  INFO("python: " << out);
  CHECK(rc == 0);
}

// Runs `script` (Python, with torch) on `rows` (passed as the path of a JSON file in argv[1]);
// the script collects the rows that fail in `bad`, which are printed, and fail the test.
void check_rows_in_python(const nlohmann::json& rows, const std::string& script) {
  TempDir dir;
  write_file(dir.path / "rows.json", rows.dump());
  write_file(dir.path / "check.py",
             script + "\nfor b in bad:\n    print(b)\nsys.exit(1 if bad else 0)\n");
  std::string out;
  int rc =
      test::run_python({(dir.path / "check.py").string(), (dir.path / "rows.json").string()}, out);
  INFO(out);
  CHECK(rc == 0);
}

}  // namespace

// conv_bn_relu's result `y` from the generated `model` on `x`, and a reference `ref` from
// the weights `sd` with torch.nn.functional.
const char* const kConvBnReluRef =
    "ref = torch.nn.functional.relu(torch.nn.functional.batch_norm(\n"
    "    torch.nn.functional.conv2d(x, sd['conv1.weight'], None, 1, 1),\n"
    "    sd['bn1.running_mean'], sd['bn1.running_var'], sd['bn1.weight'], sd['bn1.bias'],\n"
    "    False, 0.1, 1e-5))\n"
    "with torch.no_grad():\n"
    "    y = model(x)\n";

TEST_CASE("python emitter: conv-bn-relu chain") {
  auto g = conv_bn_relu();
  // The relu's output has no source name: the emitter must derive one.
  REQUIRE(std::regex_match(g->outputs()[0]->name(), std::regex(R"(\d+)")));
  std::string py = emit(*g, "TinyNet", "tiny.pth");
  INFO(py);
  CHECK(py.find("import torch\n") != std::string::npos);
  CHECK(py.find("import torch.nn as nn\n") != std::string::npos);
  CHECK(py.find("import torch.nn.functional as F\n") != std::string::npos);
  CHECK(py.find("class TinyNet(nn.Module):\n    def __init__(self):\n") != std::string::npos);
  CHECK(py.find("self.conv1 = nn.Conv2d(3, 4, kernel_size=3, padding=1, bias=False)\n") !=
        std::string::npos);
  CHECK(py.find("self.bn1 = nn.BatchNorm2d(4)\n") != std::string::npos);
  CHECK(py.find("    def forward(self, x):\n") != std::string::npos);
  CHECK(py.find("conv1 = self.conv1(x)\n") != std::string::npos);
  CHECK(py.find("bn1 = self.bn1(conv1)\n") != std::string::npos);
  CHECK(py.find("return F.relu(bn1)\n") != std::string::npos);  // a number: written inline
  CHECK(py.find("torch.load(weights_path)") != std::string::npos);
  CHECK(py.find("\"tiny.pth\"") != std::string::npos);
  CHECK(py.find("x = torch.randn(1, 3, 8, 8)\n") != std::string::npos);
  CHECK(py.find("torch.manual_seed(0)") != std::string::npos);
  CHECK(py.find("with torch.no_grad():") != std::string::npos);
  check_readable_names(py);
  check_golden("conv_bn_relu", py);

  run_python_checks(
      *g, py, "tiny",
      "model = module.TinyNet()\n"
      "assert list(model.state_dict().keys()) == names, list(model.state_dict().keys())\n"
      "sd = torch.load(spec.origin[:-3] + '.pth')\n"
      "model.load_state_dict(sd, strict=True)\n"
      "model.eval()\n"
      "x = torch.randn(1, 3, 8, 8)\n" +
          std::string(kConvBnReluRef) +
          "assert torch.allclose(y, ref, rtol=1e-5, atol=1e-6), (y - ref).abs().max()\n");
}

// What the mixed() graph computes, in whichever layout it is written.
const char* const kMixedCheck =
    "model = module.Mixed()\n"
    "assert list(model.state_dict().keys()) == names, list(model.state_dict().keys())\n"
    "sd = torch.load(spec.origin[:-3] + '.pth')\n"
    "model.load_state_dict(sd, strict=True)\n"
    "x = torch.randn(2, 4)\n"
    "a, s, c = model(x)\n"
    "h = torch.relu(torch.nn.functional.linear(x, sd['layer1.0.fc.weight'], "
    "sd['layer1.0.fc.bias'])"
    " * sd['layer1.0.scale'])\n"
    "assert torch.allclose(a, h)\n"
    "h2 = torch.relu(torch.special.erfcx(h + sd['offset'] + 2 * x)).view(2, -1)[:, 1:]\n"
    "assert torch.allclose(s, h2, equal_nan=True)\n"
    "assert torch.equal(c, torch.cat([x[:, 2:], x[:, :2]], 1))\n";

TEST_CASE("python emitter: nested paths, shared module, GetAttr, fallback, tuple output") {
  auto g = mixed();
  std::string py = emit(*g, "Mixed", "mixed.pth");
  INFO(py);
  // __init__ in state_dict order; non-identifier attribute names through getattr/setattr.
  size_t buf = py.find("self.register_buffer(\"offset\", torch.empty(4))\n");
  size_t layer1 = py.find("self.layer1 = nn.Module()\n");
  size_t zero = py.find("setattr(self.layer1, \"0\", nn.Module())\n");
  size_t scale = py.find("getattr(self.layer1, \"0\").scale = nn.Parameter(torch.empty(4))\n");
  size_t fc = py.find("getattr(self.layer1, \"0\").fc = nn.Linear(4, 4)\n");
  size_t act = py.find("self.act = nn.ReLU()\n");
  CHECK(buf != std::string::npos);
  CHECK(layer1 != std::string::npos);
  CHECK(zero != std::string::npos);
  CHECK(scale != std::string::npos);
  CHECK(fc != std::string::npos);
  CHECK(act != std::string::npos);
  CHECK(buf < layer1);
  CHECK(layer1 < zero);
  CHECK(zero < scale);
  CHECK(scale < fc);
  CHECK(fc < act);
  CHECK(count(py, "nn.ReLU(") == 1);  // the shared module is declared once
  // forward
  CHECK(py.find("fc = getattr(self.layer1, \"0\").fc(x)\n") != std::string::npos);
  // Values without a source name are written inside their one reader (Note [Expressions
  // written inline]).
  CHECK(py.find("act = self.act(fc * getattr(self.layer1, \"0\").scale)\n") != std::string::npos);
  CHECK(py.find("act_1 = self.act(torch.ops.aten.special_erfcx.default(torch.add(act + "
                "self.offset, x, alpha=2)))\n") != std::string::npos);
  CHECK(py.find("chunk_0, chunk_1 = x.chunk(2, 1)\n") != std::string::npos);
  CHECK(py.find("return (act, act_1.view(x.size(0), -1)[:, 1:], torch.cat([chunk_1, chunk_0], "
                "1))\n") != std::string::npos);
  CHECK(py.find("import torch.nn.functional as F") == std::string::npos);  // F unused
  CHECK(py.find("act, slice, cat = model(x)\n") != std::string::npos);
  check_readable_names(py);
  check_golden("mixed", py);

  run_python_checks(*g, py, "mixed", kMixedCheck);
}

TEST_CASE("python emitter: nn modules with float64 weights get dtype=") {
  // Note [Float dtype of nn modules]: without dtype=, load_state_dict would copy the float64
  // weights into float32 parameters.
  auto g = conv_bn_relu_f64();
  std::string py = emit(*g, "TinyNet", "tiny64.pth");
  INFO(py);
  CHECK(py.find("self.conv1 = nn.Conv2d(3, 4, kernel_size=3, padding=1, bias=False, "
                "dtype=torch.float64)\n") != std::string::npos);
  CHECK(py.find("self.bn1 = nn.BatchNorm2d(4, dtype=torch.float64)\n") != std::string::npos);
  run_python_checks(
      *g, py, "tiny64",
      "model = module.TinyNet()\n"
      "sd = torch.load(spec.origin[:-3] + '.pth')\n"
      "model.load_state_dict(sd, strict=True)\n"
      "for k, v in model.state_dict().items():\n"
      "    assert v.dtype == sd[k].dtype and torch.equal(v, sd[k]), k\n"
      "model.eval()\n"
      "x = torch.randn(1, 3, 8, 8, dtype=torch.float64)\n" +
          std::string(kConvBnReluRef) +
          "assert y.dtype == torch.float64 and torch.equal(y, ref), (y - ref).abs().max()\n");
}

TEST_CASE("python emitter: an nn module whose weights mix float dtypes is refused") {
  auto g = conv_bn_relu_f64();
  auto w = g->weights().at("bn1.bias");
  w.tensor = w.tensor.to(at::kFloat);
  g->weights().set("bn1.bias", w);
  try {
    emit(*g, "TinyNet", "tiny.pth");
    FAIL("expected an error");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.code() == ExitCode::Unsupported);
    CHECK(std::string(e.what()).find("mix float dtypes") != std::string::npos);
  }
}

TEST_CASE("python emitter: classes: the default layout of the nested graph") {
  // layer1.0 (scope of fc and the scale multiply) becomes its own class with a forward; layer1,
  // whose child is named "0", derives from nn.Sequential and, its forward being that child, is
  // called as a whole; state_dict keys and numbers stay the same.
  auto g = mixed();
  std::string py = emit(*g, "Mixed", "mixed_classes.pth", {}, /*flat=*/false);
  INFO(py);
  CHECK(py.find("getattr(") == std::string::npos);
  CHECK(py.find("setattr(") == std::string::npos);
  CHECK(py.find("nn.Module()") == std::string::npos);
  CHECK(count(py, "\nclass ") == 3);  // layer1.0's class, layer1's (indexable), Mixed
  CHECK(py.find("class Mixed(nn.Module):") != std::string::npos);
  CHECK(py.find("(nn.Sequential):") != std::string::npos);  // layer1: children "0"
  CHECK(py.find("layer1 = self.layer1(x)\n") != std::string::npos);
  CHECK(py.find("        super().__init__(Layer1Item())\n") != std::string::npos);
  CHECK(py.find("        self.fc = nn.Linear(4, 4)\n") != std::string::npos);
  CHECK(py.find("        self.scale = nn.Parameter(torch.empty(4))\n") != std::string::npos);
  run_python_checks(*g, py, "mixed_classes", kMixedCheck);
}

TEST_CASE("python emitter: constants, keywords and defaults") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {1, 2, 6, 6}), "x");
  // F.leaky_relu(x, 0.2); F.max_pool2d with int[2] lists collapsed and trailing defaults dropped.
  Node* lr =
      g.insert("F.leaky_relu", {x, g.constant(0.2, Type::of(Type::Kind::Float))}, 1, nullptr);
  auto ints = [&](std::vector<int64_t> v) {
    return g.constant(v, Type::list(Type::of(Type::Kind::Int)));
  };
  Node* mp = g.insert("F.max_pool2d",
                      {lr->output(), ints({3, 3}), ints({2, 2}), ints({1, 1}), ints({1, 1}),
                       g.constant(false, Type::of(Type::Kind::Bool))},
                      1, nullptr);
  // softmax's dtype=None keyword is dropped; to(dtype) prints torch.float64.
  Node* sm = g.insert(
      "F.softmax", {mp->output(), cint(g, 1), g.constant(NoneAttr{}, Type::of(Type::Kind::None))},
      1, nullptr);
  Node* to = g.insert(
      "Tensor.to",
      {sm->output(), g.constant(int64_t(7), Type::of(Type::Kind::ScalarType)),
       g.constant(false, Type::of(Type::Kind::Bool)), g.constant(false, Type::of(Type::Kind::Bool)),
       g.constant(NoneAttr{}, Type::of(Type::Kind::None))},
      1, nullptr);
  // torch.div with rounding_mode keeps the call; flatten drops end_dim=-1.
  Node* div = g.insert("torch.div",
                       {to->output(), g.constant(2.0, Type::of(Type::Kind::Float)),
                        g.constant(std::string("floor"), Type::of(Type::Kind::Str))},
                       1, nullptr);
  Node* flat = g.insert("torch.flatten", {div->output(), cint(g, 1), cint(g, -1)}, 1, nullptr);
  Node* zeros = g.insert("torch.zeros",
                         {ints({2, 3}), g.constant(int64_t(4), Type::of(Type::Kind::ScalarType)),
                          g.constant(int64_t(0), Type::of(Type::Kind::Layout)),
                          g.constant(DeviceAttr{"cpu"}, Type::of(Type::Kind::Device)),
                          g.constant(false, Type::of(Type::Kind::Bool))},
                         1, nullptr);
  Node* contig = g.insert(
      "Tensor.contiguous",
      {zeros->output(), g.constant(int64_t(1), Type::of(Type::Kind::MemoryFormat))}, 1, nullptr);
  Node* tens = g.insert("torch.add",
                        {contig->output(), g.constant(at::tensor({1.5f, -0.1f, 1e-7f}),
                                                      Type::tensor(DType::F32, {3}))},
                        1, nullptr);
  Node* tup = g.insert("prim.TupleConstruct", {flat->output(), tens->output()}, 1, nullptr);
  g.add_output(tup->output());
  std::string py = emit(g, "Consts", "consts.pth");
  INFO(py);
  CHECK(py.find("F.leaky_relu(x, 0.2)") != std::string::npos);
  // Calls nest at most two deep inside a statement's call (Note [Expressions written inline]).
  CHECK(py.find("softmax = F.softmax(F.max_pool2d(F.leaky_relu(x, 0.2), 3, 2, 1), 1)\n") !=
        std::string::npos);
  CHECK(py.find("flatten = torch.flatten(torch.div(softmax.to(torch.float64), 2.0, "
                "rounding_mode=\"floor\"), 1)\n") != std::string::npos);
  // the options a trace records although they are PyTorch's defaults are left out
  CHECK(py.find("torch.zeros([2, 3], dtype=torch.int64)") != std::string::npos);
  CHECK(py.find(".contiguous(memory_format=torch.preserve_format) + torch.tensor([1.5, -0.1, "
                "1e-07]))") != std::string::npos);
  CHECK(py.find("return (flatten, torch.zeros(") != std::string::npos);
  check_readable_names(py);

  run_python_checks(g, py, "consts",
                    "model = module.Consts()\n"
                    "x = torch.randn(1, 2, 6, 6)\n"
                    "f, a = model(x)\n"
                    "r = torch.div(torch.softmax(torch.nn.functional.max_pool2d(\n"
                    "    torch.nn.functional.leaky_relu(x, 0.2), 3, 2, 1), 1).double(), 2.0, "
                    "rounding_mode='floor')\n"
                    "assert torch.equal(f, r.flatten(1))\n"
                    "assert a.dtype == torch.float32 and a.shape == (2, 3)\n");
}

TEST_CASE("python emitter: module constructor arguments") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {1, 4, 8, 8}), "input");
  Node* mp = module_op(g, "nn.MaxPool2d", "features.0.pool", {x},
                       {{"kernel_size", std::vector<int64_t>{3, 3}},
                        {"stride", std::vector<int64_t>{2, 2}},
                        {"padding", std::vector<int64_t>{1, 1}},
                        {"dilation", std::vector<int64_t>{1, 1}},
                        {"return_indices", false},
                        {"ceil_mode", false}},
                       {});
  Node* ln = module_op(
      g, "nn.LayerNorm", "norm", {mp->output()},
      {{"normalized_shape", std::vector<int64_t>{4}}, {"eps", 1e-6}, {"elementwise_affine", true}},
      {"weight", "bias"});
  Node* pool = module_op(g, "nn.AdaptiveAvgPool2d", "avgpool", {ln->output()},
                         {{"output_size", std::vector<int64_t>{1, 2}}}, {});
  g.add_output(pool->output());
  g.weights().set("norm.weight", {at::ones({4}), true});
  g.weights().set("norm.bias", {at::zeros({4}), true});
  std::string py = emit(g, "Ctors", "ctors.pth");
  INFO(py);
  CHECK(py.find("self.features = nn.Module()\n") != std::string::npos);
  CHECK(py.find("setattr(self.features, \"0\", nn.Module())\n") != std::string::npos);
  CHECK(py.find("getattr(self.features, \"0\").pool = nn.MaxPool2d(kernel_size=3, stride=2, "
                "padding=1)\n") != std::string::npos);
  CHECK(py.find("self.norm = nn.LayerNorm(4, eps=1e-06)\n") != std::string::npos);
  CHECK(py.find("self.avgpool = nn.AdaptiveAvgPool2d((1, 2))\n") != std::string::npos);
  CHECK(py.find("pool = getattr(self.features, \"0\").pool(input)\n") != std::string::npos);
  // The input shape is complete: __main__ makes an example from it.
  CHECK(py.find("input = torch.randn(1, 4, 8, 8)\n") != std::string::npos);
  check_readable_names(py);
}

TEST_CASE("python emitter: example inputs") {
  Graph g;
  Value* ids = g.add_input(Type::tensor(DType::I64), "ids");
  Value* mask = g.add_input(Type::tensor(), "mask");
  Node* a = g.insert("torch.mul", {ids, mask}, 1, nullptr);
  g.add_output(a->output());
  SUBCASE("unknown shapes: the weights still load, and the user is told how to get examples") {
    std::string py = emit(g, "M", "m.pth");
    INFO(py);
    CHECK(py.find("model.load_state_dict(torch.load(weights_path), strict=True)") !=
          std::string::npos);
    CHECK(py.find("--input-shape") != std::string::npos);
    CHECK(py.find("model(") == std::string::npos);
  }
  SUBCASE("given shapes: randint for ints, randn for floats") {
    std::string py = emit(g, "M", "m.pth", {{{2, 5}, DType::I64}, {{2, 5}, DType::F16}});
    INFO(py);
    CHECK(py.find("ids = torch.randint(0, 10, (2, 5))\n") != std::string::npos);
    CHECK(py.find("mask = torch.randn(2, 5, dtype=torch.float16)\n") != std::string::npos);
    CHECK(py.find("output = model(ids, mask)\n") != std::string::npos);
    // The output's type is unknown: shapes are printed only for tensors.
    CHECK(py.find("print(\"output:\", tuple(output.shape) if isinstance(output, torch.Tensor) else "
                  "output)") != std::string::npos);
  }
  SUBCASE("the wrong number of shapes is a usage error") {
    PythonEmitOptions o;
    o.class_name = "M";
    o.weights_file = "m.pth";
    o.example_inputs = {{{1}, DType::F32}};
    Diagnostics d;
    try {
      emit_python(g, o, d);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::Usage);
    }
  }
}

TEST_CASE("python emitter: names from the IR, made safe for Python") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {2}), "lambda");  // a keyword
  Node* a = g.insert("F.relu", {x}, 1, nullptr);
  a->output()->set_name("torch");  // would shadow the module
  Node* b = g.insert("torch.neg", {a->output()}, 1, nullptr);
  b->output()->set_name("out");
  Node* c = g.insert("int", {b->output()}, 1, nullptr);  // op hint "int" must not shadow int()
  Node* d = g.insert("torch.sigmoid", {b->output()}, 1, nullptr);
  Node* e = g.insert("torch.tanh", {b->output()}, 1, nullptr);  // unused and pure: no dead code
  g.add_output(d->output());
  g.add_output(c->output());
  g.add_output(c->output());  // read twice: a statement of its own, with a name from the op
  (void)e;
  std::string py = emit(g, "Names", "names.pth");
  INFO(py);
  CHECK(py.find("def forward(self, lambda_):") != std::string::npos);
  CHECK(py.find("torch_ = F.relu(lambda_)") != std::string::npos);
  CHECK(py.find("out = torch.neg(torch_)") != std::string::npos);
  CHECK(py.find(" = int(out)\n") != std::string::npos);
  CHECK(py.find("        int = ") == std::string::npos);  // the hint "int" must not shadow int()
  CHECK(py.find("tanh") == std::string::npos);
  CHECK(py.find("return torch.sigmoid(out), int_, int_\n") != std::string::npos);
  if (python_has_torch()) {
    TempDir dir;
    write_file(dir.path / "names.py", py);
    std::string out;
    CHECK(run(std::string(kPython) + " -m pyflakes " + (dir.path / "names.py").string(), out) == 0);
    INFO(out);
  }
}

TEST_CASE("python emitter: unsupported constructs throw Unsupported") {
  auto expect_unsupported = [](const Graph& g, const std::string& needle) {
    try {
      emit(g, "M", "m.pth");
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::Unsupported);
      INFO(e.what());
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  SUBCASE("control flow") {
    Graph g;
    Value* c = g.add_input(Type::of(Type::Kind::Bool), "c");
    Node* n = g.insert("prim.If", {c}, 1, nullptr);
    n->add_block();
    n->add_block();
    g.add_output(n->output());
    expect_unsupported(g, "prim.If");
  }
  SUBCASE("an op without a Python spelling") {
    Graph g;
    Value* x = g.add_input(Type::tensor(), "x");
    Node* n = g.insert("mystery.op", {x}, 1, nullptr);
    g.add_output(n->output());
    expect_unsupported(g, "mystery.op");
  }
  SUBCASE("a module op whose weight name does not match its path") {
    Graph g;
    Value* x = g.add_input(Type::tensor(), "x");
    Node* n = module_op(g, "nn.Linear", "fc", {x},
                        {{"in_features", int64_t(2)}, {"out_features", int64_t(2)}}, {});
    n->set_weight("weight", "other.weight");
    g.weights().set("other.weight", {at::zeros({2, 2}), true});
    g.add_output(n->output());
    expect_unsupported(g, "other.weight");
  }
}

TEST_CASE("python emitter: other torch.ops namespaces and kwarg-only arguments") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {3, 4}), "x");
  // aten::sum.dim_IntList(self, dim, keepdim=False, *, dtype=None): dtype must be a keyword.
  Node* s = g.insert("aten::sum.dim_IntList",
                     {x, g.constant(std::vector<int64_t>{0}, Type::list(Type::of(Type::Kind::Int))),
                      g.constant(true, Type::of(Type::Kind::Bool)),
                      g.constant(int64_t(7), Type::of(Type::Kind::ScalarType))},
                     1, nullptr);
  g.add_output(s->output());
  std::string py = emit(g, "Ops", "ops.pth");
  INFO(py);
  CHECK(py.find("return torch.ops.aten.sum.dim_IntList(x, 0, True, dtype=torch.float64)") !=
        std::string::npos);
  run_python_checks(g, py, "ops",
                    "y = module.Ops()(torch.ones(3, 4))\n"
                    "assert y.dtype == torch.float64 and y.shape == (1, 4)\n");
}

TEST_CASE("python emitter: torch.tensor of floats with a dtype converts as TorchScript does") {
  // Note [Float data of torch.tensor in TorchScript]: float32 first, then the dtype.
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F64, {2}), "x");
  Value* f64 = g.constant(int64_t(7), Type::of(Type::Kind::ScalarType));
  Value* none = g.constant(NoneAttr{}, Type::of(Type::Kind::None));
  Node* mean = g.insert(
      "torch.as_tensor",
      {g.constant(std::vector<double>{0.485, 0.1}, Type::list(Type::of(Type::Kind::Float))), f64,
       none},
      1, nullptr);
  Node* eps = g.insert("torch.tensor",
                       {g.constant(1e-6, Type::of(Type::Kind::Float)), f64, none,
                        g.constant(false, Type::of(Type::Kind::Bool))},
                       1, nullptr);
  Node* ints =
      g.insert("torch.tensor",
               {g.constant(std::vector<int64_t>{3, 4}, Type::list(Type::of(Type::Kind::Int))), f64,
                none, g.constant(false, Type::of(Type::Kind::Bool))},
               1, nullptr);
  Node* sum =
      g.insert("torch.add", {x, mean->output(), g.constant(int64_t(1), Type::of(Type::Kind::Int))},
               1, nullptr);
  Node* out =
      g.insert("prim.TupleConstruct", {sum->output(), eps->output(), ints->output()}, 1, nullptr);
  g.add_output(out->output());
  std::string py = emit(g, "Consts", "consts.pth");
  INFO(py);
  CHECK(py.find("torch.as_tensor([0.485, 0.1], device=None).to(torch.float64)") !=
        std::string::npos);
  CHECK(py.find("torch.tensor(1e-06).to(torch.float64)") != std::string::npos);
  CHECK(py.find("torch.tensor([3, 4], dtype=torch.float64)") != std::string::npos);  // ints
  run_python_checks(g, py, "consts",
                    "from typing import List\n"
                    "def ref(x):\n"
                    "    data: List[float] = [0.485, 0.1]\n"
                    "    return (x + torch.as_tensor(data, dtype=torch.float64),\n"
                    "            torch.tensor(1e-6, dtype=torch.float64),\n"
                    "            torch.tensor([3, 4], dtype=torch.float64))\n"
                    "x = torch.zeros(2, dtype=torch.float64)\n"
                    "got, want = module.Consts()(x), torch.jit.script(ref)(x)\n"
                    "assert got[0][0].item() != 0.485 and got[1].item() != 1e-6  # rounded\n"
                    "for a, b in zip(got, want):\n"
                    "    assert a.dtype == b.dtype and torch.equal(a, b), (a, b)\n");
}

// Note [Dropping default arguments] in python.cpp relies on the F.* wrappers having the ATen
// defaults for the arguments the op table passes positionally or by keyword. Check every row.
TEST_CASE("python emitter: F.* Python defaults agree with the ATen schema defaults") {
  if (!python_has_torch()) {
    MESSAGE("skipped: /usr/bin/python3 lacks torch");
    return;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const OpInfo& op : all_ops()) {
    if (op.kind != OpKind::Function || op.name.rfind("F.", 0) != 0 || op.name == "F.interpolate")
      continue;
    for (const std::string& q : op.aten) {
      size_t dot = q.find('.', q.find("::") + 2);
      std::string name = q.substr(0, dot),
                  overload = dot == std::string::npos ? "" : q.substr(dot + 1);
      auto h = c10::Dispatcher::singleton().findSchema({name, overload});
      REQUIRE_MESSAGE(h.has_value(), "no schema for " << q);
      const auto& args = h->schema().arguments();
      int positional = 0;
      for (size_t i = 0; i < args.size(); ++i) {
        std::string role = i < op.py_args.size() ? op.py_args[i] : "";
        if (role == "-" || role == "=") continue;
        if (python_enum(op.name, role)) continue;  // a string in Python (Note [Python enums])
        nlohmann::json row = {{"op", op.name}, {"aten", q}, {"arg", args[i].name()}};
        if (role.empty())
          row["position"] = positional++;
        else
          row["keyword"] = role;
        const auto& d = args[i].default_value();
        if (!d) continue;
        if (d->isNone())
          row["default"] = nullptr;
        else if (d->isBool())
          row["default"] = d->toBool();
        else if (d->isInt())
          row["default"] = d->toInt();
        else if (d->isDouble())
          row["default"] = d->toDouble();
        else if (d->isString())
          row["default"] = d->toStringRef();
        else if (d->isList()) {
          nlohmann::json l = nlohmann::json::array();
          for (const auto& e : d->toListRef()) l.push_back(e.toInt());
          row["default"] = l;
        } else
          continue;
        rows.push_back(row);
      }
    }
  }
  check_rows_in_python(rows, R"PY(
import inspect, json, sys
import torch.nn.functional as F
bad = []
for r in json.load(open(sys.argv[1])):
    fn = getattr(F, r["op"][2:])
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        continue  # a C++ builtin: its defaults are the schema's
    if any(q.kind in (q.VAR_POSITIONAL, q.VAR_KEYWORD) for q in params):
        continue  # a boolean_dispatch wrapper; checked through the module signatures instead
    if "keyword" in r:
        p = [q for q in params if q.name == r["keyword"]]
        p = p[0] if p else None
    else:
        p = params[r["position"]] if r["position"] < len(params) else None
    if p is None:
        bad.append((r, "no such parameter")); continue
    d, py = r["default"], p.default
    if py is inspect.Parameter.empty:
        bad.append((r, "required in Python")); continue
    ok = py == d
    ok = ok or (isinstance(d, list) and d == [] and py is None)  # stride=[] means kernel_size
    ok = ok or (isinstance(d, list) and len(d) > 0 and all(e == d[0] for e in d) and py == d[0])
    ok = ok or (r["arg"] == "padding_idx" and d == -1 and py is None)
    if not ok:
        bad.append((r, py))
)PY");
}

// Note [Spelled ATen ops] (lib/ir/op_table_aten.cpp): a torch.* / Tensor.* / torch.fft.* /
// torch.linalg.* / torch.special.* row with every input positional is written in schema order, so
// its Python function must exist and, where Python lists several signatures, one of them must take
// each overload's arguments by those names (self is the receiver of a method, `input` of a
// function; keyword-only ones by keyword; a Tensor argument where Python says Tensor).
TEST_CASE("python emitter: torch.* and Tensor.* rows are Python bindings of their overloads") {
  if (!python_has_torch()) {
    MESSAGE("skipped: /usr/bin/python3 lacks torch");
    return;
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const OpInfo& op : all_ops()) {
    bool method = op.kind == OpKind::Method, torch_fn = op.name.rfind("torch.", 0) == 0;
    if (!(method || (op.kind == OpKind::Function && torch_fn)) || !op.py_args.empty() ||
        is_attribute_op(op.name) || op.name == "Tensor.slice" || op.name == "Tensor.index" ||
        python_call_form(op.name))
      continue;  // keyword rows are checked by hand and e2e; subscripts and attributes are no
                 // calls; a call form (torch.unique for _unique2) is its own spelling
    for (const std::string& q : op.aten) {
      size_t dot = q.find('.', q.find("::") + 2);
      std::string name = q.substr(0, dot),
                  overload = dot == std::string::npos ? "" : q.substr(dot + 1);
      auto h = c10::Dispatcher::singleton().findSchema({name, overload});
      if (!h) continue;  // a TorchScript builtin (aten::is_contiguous): no Python binding to check
      nlohmann::json args = nlohmann::json::array();
      for (const auto& a : h->schema().arguments())
        args.push_back({{"name", a.name()},
                        {"kwarg_only", a.kwarg_only()},
                        {"tensor", a.type()->kind() == c10::TypeKind::TensorType}});
      rows.push_back({{"op", op.name}, {"aten", q}, {"args", args}});
    }
  }
  check_rows_in_python(rows, R"PY(
import json, re, sys
import torch
bad = []
for r in json.load(open(sys.argv[1])):
    parts = r["op"].split(".")
    fn = torch.Tensor if parts[0] == "Tensor" else torch
    for p in parts[1:]:
        fn = getattr(fn, p, None)
    if fn is None:
        bad.append((r["op"], "no such Python function")); continue
    method = parts[0] == "Tensor"
    args = r["args"][1:] if method else r["args"]
    if method and r["args"][0]["name"] != "self":
        bad.append((r["op"], r["aten"], "the receiver is not self")); continue
    try:  # the argument parser lists its signatures when none matches
        fn(*([torch.zeros(1)] if method else []), *[object()] * 12)
        continue
    except TypeError as e:
        sigs = re.findall(r"^ \* \((.*)\)$", str(e), re.M)
    except Exception:
        continue
    if not sigs:
        continue  # one signature (or a Python function): the e2e models call it
    positional = [a for a in args if not a["kwarg_only"]]
    names = [("input" if a["name"] == "self" and not method else a["name"]) for a in positional]
    kw = {a["name"] for a in args if a["kwarg_only"]}
    def fits(sig):
        params = [p.strip() for p in sig.split(", ") if p.strip()]
        star = params.index("*") if "*" in params else len(params)
        pos = [p.split("=")[0].split()[-1] for p in params[:star]]
        types = [p.split("=")[0].split()[0] for p in params[:star]]
        key = {p.split("=")[0].split()[-1] for p in params[star + 1:]}
        tensors = all(not a["tensor"] or t == "Tensor" for a, t in zip(positional, types))
        return pos[:len(names)] == names and kw <= key | set(pos) and tensors
    if not any(fits(s) for s in sigs):
        bad.append((r["op"], r["aten"], names, sorted(kw), sigs))
)PY");
}

TEST_CASE("python emitter: modules without weights are declared where they are first called") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {1, 4}), "x");
  auto linear = [&](const std::string& path, Value* in) {
    return module_op(g, "nn.Linear", path, {in},
                     {{"in_features", int64_t(4)}, {"out_features", int64_t(4)}, {"bias", false}},
                     {"weight"});
  };
  Node* a = linear("fc1", x);
  Node* r = module_op(g, "nn.ReLU", "relu", {a->output()}, {}, {});
  Node* b = linear("blocks.0.fc", r->output());
  Node* r2 = module_op(g, "nn.ReLU", "blocks.0.act", {b->output()}, {}, {});
  Node* c = linear("blocks.0.proj", r2->output());
  Node* p = module_op(g, "nn.Identity", "head", {c->output()}, {}, {});
  Node* d = linear("fc2", p->output());
  g.add_output(d->output());
  for (const char* w : {"fc1.weight", "blocks.0.fc.weight", "blocks.0.proj.weight", "fc2.weight"})
    g.weights().set(w, {at::zeros({4, 4}), true});
  std::string py = emit(g, "Order", "order.pth");
  INFO(py);
  std::vector<std::string> expected = {
      "self.fc1 = nn.Linear(4, 4, bias=False)\n",
      "self.relu = nn.ReLU()\n",
      "self.blocks = nn.Module()\n",
      "setattr(self.blocks, \"0\", nn.Module())\n",
      "getattr(self.blocks, \"0\").fc = nn.Linear(4, 4, bias=False)\n",
      "getattr(self.blocks, \"0\").act = nn.ReLU()\n",
      "getattr(self.blocks, \"0\").proj = nn.Linear(4, 4, bias=False)\n",
      "self.head = nn.Identity()\n",
      "self.fc2 = nn.Linear(4, 4, bias=False)\n",
  };
  size_t pos = 0;
  for (const auto& line : expected) {
    size_t at = py.find(line);
    INFO(line);
    REQUIRE(at != std::string::npos);
    CHECK(at >= pos);
    pos = at;
  }
}

TEST_CASE("python emitter: F.interpolate keeps only non-default keywords") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {1, 2, 4, 4}), "x");
  Node* up =
      g.insert("F.interpolate",
               {x, g.constant(NoneAttr{}, Type::of(Type::Kind::None)),
                g.constant(std::vector<double>{2.0, 2.0}, Type::list(Type::of(Type::Kind::Float))),
                g.constant(std::string("nearest"), Type::of(Type::Kind::Str)),
                g.constant(NoneAttr{}, Type::of(Type::Kind::None))},
               1, nullptr);
  Node* up2 = g.insert(
      "F.interpolate",
      {up->output(), g.constant(std::vector<int64_t>{5, 6}, Type::list(Type::of(Type::Kind::Int))),
       g.constant(NoneAttr{}, Type::of(Type::Kind::None)),
       g.constant(std::string("bilinear"), Type::of(Type::Kind::Str)),
       g.constant(false, Type::of(Type::Kind::Bool))},
      1, nullptr);
  g.add_output(up2->output());
  std::string py = emit(g, "F", "interp.pth");  // a class named F must not shadow the F import
  INFO(py);
  CHECK(py.find("class FModel(nn.Module):") != std::string::npos);
  CHECK(py.find("return F.interpolate(F.interpolate(x, scale_factor=[2.0, 2.0]), size=[5, 6], "
                "mode=\"bilinear\", align_corners=False)\n") != std::string::npos);
  run_python_checks(g, py, "interp",
                    "y = module.FModel()(torch.randn(1, 2, 4, 4))\n"
                    "assert y.shape == (1, 2, 5, 6), y.shape\n");
}

TEST_CASE("python emitter: inplace=True only where nothing else sees the mutated tensor") {
  auto build = [](int variant) {
    auto g = std::make_unique<Graph>();
    Value* x = g->add_input(Type::tensor(DType::F32, {1, 4}), "x");
    Node* fc =
        module_op(*g, "nn.Linear", "fc", {x},
                  {{"in_features", int64_t(4)}, {"out_features", int64_t(4)}}, {"weight", "bias"});
    g->weights().set("fc.weight", {at::zeros({4, 4}), true});
    g->weights().set("fc.bias", {at::zeros({4}), true});
    Value* in = variant == 0 ? fc->output() : x;  // variant 1: the graph input itself
    Node* relu = module_op(*g, "nn.ReLU", "relu", {in}, {{"inplace", true}}, {});
    Value* out = relu->output();
    if (variant == 2) {  // the linear's output is read again after the relu
      Node* add = g->insert("torch.add", {relu->output(), fc->output()}, 1, nullptr);
      out = add->output();
    }
    g->add_output(out);
    return g;
  };
  CHECK(emit(*build(0), "M", "m.pth").find("self.relu = nn.ReLU(inplace=True)\n") !=
        std::string::npos);
  CHECK(emit(*build(1), "M", "m.pth").find("self.relu = nn.ReLU()\n") != std::string::npos);
  CHECK(emit(*build(2), "M", "m.pth").find("self.relu = nn.ReLU()\n") != std::string::npos);
}

// Note [Expressions written inline]: values without a source name go inside their one reader,
// with the parentheses precedence needs, never past a side effect, and joined slices.
TEST_CASE("python emitter: expressions written inline") {
  SUBCASE("int arithmetic keeps its grouping") {
    Graph g;
    Value* x = g.add_input(Type::tensor(DType::F32, {2, 3, 4}), "x");
    Value* i = g.insert("Tensor.size", {x, cint(g, 0)}, 1, nullptr)->output();
    Value* j = g.insert("Tensor.size", {x, cint(g, 1)}, 1, nullptr)->output();
    Value* k = g.insert("Tensor.size", {x, cint(g, 2)}, 1, nullptr)->output();
    Value* k2 = g.insert("Tensor.size", {x, cint(g, 2)}, 1, nullptr)->output();
    Value* i2 = g.insert("Tensor.size", {x, cint(g, 0)}, 1, nullptr)->output();
    Value* j2 = g.insert("Tensor.size", {x, cint(g, 1)}, 1, nullptr)->output();
    Value* p = g.insert("operator.sub", {j, i}, 1, nullptr)->output();    // 1
    Value* q = g.insert("operator.sub", {k, p}, 1, nullptr)->output();    // 4 - (3 - 2) = 3
    Value* s = g.insert("operator.add", {i2, j2}, 1, nullptr)->output();  // 5
    Value* t = g.insert("operator.mul", {s, k2}, 1, nullptr)->output();   // (2 + 3) * 4 = 20
    Value* l = g.insert("prim.ListConstruct", {q, t}, 1, nullptr)->output();
    l->set_type(Type::list(Type::of(Type::Kind::Int)));
    Value* out = g.insert("torch.tensor", {l}, 1, nullptr)->output();
    g.add_output(out);
    std::string py = emit(g, "Arith", "arith.pth");
    INFO(py);
    CHECK(py.find("return torch.tensor([x.size(2) - (x.size(1) - x.size(0)), (x.size(0) + "
                  "x.size(1)) * x.size(2)])\n") != std::string::npos);
    run_python_checks(g, py, "arith",
                      "out = module.Arith()(torch.zeros(2, 3, 4))\n"
                      "assert out.tolist() == [3, 20], out\n");
  }
  SUBCASE("not past an in-place write") {
    Graph g;
    Value* x = g.add_input(Type::tensor(DType::F32, {2, 3}), "x");
    Node* v = g.insert("Tensor.select", {x, cint(g, 0), cint(g, 0)}, 1, nullptr);  // a view of x
    Value* a = g.insert("torch.neg", {x}, 1, nullptr)->output();  // read before the write
    g.insert("aten::fill_.Scalar", {v->output(), g.constant(2.0, Type::of(Type::Kind::Float))}, 1,
             nullptr);
    Value* b = g.insert("torch.sigmoid", {a}, 1, nullptr)->output();
    Value* c = g.insert("torch.mul", {x, g.constant(3.0, Type::of(Type::Kind::Float))}, 1, nullptr)
                   ->output();  // read after it
    g.add_output(b);
    g.add_output(c);
    std::string py = emit(g, "Write", "write.pth");
    INFO(py);
    CHECK(py.find("x.select(0, 0).fill_(2.0)\n") != std::string::npos);
    size_t neg = py.find("neg = torch.neg(x)\n"), fill = py.find(".fill_(");
    CHECK(neg != std::string::npos);
    CHECK(neg < fill);
    CHECK(py.find("return torch.sigmoid(neg), x * 3.0\n") != std::string::npos);
    run_python_checks(g, py, "write",
                      "x = torch.randn(2, 3)\n"
                      "ref = torch.sigmoid(-x)\n"
                      "y = x.clone(); y[0] = 2.0\n"
                      "a, b = module.Write()(x)\n"
                      "assert torch.equal(a, ref) and torch.equal(b, y * 3.0), (a, b)\n");
  }
  SUBCASE("an if's condition is written in the if, unless a write lies between") {
    auto g = parse_tir(R"(graph @cond(%x : f32[3], %y : Optional[Tensor] = none) {
  %none : None = prim.Constant[value=none]()
  %one : int = prim.Constant[value=1]()
  %0 : bool = operator.is_(%y, %none)
  %r : Tensor = prim.If(%0) {
    block0() {
      return %x
    }
    block1() {
      %1 : Tensor = torch.add(%x, %y)
      return %1
    }
  }
  %2 : int = Tensor.dim(%r)
  %3 : bool = operator.eq(%2, %one)
  %4 : Tensor = Tensor.relu_(%r)
  %s : Tensor = prim.If(%3) {
    block0() {
      %5 : Tensor = torch.neg(%4)
      return %5
    }
    block1() {
      return %4
    }
  }
  return %s
}
)");
    std::string py = emit(*g, "Cond", "cond.pth");
    INFO(py);
    CHECK(py.find("        if y is None:\n") != std::string::npos);
    // Tested before the write (conservatively: any side effect is a barrier), so a statement.
    size_t eq = py.find(" = r.dim() == 1\n"), relu = py.find("relu_()");
    CHECK(eq != std::string::npos);
    CHECK(eq < relu);
    run_python_checks(*g, py, "cond",
                      "x = torch.tensor([-1.0, 2.0, -3.0])\n"
                      "assert torch.equal(module.Cond()(x.clone()), -x.relu())\n"
                      "y = torch.ones(3)\n"
                      "assert torch.equal(module.Cond()(x.clone(), y), -(x + y).relu())\n");
  }
  SUBCASE("a slice of a slice is one subscript") {
    Graph g;
    Value* x = g.add_input(Type::tensor(DType::F32, {4, 6, 8}), "x");
    Value* max = cint(g, std::numeric_limits<int64_t>::max());
    Node* a = g.insert("Tensor.slice", {x, cint(g, 1), cint(g, 1), max, cint(g, 1)}, 1, nullptr);
    Node* b = g.insert("Tensor.slice",
                       {a->output(), cint(g, 2), cint(g, 0), cint(g, 5), cint(g, 2)}, 1, nullptr);
    Node* c =
        g.insert("Tensor.slice", {b->output(), cint(g, 1), cint(g, 0), cint(g, 2), cint(g, 1)}, 1,
                 nullptr);  // dim 1 again: a subscript of its own
    g.add_output(c->output());
    std::string py = emit(g, "Slices2", "slices2.pth");
    INFO(py);
    CHECK(py.find("return x[:, 1:, :5:2][:, :2]\n") != std::string::npos);
    run_python_checks(g, py, "slices2",
                      "x = torch.randn(4, 6, 8)\n"
                      "out = module.Slices2()(x)\n"
                      "assert torch.equal(out, x[:, 1:][:, :, 0:5:2][:, 0:2]), out.shape\n");
  }
}

TEST_CASE("python emitter: slicing forms") {
  Graph g;
  Value* x = g.add_input(Type::tensor(DType::F32, {4, 6, 8}), "x");
  Value* max = cint(g, std::numeric_limits<int64_t>::max());
  Value* none = g.constant(NoneAttr{}, Type::of(Type::Kind::None));
  Node* n = g.insert("Tensor.size", {x, cint(g, 0)}, 1, nullptr);
  n->output()->set_name("n");
  Node* a = g.insert("Tensor.slice", {x, cint(g, -1), cint(g, 2), max, cint(g, 3)}, 1, nullptr);
  Node* b = g.insert("Tensor.slice", {a->output(), cint(g, 0), none, n->output(), cint(g, 1)}, 1,
                     nullptr);
  Value* y = g.add_input(Type::tensor(DType::F32, {1}), "y");
  Node* dim = g.insert("Tensor.size", {y, cint(g, 0)}, 1, nullptr);
  dim->output()->set_name("dim");
  Node* c = g.insert("Tensor.slice",
                     {b->output(), dim->output(), cint(g, 0), cint(g, 1), cint(g, 1)}, 1, nullptr);
  Node* d = g.insert("Tensor.slice", {c->output(), cint(g, -2), cint(g, -3), max, cint(g, 1)}, 1,
                     nullptr);
  g.add_output(d->output());
  std::string py = emit(g, "Slices", "slices.pth");
  INFO(py);
  // A dim that is not a constant: the ATen op itself (Tensor has no .slice method). Slices
  // after an ellipsis stay apart.
  CHECK(py.find("return torch.ops.aten.slice.Tensor(x[..., 2::3][:n], dim, 0, 1)[..., -3:, :]\n") !=
        std::string::npos);
  run_python_checks(g, py, "slices",
                    "x = torch.randn(4, 6, 8)\n"
                    "out = module.Slices()(x, torch.zeros(1))\n"
                    "assert torch.equal(out, x[..., 2::3][:, 0:1][..., -3:, :]), out.shape\n");
}

TEST_CASE("python emitter: quantization modules") {
  Graph g;
  Value* a = g.add_input(Type::tensor(DType::F32, {2, 3}), "a");
  Value* b = g.add_input(Type::tensor(DType::F32, {2, 3}), "b");
  Node* q = module_op(g, "quant.QuantStub", "quant", {a}, {}, {});
  Node* add = module_op(g, "FloatFunctional.add", "ff", {q->output(), b}, {}, {});
  Node* dq = module_op(g, "quant.DeQuantStub", "dequant", {add->output()}, {}, {});
  g.add_output(dq->output());
  std::string py = emit(g, "Q", "q.pth");
  INFO(py);
  CHECK(py.find("import torch.ao.nn.quantized as nnq\n") != std::string::npos);
  CHECK(py.find("import torch.ao.quantization as quant\n") != std::string::npos);
  CHECK(py.find("self.quant = quant.QuantStub()\n") != std::string::npos);
  CHECK(py.find("self.ff = nnq.FloatFunctional()\n") != std::string::npos);
  CHECK(py.find("quant_ = self.quant(a)\n") != std::string::npos);
  CHECK(py.find("ff = self.ff.add(quant_, b)\n") != std::string::npos);
  run_python_checks(g, py, "q",
                    "a, b = torch.randn(2, 3), torch.randn(2, 3)\n"
                    "assert torch.equal(module.Q()(a, b), a + b)\n");
}
