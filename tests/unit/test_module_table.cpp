// The module table (Note [Module table] in lib/ir/ir.h): container_kind / short_type_name, and
// what the TorchScript (traced and scripted) and .pt2 loaders fill it with, on the generated test
// models in $TT_TESTMODELS_DIR and its siblings (_scripted, _torch2, _export, _onnx); a model that
// is not there is skipped with a message.
#include "ir/ir.h"
#include "loaders/loader.h"
#include "support/diag.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace tt;

namespace {

// $TT_TESTMODELS_DIR<suffix>/<name>, or "" (with a message) when it is not there.
std::string test_model(const std::string& suffix, const std::string& name) {
  const char* dir = std::getenv("TT_TESTMODELS_DIR");
  if (!dir || !*dir) {
    MESSAGE("TT_TESTMODELS_DIR is not set; skipping");
    return "";
  }
  std::string p = std::string(dir) + suffix + "/" + name;
  if (!std::ifstream(p)) {
    MESSAGE("missing " << p << "; skipping");
    return "";
  }
  return p;
}

const ModuleInfo& entry(const Graph& g, const std::string& path) {
  auto it = g.modules().find(path);
  REQUIRE_MESSAGE(it != g.modules().end(), "no module table entry for '" << path << "'");
  return it->second;
}

using Args = std::vector<std::string>;

}  // namespace

TEST_CASE("module table: container_kind and short_type_name") {
  CHECK(container_kind("torch.nn.modules.container.Sequential") == ContainerKind::Sequential);
  CHECK(container_kind("torch.nn.modules.container.ModuleList") == ContainerKind::ModuleList);
  CHECK(container_kind("torch.nn.modules.container.ModuleDict") == ContainerKind::ModuleDict);
  CHECK(container_kind("torch.nn.Sequential") == ContainerKind::Sequential);
  // Subclasses of Sequential and other classes are no containers.
  CHECK(container_kind("torchvision.ops.misc.Conv2dNormActivation") == ContainerKind::None);
  CHECK(container_kind("torchvision.models.resnet.BasicBlock") == ContainerKind::None);
  CHECK(container_kind("torch.nn.modules.container.ParameterList") == ContainerKind::None);
  CHECK(container_kind("my.Sequential") == ContainerKind::None);
  CHECK(container_kind("") == ContainerKind::None);

  CHECK(short_type_name("torchvision.models.resnet.BasicBlock") == "BasicBlock");
  CHECK(short_type_name("torch.nn.modules.container.Sequential") == "Sequential");
  CHECK(short_type_name("CustomParam") == "CustomParam");
  CHECK(short_type_name("") == "");
}

TEST_CASE("module table: traced torchvision resnet18") {
  std::string path = test_model("", "resnet18.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  CHECK(entry(*g, "").type == "torchvision.models.resnet.ResNet");
  CHECK(entry(*g, "").forward_args == Args{"x"});
  const ModuleInfo& layer1 = entry(*g, "layer1");
  CHECK(layer1.type == "torch.nn.modules.container.Sequential");  // "__torch__." and mangle gone
  CHECK(container_kind(layer1.type) == ContainerKind::Sequential);
  const ModuleInfo& block = entry(*g, "layer1.0");
  CHECK(block.type == "torchvision.models.resnet.BasicBlock");
  CHECK(short_type_name(block.type) == "BasicBlock");
  // The tracer named the block's input argument_1 (Note [Forward argument names]).
  CHECK(block.forward_args.empty());
  CHECK(entry(*g, "layer1.1").type == "torchvision.models.resnet.BasicBlock");
  CHECK(entry(*g, "layer1.0.conv1").type == "torch.nn.modules.conv.Conv2d");
  CHECK(entry(*g, "layer2.0.downsample").type == "torch.nn.modules.container.Sequential");
  CHECK(entry(*g, "layer2.0.downsample.1").type == "torch.nn.modules.batchnorm.BatchNorm2d");
  CHECK(entry(*g, "fc").type == "torch.nn.modules.linear.Linear");
  // Every module of the tree: the owner of every weight, and nothing else than modules.
  for (const std::string& w : g->weights().names()) {
    auto dot = w.rfind('.');
    CHECK_MESSAGE(g->modules().count(dot == std::string::npos ? "" : w.substr(0, dot)), w);
  }
  CHECK(g->modules().size() == 68);  // len(list(torchvision.models.resnet18().named_modules()))
  for (const auto& [p, info] : g->modules()) {
    CAPTURE(p);
    CHECK(info.type.rfind("__torch__", 0) == std::string::npos);
    CHECK(info.type.find("___torch_mangle") == std::string::npos);
  }
}

TEST_CASE("module table: scripted models keep the source's argument names") {
  std::string path = test_model("_scripted", "sc_resnet18.pt");
  if (!path.empty()) {
    Diagnostics diags;
    auto g = load_torchscript(path, diags);
    CHECK(entry(*g, "").type == "torchvision.models.resnet.ResNet");
    CHECK(entry(*g, "").forward_args == Args{"x"});
    CHECK(entry(*g, "layer1").forward_args == Args{"input"});
    CHECK(entry(*g, "layer1.0").type == "torchvision.models.resnet.BasicBlock");
    CHECK(entry(*g, "layer1.0").forward_args == Args{"x"});
    CHECK(entry(*g, "layer1.0.bn1").type == "torch.nn.modules.batchnorm.BatchNorm2d");
  }
  path = test_model("_scripted", "sc_mobilenet_v2.pt");
  if (!path.empty()) {
    Diagnostics diags;
    auto g = load_torchscript(path, diags);
    CHECK(entry(*g, "").type == "torchvision.models.mobilenetv2.MobileNetV2");
    CHECK(container_kind(entry(*g, "features").type) == ContainerKind::Sequential);
    // A Sequential subclass: its own class, no container.
    const ModuleInfo& cna = entry(*g, "features.0");
    CHECK(cna.type == "torchvision.ops.misc.Conv2dNormActivation");
    CHECK(container_kind(cna.type) == ContainerKind::None);
    CHECK(cna.forward_args == Args{"input"});
    CHECK(entry(*g, "features.1").type == "torchvision.models.mobilenetv2.InvertedResidual");
    CHECK(entry(*g, "features.1").forward_args == Args{"x"});
    CHECK(entry(*g, "features.1.conv.0.2").type == "torch.nn.modules.activation.ReLU6");
  }
  path = test_model("_scripted", "sc_gate_cell.pt");
  if (!path.empty()) {
    Diagnostics diags;
    auto g = load_torchscript(path, diags);
    CHECK(entry(*g, "").type == "GateCell");  // defined in the generator's __main__
    CHECK(entry(*g, "").forward_args == Args{"x", "h"});
  }
}

TEST_CASE("module table: a ModuleList has no forward") {
  std::string path = test_model("_torch2", "t2_encoder_fast.pt");
  if (path.empty()) return;
  Diagnostics diags;
  auto g = load_torchscript(path, diags);
  const ModuleInfo& layers = entry(*g, "encoder.layers");
  CHECK(container_kind(layers.type) == ContainerKind::ModuleList);
  CHECK(layers.forward_args.empty());
  CHECK(entry(*g, "encoder.layers.0").type ==
        "torch.nn.modules.transformer.TransformerEncoderLayer");
}

TEST_CASE("module table: .pt2 classes from nn_module_stack") {
  std::string path = test_model("_export", "exp_resnet18.pt2");
  if (!path.empty()) {
    Diagnostics diags;
    auto g = load_export(path, diags);
    CHECK(entry(*g, "").type == "torchvision.models.resnet.ResNet");
    CHECK(entry(*g, "layer1").type == "torch.nn.modules.container.Sequential");
    CHECK(entry(*g, "layer1.0").type == "torchvision.models.resnet.BasicBlock");
    CHECK(entry(*g, "layer1.0.conv1").type == "torch.nn.modules.conv.Conv2d");
    CHECK(entry(*g, "layer2.0.downsample").type == "torch.nn.modules.container.Sequential");
    for (const auto& [p, info] : g->modules()) {
      CAPTURE(p);
      CHECK(info.forward_args.empty());
      CHECK(!info.type.empty());
      // The archive's names, not the classes the builder made for the lifter.
      CHECK(info.type.find("torch_mangle") == std::string::npos);
      CHECK(info.type != "torch.nn.modules.module.Module");
    }
  }
  path = test_model("_export", "exp_small_cnn.pt2");
  if (!path.empty()) {
    Diagnostics diags;
    auto g = load_export(path, diags);
    CHECK(entry(*g, "").type == "__main__.SmallCnn");
    CHECK(entry(*g, "conv").type == "torch.nn.modules.conv.Conv2d");
  }
}

TEST_CASE("module table: ONNX leaves it empty") {
  std::string path = test_model("_onnx", "resnet18_op13.onnx");
  if (path.empty()) return;
  Diagnostics diags;
  CHECK(load_onnx(path, diags)->modules().empty());
}
