// `--emit torchscript`, the saving half: forward's source (made by lib/emitters/torchscript.h)
// compiled with torch::jit::Module::define into a module tree that holds the weights (one
// submodule per state_dict prefix: "layer1.0.conv1.weight" -> module layer1, child "0", child
// "conv1", parameter "weight", so state_dict keys equal NAME.pth's), and saved as an archive.
#include "loaders/torchscript_save.h"

#include "support/diag.h"
#include "support/output_set.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <cctype>
#include <cerrno>
#include <fstream>
#include <map>
#include <memory>

namespace tt {

std::vector<c10::FunctionSchema> jit_operator_schemas(const std::string& qualified_name) {
  std::vector<c10::FunctionSchema> out;
  for (const auto& op : torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(qualified_name)))
    out.push_back(op->schema());
  return out;
}

namespace {

// `ops.<ns>.<name>`: the op <ns>::<name> of a custom library (what archives' code calls
// torch.ops.<ns>.<name>).
struct OpsNamespaces : torch::jit::SugaredValue {
  std::string kind() const override { return "ops"; }
  std::shared_ptr<torch::jit::SugaredValue> attr(const torch::jit::SourceRange&,
                                                 torch::jit::GraphFunction&,
                                                 const std::string& ns) override {
    return std::make_shared<torch::jit::BuiltinModule>(ns);
  }
};

// Module::define's default resolver knows only `torch`; the generated source also uses the
// special form `annotate` and `ops` (as the TorchScript importer does).
struct SourceResolver : torch::jit::NativeResolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(
      const std::string& name, torch::jit::GraphFunction& m,
      const torch::jit::SourceRange& loc) override {
    if (name == "annotate") return torch::jit::SpecialFormValue::create(c10::prim::annotate);
    if (name == "ops") return std::make_shared<OpsNamespaces>();
    return NativeResolver::resolveValue(name, m, loc);
  }
};

// The module tree that holds the weights: one node per state_dict prefix.
struct ModTree {
  std::vector<std::pair<std::string, Weight>> params, buffers;
  std::vector<std::string> order;  // children in first-seen (state_dict) order
  std::map<std::string, std::unique_ptr<ModTree>> children;
};

std::string class_atom(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "M" + out;
  return out;
}

torch::jit::Module build_module(const ModTree& t, const std::string& qualified,
                                const std::shared_ptr<torch::jit::CompilationUnit>& cu,
                                const std::string& prefix) {
  torch::jit::Module m(c10::QualifiedName(qualified), cu, /*shouldMangle=*/true);
  m.register_attribute("training", c10::BoolType::get(), false);
  for (const auto& [name, w] : t.params) {
    at::Tensor x = w.tensor.detach();
    if (x.is_floating_point() || x.is_complex()) x.requires_grad_(true);
    m.register_parameter(name, x, /*is_buffer=*/false);
  }
  for (const auto& [name, w] : t.buffers) m.register_buffer(name, w.tensor.detach());
  for (const auto& name : t.order) {
    std::string path = prefix.empty() ? name : prefix + "." + name;
    std::string q = qualified.substr(0, qualified.rfind('.')) + "." + class_atom("m_" + path);
    m.register_module(name, build_module(*t.children.at(name), q, cu, path));
  }
  return m;
}

}  // namespace

void save_torchscript_module(const Graph& g, const std::string& src,
                             const std::vector<std::pair<std::string, at::Tensor>>& constants,
                             const std::string& path, const std::string& class_name) {
  ModTree root;
  for (const std::string& name : g.weights().names()) {
    std::vector<std::string> comps;
    for (size_t start = 0;;) {
      size_t dot = name.find('.', start);
      comps.push_back(
          name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    ModTree* t = &root;
    for (size_t i = 0; i + 1 < comps.size(); ++i) {
      auto it = t->children.find(comps[i]);
      if (it == t->children.end()) {
        t->order.push_back(comps[i]);
        it = t->children.emplace(comps[i], std::make_unique<ModTree>()).first;
      }
      t = it->second.get();
    }
    const Weight& w = g.weights().at(name);
    (w.is_param ? t->params : t->buffers).emplace_back(comps.back(), w);
  }

  try {
    auto cu = std::make_shared<torch::jit::CompilationUnit>();
    std::string base = "__torch__.tinytrace";
    torch::jit::Module m = build_module(root, base + "." + class_atom(class_name), cu, "");
    for (const auto& [name, t] : constants)
      m.register_attribute(name, c10::TensorType::get(), t.detach(), /*is_param=*/false,
                           /*is_buffer=*/false);
    try {
      m.define(src, std::make_shared<SourceResolver>());
    } catch (const std::exception& e) {
      std::string msg = e.what();
      std::string first = msg.substr(msg.find_first_not_of(" \n"));
      first = first.substr(0, first.find('\n'));
      throw Error(ExitCode::Internal,
                  "--emit torchscript: the generated forward does not compile: " + first +
                      " — report it as a tinytrace bug",
                  {msg, src});
    }
    m.eval();
    // Through a stream whose failure we see: a full disk is exit 6 (Note [Exit code 6]).
    errno = 0;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (out) m.save(out);
    out.close();
    if (!out) throw output_error(path, errno);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    throw Error(ExitCode::Internal, "--emit torchscript: cannot build or save " + path + ": " +
                                        msg.substr(0, msg.find('\n')) +
                                        " — report it as a tinytrace bug");
  }
}

}  // namespace tt
