// driver/verify.h: where a failed --verify locates the difference — the first value of the graph
// as loaded that differs from the original TorchScript model (the conversion's fault), and the
// first value of the final graph that differs from the loaded one (a pass's fault).
// Needs $TT_TESTMODELS_DIR/ldr_resblock.pt (scripts/make_loader_testmodels.py); skipped without.
#include "driver/verify.h"
#include "loaders/loader.h"

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

namespace tt {
namespace {

std::string resblock_path() {
  const char* dir = std::getenv("TT_TESTMODELS_DIR");
  std::string p = dir ? std::string(dir) + "/ldr_resblock.pt" : "";
  if (p.empty() || !std::ifstream(p)) {
    MESSAGE("ldr_resblock.pt not found (TT_TESTMODELS_DIR); skipping");
    return "";
  }
  return p;
}

// Makes the weight `name` differ from the archive's: what a lifting bug would look like.
void perturb(Graph& g, const std::string& name) {
  Weight* w = g.weights().find(name);
  REQUIRE(w != nullptr);
  w->tensor = w->tensor.clone() + 0.5;
}

}  // namespace

TEST_CASE("verify blame: the first value of the loaded graph that differs from the original") {
  std::string path = resblock_path();
  if (path.empty()) return;
  auto inputs = make_example_inputs({InputSpec{{1, 3, 32, 32}, DType::F32}});

  Model faithful = load_model(path);
  CHECK_FALSE(faithful.source_values.empty());
  CHECK_FALSE(first_difference_from_original(faithful, inputs, 1e-4).has_value());

  Model m = load_model(path);
  perturb(*m.graph, "bn1.weight");  // conv1's result still agrees; bn1's is the first to differ
  auto d = first_difference_from_original(m, inputs, 1e-4);
  REQUIRE(d.has_value());
  CHECK(d->module == "bn1");
  CHECK(d->op == "nn.BatchNorm2d");
  CHECK(d->rel > 1e-4);
  CHECK(d->str().find("self.bn1") != std::string::npos);
}

TEST_CASE("verify blame: the first value a pass changed, by name against the loaded graph") {
  std::string path = resblock_path();
  if (path.empty()) return;
  auto inputs = make_example_inputs({InputSpec{{1, 3, 32, 32}, DType::F32}});
  Model loaded = load_model(path);
  Model changed = load_model(path);
  CHECK_FALSE(first_difference(*loaded.graph, *changed.graph, inputs, 1e-4).has_value());
  perturb(*changed.graph, "layer1.0.conv2.weight");
  auto d = first_difference(*loaded.graph, *changed.graph, inputs, 1e-4);
  REQUIRE(d.has_value());
  CHECK(d->module == "layer1.0.conv2");
}

}  // namespace tt
