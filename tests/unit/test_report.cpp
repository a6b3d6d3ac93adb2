// The JSON report: every required field is present with the right values, and the report validates
// against lib/emitters/report.schema.json (checked with Python's jsonschema, which also proves the
// schema itself is a valid draft 2020-12 schema and is strict enough to reject broken reports).
#include "emitters/report.h"
#include "ir/ir.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include "source_dir.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

using namespace tt;
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

struct ReportTempDir {
  fs::path path;
  ReportTempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tt_report_XXXXXX").string();
    char* p = mkdtemp(tmpl.data());
    REQUIRE(p != nullptr);
    path = p;
  }
  ~ReportTempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

int run_command(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) output.append(buf.data(), n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool have_jsonschema() {
  static const bool ok = [] {
    std::string out;
    return run_command("/usr/bin/python3 -c 'import jsonschema'", out) == 0;
  }();
  return ok;
}

Value* int_const(Graph& g, int64_t v) { return g.constant(v, Type::of(Type::Kind::Int)); }

// A model with module ops and their weights, a custom parameter read with prim.GetAttr, constants
// of every attribute kind, an aten fallback, a prim.If with nested blocks and a tuple output.
Model sample_model() {
  Model m;
  m.graph = std::make_unique<Graph>();
  Graph& g = *m.graph;
  g.set_name("sample");
  Value* x = g.add_input(Type::tensor(DType::F32, {1, 3, -1, 8}), "x");
  Value* flag = g.add_input(Type::of(Type::Kind::Bool), "flag");

  Node* conv = g.insert("nn.Conv2d", {x}, 1, nullptr);
  conv->output()->set_name("conv1");
  conv->output()->set_type(Type::tensor(DType::F32, {1, 4, -1, 8}));
  conv->attrs().set("in_channels", int64_t(3));
  conv->attrs().set("out_channels", int64_t(4));
  conv->attrs().set("kernel_size", std::vector<int64_t>{3, 3});
  conv->attrs().set("bias", true);
  conv->attrs().set("padding_mode", std::string("zeros"));
  conv->set_weight("weight", "conv1.weight");
  conv->set_weight("bias", "conv1.bias");
  conv->set_module("conv1");
  conv->set_loc("model.py:12");

  Node* scale = g.insert("prim.GetAttr", {}, 1, nullptr);
  scale->set_weight("value", "scale");
  scale->output()->set_type(Type::tensor(DType::F32, {4, 1, 1}));
  Node* mul = g.insert("torch.mul", {conv->output(), scale->output()}, 1, nullptr);
  mul->output()->set_type(Type::tensor(DType::F32));
  mul->set_scope("block");

  // Constants of the attribute kinds without another home.
  g.constant(std::numeric_limits<double>::infinity(), Type::of(Type::Kind::Float));
  g.constant(std::nan(""), Type::of(Type::Kind::Float));
  g.constant(DType::F16, Type::of(Type::Kind::ScalarType));
  g.constant(DeviceAttr{"cpu"}, Type::of(Type::Kind::Device));
  g.constant(std::vector<std::string>{"a", "b"}, Type::list(Type::of(Type::Kind::Str)));
  g.constant(std::vector<double>{0.5, -std::numeric_limits<double>::infinity()},
             Type::list(Type::of(Type::Kind::Float)));
  g.constant(NoneAttr{}, Type::of(Type::Kind::None));
  g.constant(at::arange(3, at::kLong), Type::tensor(DType::I64, {3}));
  g.constant(at::zeros({64}), Type::tensor(DType::F32, {64}));  // summarised without values

  Node* erfcx = g.insert("aten::special_erfcx.default", {mul->output()}, 1, nullptr);
  erfcx->output()->set_type(Type::tensor(DType::F32));
  erfcx->set_scope("block");
  erfcx->set_loc("model.py:20");

  Node* cond = g.insert("prim.If", {flag}, 1, nullptr);
  cond->output()->set_type(Type::tensor(DType::F32));
  Block* then_b = cond->add_block();
  Block* else_b = cond->add_block();
  Node* relu = g.create("F.relu", {erfcx->output()}, 1);
  then_b->append(relu);
  then_b->add_output(relu->output());
  else_b->add_output(erfcx->output());

  Node* tup = g.insert("prim.TupleConstruct", {cond->output(), int_const(g, 2)}, 1, nullptr);
  tup->output()->set_type(Type::tuple({Type::tensor(DType::F32), Type::of(Type::Kind::Int)}));
  g.add_output(tup->output());

  g.weights().set("scale", {at::ones({4, 1, 1}), true});
  g.weights().set("conv1.weight", {at::ones({4, 3, 3, 3}), true});
  g.weights().set("conv1.bias", {at::zeros({4}), true});
  g.weights().set("steps", {at::zeros({}, at::kLong), false});

  g.modules()[""] = {"models.sample.Sample", {"x", "flag"}};
  g.modules()["conv1"] = {"torch.nn.modules.conv.Conv2d", {"input"}};
  g.modules()["block"] = {"", {}};  // class unknown: not in module_classes

  m.source = {"models/sample.pt", "torchscript", std::string(64, 'a'), {}};
  m.source.op_libraries.push_back({"/opt/ops/libmyops.so", "--load-library", {"myops"}, ""});
  m.source.op_libraries.push_back({"/usr/lib/python3/dist-packages/torchvision/_C.so",
                                   "the model calls torchvision::nms",
                                   {"torchvision"},
                                   "torchvision"});
  m.diags.warn("aten-fallback", "aten::special_erfcx.default is not in the op table",
               erfcx->output()->name(), "block", "model.py:20");
  m.diags.add({Severity::Note, "info", "a note without location", "", "", ""});
  return m;
}

ReportExtras sample_extras() {
  ReportExtras e;
  e.pipeline.push_back({"eliminate-noops",
                        true,
                        30,
                        28,
                        2,
                        0.25,
                        {{"detach", "h", "block"}, {"dropout", "", ""}},
                        {},
                        {{"dropouts removed", 1}}});
  e.pipeline.push_back({"dce", false, 28, 28, 0, 0.01});
  e.verification = json{{"passed", true}, {"max_rel_diff", 1e-6}};
  e.outputs = {"out/sample.py", "out/sample.pth", "out/sample.json"};
  return e;
}

const json* find_node(const json& nodes, const std::string& op) {
  for (const auto& n : nodes)
    if (n["op"] == op) return &n;
  return nullptr;
}

// Validates each report in `reports` against the schema; `expect_valid` per report.
void validate(const std::vector<std::pair<json, bool>>& reports) {
  if (!have_jsonschema()) {
    MESSAGE("skipped: /usr/bin/python3 lacks jsonschema");
    return;
  }
  ReportTempDir dir;
  json cases = json::array();
  for (const auto& [r, ok] : reports) cases.push_back({{"report", r}, {"valid", ok}});
  std::ofstream(dir.path / "cases.json") << cases.dump();
  std::ofstream(dir.path / "check.py") << R"PY(
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failed = False
for i, case in enumerate(json.load(open(sys.argv[2]))):
    errors = list(validator.iter_errors(case["report"]))
    if case["valid"] and errors:
        failed = True
        for e in errors:
            print("case %d: %s at %s" % (i, e.message, list(e.absolute_path)))
    if not case["valid"] and not errors:
        failed = True
        print("case %d: expected a schema violation" % i)
sys.exit(1 if failed else 0)
)PY";
  std::string out;
  fs::path schema = fs::path(TT_SOURCE_DIR) / "lib" / "emitters" / "report.schema.json";
  int rc = run_command("/usr/bin/python3 " + (dir.path / "check.py").string() + " " +
                           schema.string() + " " + (dir.path / "cases.json").string(),
                       out);
  INFO(out);
  CHECK(rc == 0);
}

}  // namespace

TEST_CASE("report: required fields and values") {
  Model m = sample_model();
  json r = build_report(m, sample_extras());
  INFO(r.dump(2));
  CHECK(r["format"] == "tinytrace-report");
  CHECK(r["version"] == kReportVersion);
  CHECK(r["tool"]["name"] == "tinytrace");
  CHECK(r["tool"]["version"] == TT_VERSION);
  json libs = json::array({json{{"path", "/opt/ops/libmyops.so"},
                                {"reason", "--load-library"},
                                {"namespaces", {"myops"}},
                                {"package", nullptr}},
                           json{{"path", "/usr/lib/python3/dist-packages/torchvision/_C.so"},
                                {"reason", "the model calls torchvision::nms"},
                                {"namespaces", {"torchvision"}},
                                {"package", "torchvision"}}});
  CHECK(r["source"] == json{{"path", "models/sample.pt"},
                            {"format", "torchscript"},
                            {"sha256", std::string(64, 'a')},
                            {"op_libraries", libs}});

  const json& graph = r["graph"];
  CHECK(graph["name"] == "sample");
  REQUIRE(graph["inputs"].size() == 2);
  CHECK(graph["inputs"][0] == json{{"name", "x"},
                                   {"type", "f32[1,3,?,8]"},
                                   {"dtype", "f32"},
                                   {"shape", {1, 3, nullptr, 8}}});
  CHECK(graph["inputs"][1] ==
        json{{"name", "flag"}, {"type", "bool"}, {"dtype", nullptr}, {"shape", nullptr}});
  REQUIRE(graph["outputs"].size() == 1);
  CHECK(graph["outputs"][0]["type"] == "Tuple[f32, int]");

  const json* conv = find_node(graph["nodes"], "nn.Conv2d");
  REQUIRE(conv);
  CHECK((*conv)["name"] == "conv1");
  CHECK((*conv)["kind"] == "module");
  CHECK((*conv)["module"] == "conv1");
  CHECK((*conv)["scope"] == "");
  CHECK((*conv)["loc"] == "model.py:12");
  CHECK((*conv)["inputs"] == json{"x"});
  CHECK((*conv)["outputs"][0]["shape"] == json{1, 4, nullptr, 8});
  CHECK((*conv)["attrs"]["kernel_size"] == json{3, 3});
  CHECK((*conv)["attrs"]["padding_mode"] == "zeros");
  CHECK((*conv)["weights"][0] == json{{"key", "weight"},
                                      {"name", "conv1.weight"},
                                      {"kind", "param"},
                                      {"dtype", "f32"},
                                      {"shape", {4, 3, 3, 3}}});

  const json* getattr = find_node(graph["nodes"], "prim.GetAttr");
  REQUIRE(getattr);
  CHECK((*getattr)["kind"] == "prim");
  CHECK((*getattr)["module"].is_null());
  CHECK((*getattr)["loc"].is_null());
  CHECK((*getattr)["weights"][0]["name"] == "scale");

  const json* mul = find_node(graph["nodes"], "torch.mul");
  REQUIRE(mul);
  CHECK((*mul)["kind"] == "function");
  CHECK((*mul)["scope"] == "block");

  const json* fallback = find_node(graph["nodes"], "aten::special_erfcx.default");
  REQUIRE(fallback);
  CHECK((*fallback)["kind"] == "aten");

  const json* cond = find_node(graph["nodes"], "prim.If");
  REQUIRE(cond);
  REQUIRE((*cond)["blocks"].size() == 2);
  CHECK((*cond)["blocks"][0]["nodes"][0]["op"] == "F.relu");
  CHECK((*cond)["blocks"][1]["outputs"] == json::array({fallback->at("name")}));

  // Attribute values of every kind.
  std::vector<json> values;
  for (const auto& n : graph["nodes"])
    if (n["op"] == "prim.Constant") values.push_back(n["attrs"]["value"]);
  auto has = [&](const json& v) {
    return std::find(values.begin(), values.end(), v) != values.end();
  };
  CHECK(has("inf"));
  CHECK(has("nan"));
  CHECK(has(json{{"dtype", "f16"}}));
  CHECK(has(json{{"device", "cpu"}}));
  CHECK(has(json{"a", "b"}));
  CHECK(has(json{0.5, "-inf"}));
  CHECK(has(nullptr));
  CHECK(has(
      json{{"tensor", {{"dtype", "i64"}, {"shape", {3}}, {"numel", 3}, {"values", {0, 1, 2}}}}}));
  CHECK(has(json{{"tensor", {{"dtype", "f32"}, {"shape", {64}}, {"numel", 64}}}}));

  CHECK(graph["weights"].size() == 4);
  CHECK(graph["weights"][3] == json{{"name", "steps"},
                                    {"kind", "buffer"},
                                    {"dtype", "i64"},
                                    {"shape", json::array()},
                                    {"numel", 1},
                                    {"bytes", 8}});

  const json& s = r["summary"];
  CHECK(s["node_count"] == m.graph->num_nodes());
  CHECK(s["op_histogram"]["prim.Constant"] == 10);
  CHECK(s["op_histogram"]["F.relu"] == 1);  // nested nodes count
  CHECK(s["parameter_count"] == 4 + 108 + 4);
  CHECK(s["parameter_tensors"] == 3);
  CHECK(s["buffer_count"] == 1);
  CHECK(s["buffer_tensors"] == 1);
  CHECK(s["weight_bytes"] == (4 + 108 + 4) * 4 + 8);
  CHECK(s["aten_fallbacks"] == json{"aten::special_erfcx.default"});
  CHECK(s["warning_count"] == 1);

  REQUIRE(r["pipeline"].size() == 2);
  CHECK(
      r["pipeline"][0] ==
      json{{"name", "eliminate-noops"},
           {"changed", true},
           {"nodes_before", 30},
           {"nodes_after", 28},
           {"rewrites", 2},
           {"milliseconds", 0.25},
           {"log", json::array({json{{"rule", "detach"}, {"node", "h"}, {"scope", "block"}},
                                json{{"rule", "dropout"}, {"node", nullptr}, {"scope", nullptr}}})},
           {"statistics", json{{"dropouts removed", 1}}}});
  CHECK(r["pipeline"][1]["log"] == json::array());
  CHECK(r["pipeline"][1]["statistics"] == json::object());
  CHECK(r["verification"]["passed"] == true);

  REQUIRE(r["diagnostics"].size() == 2);
  CHECK(r["diagnostics"][0] ==
        json{{"severity", "warning"},
             {"code", "aten-fallback"},
             {"message", "aten::special_erfcx.default is not in the op table"},
             {"node", fallback->at("name")},
             {"scope", "block"},
             {"loc", "model.py:20"}});
  CHECK(r["diagnostics"][1]["severity"] == "note");
  CHECK(r["diagnostics"][1]["node"].is_null());
  CHECK(r["outputs"] == json{"out/sample.py", "out/sample.pth", "out/sample.json"});
  CHECK(r["module_classes"] ==
        json{{"", "models.sample.Sample"}, {"conv1", "torch.nn.modules.conv.Conv2d"}});
}

// Note [One record per line] (lib/support/json_writer.h): each node, nested ones too, is one line
// of its own; Note [Emitters in parallel] (lib/driver/convert.cpp): the graph section made
// beforehand (on another thread in convert) gives the same report.
TEST_CASE("report: one line per node at every depth; a graph section made beforehand") {
  Model m = sample_model();
  std::string text, apart;
  write_report(text, m, sample_extras());
  ReportGraph graph = render_report_graph(*m.graph);
  write_report(apart, m, sample_extras(), graph);
  CHECK(apart == text);
  // Written around the graph section (convert writes the three parts without joining them).
  std::string around;
  size_t k = write_report_around(around, m, sample_extras(), graph);
  CHECK(around.substr(0, k) + graph.text + around.substr(k) == text);
  CHECK(around.find("\"op\": ") == std::string::npos);  // no node outside the section
  CHECK(json::parse(text)["graph"] == json::parse(graph.text));
  CHECK(json::parse(text)["graph"]["nodes"].size() == m.graph->block()->size());
  size_t node_lines = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find("\"op\": \"");
    if (at == std::string::npos) continue;
    ++node_lines;
    CHECK(line.find("\"op\": \"", at + 1) == std::string::npos);  // one node per line
    CHECK(line.find_first_not_of(' ') == line.find("{\"name\": "));
  }
  std::vector<Node*> nodes = m.graph->all_nodes();
  REQUIRE(std::any_of(nodes.begin(), nodes.end(),
                      [](const Node* n) { return !n->blocks().empty(); }));  // nested ones too
  CHECK(node_lines == nodes.size());
}

TEST_CASE("report: validates against report.schema.json") {
  Model m = sample_model();
  json full = build_report(m, sample_extras());

  // A model built in memory: no source file, no pipeline, no verification.
  Model bare;
  bare.graph = std::make_unique<Graph>();
  Value* x = bare.graph->add_input(Type::tensor(), "x");
  bare.graph->add_output(x);
  json minimal = build_report(bare, ReportExtras{});
  CHECK(minimal["source"]["path"].is_null());
  CHECK(minimal["verification"].is_null());
  CHECK(minimal["module_classes"] == json::object());

  json missing = full;
  missing["summary"].erase("node_count");
  json extra = full;
  extra["surprise"] = 1;
  json bad_node = full;
  bad_node["graph"]["nodes"][0]["kind"] = "gadget";
  json bad_sha = full;
  bad_sha["source"]["sha256"] = "xyz";
  json bad_class = full;
  bad_class["module_classes"]["conv1"] = 3;

  validate({{full, true},
            {minimal, true},
            {missing, false},
            {extra, false},
            {bad_node, false},
            {bad_sha, false},
            {bad_class, false}});
}
