// The NAME.pt that `convert --emit torchscript` writes, loaded back with torch::jit in C++,
// computes what the original model computes; and `--verify` compares that archive too.
//
// The "torchscript roundtrip" cases need the torchvision test models (resnet18, mobilenet_v2 in
// $TT_TESTMODELS_DIR, made by the CTest fixture tt_models_torchvision): tests/exec.cmake runs them
// as their own CTest entry (exec_torchscript_roundtrip_cpp) and the plain `unit` run leaves them
// out (-tce). Run by hand without the models, they fail: a test that silently passes is a defect.
// The "verify torchscript" cases use the committed testdata/models/tiny_cnn.pt and run everywhere.
#include "driver/convert.h"
#include "driver/verify.h"
#include "loaders/jit_runner.h"
#include "support/diag.h"

#include <doctest/doctest.h>
#include "source_dir.h"
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// A fresh, empty output directory for one case.
fs::path fresh_dir(const std::string& stem) {
  fs::path d =
      fs::temp_directory_path() / ("tt_ts_roundtrip_" + stem + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

// The model's --input-shape arguments from the NAME.json that scripts/gen_models.py writes.
std::vector<tt::InputSpec> input_specs(const fs::path& model_json) {
  std::ifstream in(model_json);
  REQUIRE_MESSAGE(in.good(), "cannot read " << model_json.string());
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<tt::InputSpec> specs;
  for (const auto& a : j.at("input_shape_args"))
    specs.push_back(tt::parse_input_spec(a.get<std::string>()));
  REQUIRE(!specs.empty());
  return specs;
}

fs::path torchvision_model(const std::string& name) {
  const char* dir = std::getenv("TT_TESTMODELS_DIR");
  REQUIRE_MESSAGE(
      dir != nullptr,
      "TT_TESTMODELS_DIR is not set — run `ctest -R exec_torchscript_roundtrip_cpp`, which "
      "generates the torchvision test models first");
  fs::path p = fs::path(dir) / (name + ".pt");
  REQUIRE_MESSAGE(fs::exists(p), "missing "
                                     << p.string()
                                     << " — run `ctest -R gen_models_torchvision` (or "
                                        "scripts/gen_models.py --only torchvision --out DIR)");
  return p;
}

// convert --emit torchscript [--fuse], then NAME.pt through torch::jit::load against the original
// model through torch::jit::load, on the same seeded inputs.
void check_roundtrip(const std::string& name, bool fuse) {
  fs::path model = torchvision_model(name);
  std::vector<tt::InputSpec> specs = input_specs(fs::path(model).replace_extension(".json"));
  fs::path out = fresh_dir(name + (fuse ? "_fuse" : "_plain"));

  tt::ConvertOptions o;
  o.model_path = model.string();
  o.out_dir = out.string();
  o.emit = {"torchscript"};
  o.passes.fuse = fuse;
  o.input_shapes = specs;
  tt::ConvertResult r = tt::run_convert(o);
  REQUIRE(r.written.size() == 1);
  fs::path archive = out / (name + ".pt");
  REQUIRE(fs::exists(archive));

  double tol = fuse ? 1e-3 : 1e-4;
  for (uint64_t seed : {0, 1}) {
    std::vector<c10::IValue> inputs = tt::make_example_inputs(specs, seed);
    c10::IValue expected = tt::run_torchscript_file(model.string(), tt::clone_inputs(inputs));
    tt::VerifyResult vr = tt::verify_torchscript_archive(archive.string(), inputs, expected, tol);
    MESSAGE(name << std::string(fuse ? " --fuse" : "") << " seed " << seed << ": " << vr.summary());
    REQUIRE(!vr.outputs.empty());
    CHECK(!vr.structure_mismatch);
    for (const auto& d : vr.outputs) {
      CHECK(!d.shape_mismatch);
      CHECK(d.max_expected > 0);  // a real output, not an all-zero one that matches anything
      CHECK(d.rel <= tol);
    }
    CHECK(vr.passed());
  }
  fs::remove_all(out);
}

fs::path tiny_cnn() { return fs::path(TT_SOURCE_DIR) / "testdata" / "models" / "tiny_cnn.pt"; }

}  // namespace

TEST_CASE("torchscript roundtrip: resnet18") { check_roundtrip("resnet18", false); }
TEST_CASE("torchscript roundtrip: resnet18 --fuse") { check_roundtrip("resnet18", true); }
TEST_CASE("torchscript roundtrip: mobilenet_v2") { check_roundtrip("mobilenet_v2", false); }
TEST_CASE("torchscript roundtrip: mobilenet_v2 --fuse") { check_roundtrip("mobilenet_v2", true); }

TEST_CASE("verify torchscript: --verify --emit torchscript compares NAME.pt too and reports it") {
  fs::path out = fresh_dir("verify_ok");
  tt::ConvertOptions o;
  o.model_path = tiny_cnn().string();
  o.out_dir = out.string();
  o.emit = {"torchscript", "report"};
  o.passes.fuse = true;
  o.input_shapes = input_specs(fs::path(tiny_cnn()).replace_extension(".json"));
  o.verify = true;
  tt::ConvertResult r = tt::run_convert(o);
  REQUIRE(r.verify_summaries.size() == 2);
  CHECK(r.verify_summaries[0].rfind("verify (interpreter): OK", 0) == 0);
  CHECK(r.verify_summaries[1].rfind("verify (torchscript): OK", 0) == 0);

  std::ifstream in(out / "tiny_cnn.json");
  nlohmann::json report = nlohmann::json::parse(in);
  const auto& v = report.at("verification");
  CHECK(v.at("passed") == true);
  REQUIRE(v.at("results").size() == 2);
  const auto& ts = v.at("results")[1];
  CHECK(ts.at("engine") == "torchscript");
  CHECK(ts.at("passed") == true);
  CHECK(ts.at("tolerance") == doctest::Approx(1e-3));  // BN was folded
  REQUIRE(!ts.at("outputs").empty());
  CHECK(ts.at("outputs")[0].at("max_abs_expected").get<double>() > 0);
  CHECK(ts.at("max_rel_diff").get<double>() <= 1e-3);
  fs::remove_all(out);
}

TEST_CASE("verify torchscript: a wrong transformation is caught through NAME.pt") {
  std::vector<tt::InputSpec> specs = input_specs(fs::path(tiny_cnn()).replace_extension(".json"));
  tt::ConvertOptions o;
  o.model_path = tiny_cnn().string();
  o.emit = {"torchscript"};
  o.passes.passes = "test-perturb-weight";
  o.input_shapes = specs;

  SUBCASE("the archive of a perturbed graph disagrees with the original") {
    // Without --verify the archive is written; compared on its own (no interpreter involved),
    // the torchscript engine must see the perturbation.
    fs::path out = fresh_dir("perturb_archive");
    o.out_dir = out.string();
    tt::run_convert(o);
    std::vector<c10::IValue> inputs = tt::make_example_inputs(specs);
    c10::IValue expected = tt::run_torchscript_file(tiny_cnn().string(), tt::clone_inputs(inputs));
    tt::VerifyResult vr =
        tt::verify_torchscript_archive((out / "tiny_cnn.pt").string(), inputs, expected, 1e-4);
    CHECK(vr.engine == "torchscript");
    CHECK(!vr.passed());
    CHECK(vr.max_rel > 1e-4);
    fs::remove_all(out);
  }
  SUBCASE("--verify fails with exit 5, names the torchscript verdict and writes nothing") {
    fs::path out = fresh_dir("perturb_verify");
    o.out_dir = out.string();
    o.verify = true;
    try {
      tt::run_convert(o);
      FAIL("expected --verify to fail");
    } catch (const tt::Error& e) {
      CHECK(e.code() == tt::ExitCode::VerifyFailed);
      std::string msg = e.what();
      CHECK(msg.find("verify (torchscript): FAILED") != std::string::npos);
      CHECK(msg.find("verify (interpreter): FAILED") != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
    CHECK((!fs::exists(out) || fs::is_empty(out)));
    fs::remove_all(out);
  }
}
