// Control flow in the emitters: the Python module and the TorchScript archive written for the
// graphs in testdata/emitters/control_flow/*.tir compute what the IR interpreter computes, on
// inputs that take every branch of every prim.If and run every prim.Loop; the Python is
// pyflakes-clean, compiles with torch.jit.script, and reads like hand-written code (if/elif/else,
// for/while, a, b = b, a + b).
#include "driver/convert.h"
#include "emitters/python.h"
#include "exec/interpreter.h"
#include "loaders/tir_parser.h"
#include "loaders/jit_runner.h"
#include "loaders/torch_io.h"
#include "driver/torchscript.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include "python_session.h"
#include "source_dir.h"
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace tt;
namespace fs = std::filesystem;

namespace {

const char* kPython = "/usr/bin/python3";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int run_cmd(const std::string& cmd, std::string& out) {
  out.clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// randn(shape) * scale + shift from a private generator.
at::Tensor rn(std::vector<int64_t> shape, uint64_t seed, double scale = 1.0, double shift = 0.0) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, gen) * scale + shift;
}

void flatten(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else {
    FAIL("unexpected output kind " << v.tagKind());
  }
}

using Case = std::vector<at::Tensor>;

// Which way every prim.If went and how often every prim.Loop iterated, over all runs.
struct Coverage {
  std::map<const Node*, std::set<bool>> branches;
  std::map<const Node*, int64_t> iterations;
};

std::vector<at::Tensor> run_interpreter(const Graph& g, const Case& in, Coverage& cov) {
  // An If ran when its first output is computed; it went the way its condition said last.
  std::map<const Value*, const Node*> if_outputs, iters;
  std::set<const Value*> conds;
  std::map<const Value*, bool> last;
  for (Node* n : g.all_nodes()) {
    if (n->is("prim.If")) {
      REQUIRE(n->num_outputs() > 0);
      if_outputs[n->output(0)] = n;
      conds.insert(n->input(0));
    }
    if (n->is("prim.Loop")) iters[n->block(0)->inputs()[0]] = n;
  }
  Interpreter interp(g);
  interp.on_value = [&](const Value* v, const c10::IValue& iv) {
    if (conds.count(v)) last[v] = iv.isTensor() ? iv.toTensor().item<bool>() : iv.toBool();
    if (auto it = if_outputs.find(v); it != if_outputs.end())
      cov.branches[it->second].insert(last.at(it->second->input(0)));
    if (auto it = iters.find(v); it != iters.end()) cov.iterations[it->second] += 1;
  };
  std::vector<c10::IValue> args(in.begin(), in.end());
  std::vector<at::Tensor> out;
  for (const auto& v : interp.run(args)) flatten(v, out);
  return out;
}

bool close(const at::Tensor& got, const at::Tensor& want) {
  if (got.sizes() != want.sizes()) return false;
  double denom = std::max(want.abs().max().item<double>(), 1e-12);
  return (got - want).abs().max().item<double>() / denom <= 1e-4;
}

std::string python_check_script(const fs::path& dir, const std::string& stem, size_t num_cases,
                                size_t num_inputs) {
  std::ostringstream s;
  s << "import importlib.util, os, sys\n"
       "import torch\n"
       "d = r'"
    << dir.string()
    << "'\n"
       "spec = importlib.util.spec_from_file_location('"
    << stem << "', os.path.join(d, '" << stem
    << ".py'))\n"
       "mod = importlib.util.module_from_spec(spec)\n"
       "spec.loader.exec_module(mod)\n"
       "model = mod.M()\n"
       "model.load_state_dict(torch.load(os.path.join(d, '"
    << stem
    << ".pth')), strict=True)\n"
       "model.eval()\n"
       "data = torch.load(os.path.join(d, 'cases.pth'))\n"
       "def flat(v):\n"
       "    if isinstance(v, (tuple, list)):\n"
       "        return [t for e in v for t in flat(e)]\n"
       "    return [v]\n"
       "scripted = torch.jit.script(model)  # the generated code is TorchScript's Python subset "
       "too\n"
       "bad = 0\n"
       "for c in range("
    << num_cases
    << "):\n"
       "    args = [data[f'c{c}.in{i}'] for i in range("
    << num_inputs
    << ")]\n"
       "    with torch.no_grad():\n"
       "        got = flat(model(*args))\n"
       "        again = flat(scripted(*args))\n"
       "    if any(not torch.equal(a, b) for a, b in zip(got, again)):\n"
       "        print(f'case {c}: torch.jit.script of the module computes something else'); bad += "
       "1\n"
       "    want = [data[k] for k in sorted((k for k in data if k.startswith(f'c{c}.out')), "
       "key=lambda k: int(k.split('out')[1]))]\n"
       "    if len(got) != len(want):\n"
       "        print(f'case {c}: {len(got)} outputs, expected {len(want)}'); bad += 1; continue\n"
       "    for j, (g, w) in enumerate(zip(got, want)):\n"
       "        rel = (g - w).abs().max().item() / max(w.abs().max().item(), 1e-12)\n"
       "        if g.shape != w.shape or rel > 1e-4:\n"
       "            print(f'case {c} output {j}: rel {rel} shape {tuple(g.shape)} vs "
       "{tuple(w.shape)}'); bad += 1\n"
       "sys.exit(1 if bad else 0)\n";
  return s.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tt_cfemit_XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Emits Python and TorchScript for testdata/emitters/control_flow/<stem>.tir and checks both
// against the interpreter on every case; returns the Python source for text checks.
std::string check_graph(const std::string& stem, const std::vector<Case>& cases) {
  fs::path tir =
      fs::path(TT_SOURCE_DIR) / "testdata" / "emitters" / "control_flow" / (stem + ".tir");
  auto g = parse_tir(slurp(tir), tir.string());
  TempDir dir;

  // Reference runs, and every branch / loop exercised by some case.
  Coverage cov;
  std::vector<std::pair<std::string, at::Tensor>> data;
  std::vector<std::vector<at::Tensor>> expected;
  for (size_t c = 0; c < cases.size(); ++c) {
    REQUIRE(cases[c].size() == g->inputs().size());
    expected.push_back(run_interpreter(*g, cases[c], cov));
    for (size_t i = 0; i < cases[c].size(); ++i)
      data.emplace_back("c" + std::to_string(c) + ".in" + std::to_string(i), cases[c][i]);
    for (size_t j = 0; j < expected.back().size(); ++j)
      data.emplace_back("c" + std::to_string(c) + ".out" + std::to_string(j), expected.back()[j]);
  }
  for (Node* n : g->all_nodes()) {
    if (n->is("prim.If")) {
      INFO(stem << ": prim.If %" << (n->num_outputs() ? n->output(0)->name() : n->op()));
      CHECK(cov.branches[n].size() == 2);
    }
    if (n->is("prim.Loop")) {
      INFO(stem << ": prim.Loop %" << n->output(0)->name());
      CHECK(cov.iterations[n] >= 2);
    }
  }

  // TorchScript: the archive runs in C++ and matches.
  std::string pt = (dir.path / (stem + ".pt")).string();
  save_torchscript(*g, pt, "M");
  for (size_t c = 0; c < cases.size(); ++c) {
    std::vector<c10::IValue> args(cases[c].begin(), cases[c].end());
    std::vector<at::Tensor> got;
    flatten(run_torchscript_file(pt, args), got);
    REQUIRE(got.size() == expected[c].size());
    for (size_t j = 0; j < got.size(); ++j) {
      INFO(stem << " torchscript case " << c << " output " << j);
      CHECK(close(got[j], expected[c][j]));
    }
  }

  // Python: pyflakes-clean, loads the weights strictly, matches on every case.
  PythonEmitOptions o;
  o.class_name = "M";
  o.weights_file = stem + ".pth";
  Diagnostics diags;
  std::string py = emit_python(*g, o, diags);
  INFO(py);
  {
    std::ofstream f(dir.path / (stem + ".py"), std::ios::binary);
    f << py;
  }
  std::vector<std::pair<std::string, at::Tensor>> weights;
  for (const auto& n : g->weights().names()) weights.emplace_back(n, g->weights().at(n).tensor);
  save_tensor_dict((dir.path / (stem + ".pth")).string(), weights);
  save_tensor_dict((dir.path / "cases.pth").string(), data);
  std::string out;
  int rc =
      run_cmd(std::string(kPython) + " -m pyflakes " + (dir.path / (stem + ".py")).string(), out);
  INFO("pyflakes: " << out);
  CHECK(rc == 0);
  CHECK(out.empty());
  {
    std::ofstream f(dir.path / "check.py", std::ios::binary);
    f << python_check_script(dir.path, stem, cases.size(), g->inputs().size());
  }
  rc = test::run_python({(dir.path / "check.py").string()}, out);
  INFO("python: " << out);
  CHECK(rc == 0);
  return py;
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("control flow emit: gate cell, each branch") {
  std::string py = check_graph("gate_cell", {{rn({2, 4}, 1, 10.0), rn({2, 4}, 2)},
                                             {rn({2, 4}, 1, -10.0), rn({2, 4}, 2)},
                                             {rn({2, 4}, 3), rn({2, 4}, 4)}});
  CHECK(has(py, "        if "));
  CHECK(has(py, "        else:\n"));
  CHECK(has(py, "            g = torch.neg(linear)\n"));
}

TEST_CASE("control flow emit: loop over the first dimension calling the cell") {
  std::string py = check_graph("loop_cell", {{rn({3, 2, 4}, 5, 0.1, 5.0), rn({2, 4}, 6)},
                                             {rn({3, 2, 4}, 7, 0.1, -5.0), rn({2, 4}, 8)}});
  CHECK(has(py, "for i in range(n):"));
  // The cell's class builds its layer; the loop body (the parent's) calls it through the cell.
  CHECK(has(py, "class Cell(nn.Module):"));
  CHECK(has(py, "        self.linear = nn.Linear(4, 4)"));
  CHECK(has(py, "self.cell.linear(xi)"));
}

TEST_CASE("control flow emit: while loop with a data-dependent condition") {
  std::string py =
      check_graph("while_grow", {{rn({4}, 9, 0.1)}, {rn({4}, 10, 1.0, 5.0)}, {rn({4}, 11, 0.01)}});
  CHECK(has(py, "while "));
  CHECK(has(py, "i += 1"));
}

TEST_CASE("control flow emit: trip count and condition, swapped carried values") {
  std::string py = check_graph("fib_break", {{rn({6, 3}, 12), at::full({}, 1e6)},
                                             {rn({6, 3}, 13), at::full({}, 2.0)},
                                             {rn({6, 3}, 14, 0.01), at::full({}, 5.0)}});
  CHECK(has(py, "break"));
  CHECK(has(py, "            a, b = b, add\n"));
  CHECK(!has(py, "sum = "));  // `sum` is a builtin the generated code may call
}

TEST_CASE("control flow emit: if / elif / else and swapped branch results") {
  std::string py = check_graph(
      "if_chain", {{rn({3}, 15, 0.1, 1.0)}, {rn({3}, 16, 0.1, -1.0)}, {rn({3}, 17, 0.1)}});
  CHECK(has(py, "elif "));
}

TEST_CASE("control flow emit: a constant branch is resolved, verified and reported") {
  TempDir dir;
  ConvertOptions o;
  o.model_path =
      (fs::path(TT_SOURCE_DIR) / "testdata" / "emitters" / "control_flow" / "constant_branch.tir")
          .string();
  o.out_dir = dir.path.string();
  o.passes.passes = "fold-constants,dce";
  o.input_shapes = {InputSpec{{2, 3}, DType::F32}};
  o.verify = true;
  run_convert(o);
  std::string py = slurp(dir.path / "constant_branch.py");
  INFO(py);
  CHECK_FALSE(has(py, "        if "));
  CHECK(has(py, "F.relu(x)"));
  CHECK_FALSE(has(py, "sigmoid"));
  auto report = nlohmann::json::parse(slurp(dir.path / "constant_branch.json"));
  INFO(report.dump(2));
  bool found = false;
  for (const auto& p : report.at("pipeline"))
    if (p.at("name") == "fold-constants")
      for (const auto& r : p.value("log", nlohmann::json::array()))
        found |= r.at("rule") == "constant-branch";
  CHECK(found);
}

TEST_CASE("control flow emit: nested loops and branches share the carried variables") {
  std::string py = check_graph("nested", {{rn({4}, 20), rn({4}, 21)},
                                          {rn({4}, 22, 3.0), rn({4}, 23, 1.0, -2.0)},
                                          {rn({4}, 24, 1.0, 2.0), rn({4}, 25, 0.1)}});
  CHECK(has(py, "while "));
  CHECK(has(py, "for k in range(2):"));
}
