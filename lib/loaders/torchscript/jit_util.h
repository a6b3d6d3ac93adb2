// Helpers shared by the files of the TorchScript loader (lib/loaders/torchscript/): JIT node
// names and locations, JIT types as IR types, and the read-only view of a method graph the leaf
// recipes look at. JIT headers: include only from lib/loaders/.
#pragma once

#include "ir/ir.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tt::ts {

namespace jit = torch::jit;
using c10::IValue;

std::string join_path(const std::string& prefix, const std::string& name);

// "file.py:123" for a node, from the source range of the Python code that generated it.
std::string node_loc(const jit::Node* n);

std::string kind_str(const jit::Node* n);

// Kept as a call while preparing scripted graphs, lifted as the F.interpolate op.
inline constexpr const char* kInterpolate = "torch.nn.functional.interpolate";

// "aten::add.Tensor" / "aten::relu" (default overload: no suffix).
std::string qualified_overload(const c10::FunctionSchema& s);

// "torch.nn.modules.conv.Conv2d" from "__torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d".
std::string plain_name(std::string q);

std::string plain_type_name(const jit::Module& m);

// The module table of a loaded module (Note [Module table] in lib/ir/ir.h): every module of the
// tree, the root ("") included, with its plain class name and its forward's argument names
// (Note [Forward argument names]).
std::map<std::string, ModuleInfo> module_table(const jit::Module& root);

Type convert_type(const c10::TypePtr& t);

// Whether Python's sort orders a list of `elem` as TorchScript's does (Note [Orders Python
// shares], lifter_control.cpp).
bool python_orders_alike(const c10::TypePtr& elem);

// How an int constant is to be read when it feeds a schema argument.
enum class IntRole { Plain, ScalarType, Layout, MemoryFormat };

IntRole int_role(const c10::Argument& arg);

std::string shape_str(const at::Tensor& t);

// Read-only view of a leaf module's method graph.
class MethodView {
 public:
  explicit MethodView(const jit::Graph& g) : g_(g) {
    for (const jit::Node* n : g.nodes()) {
      if (!n->blocks().empty()) clean_ = false;
      auto k = n->kind();
      if (k == c10::prim::GetAttr) {
        // Only reads of the module's own tensors (or its submodules' tensors, for
        // nn.MultiheadAttention's out_proj) are part of a leaf's forward.
        const jit::Value* owner = n->input(0);
        std::string prefix;
        if (owner != g.inputs().at(0)) {
          auto it = submodules_.find(owner);
          if (it == submodules_.end()) {
            clean_ = false;
            continue;
          }
          prefix = it->second + ".";
        }
        std::string name = prefix + n->s(c10::attr::name);
        auto ct = n->output()->type()->cast<c10::ClassType>();
        if (ct && ct->is_module()) submodules_[n->output()] = name;
        // Tensor? too: a scripted Conv2d's bias (the recipes check which weights exist)
        else if (n->output()->type()->isSubtypeOf(*c10::OptionalType::ofTensor()))
          tensors_[n->output()] = name;
        else
          clean_ = false;
        continue;
      }
      if (k == c10::prim::Constant || k == c10::prim::ListConstruct) continue;
      // The tuple of results (the tracer packs a module's results into one).
      if (k == c10::prim::TupleConstruct && g.outputs().size() == 1 &&
          n->output() == g.outputs()[0])
        continue;
      ops_.push_back(n);
    }
  }
  bool clean() const { return clean_ && g_.outputs().size() == 1; }
  const std::vector<const jit::Node*>& ops() const { return ops_; }
  size_t num_inputs() const { return g_.inputs().size(); }
  bool is_input(const jit::Value* v, size_t i) const {
    return i < g_.inputs().size() && v == g_.inputs()[i];
  }
  const jit::Value* returned() const { return g_.outputs().at(0); }

  std::optional<IValue> constant(const jit::Value* v) const {
    if (v->node()->kind() != c10::prim::Constant) return std::nullopt;
    return jit::toIValue(v);
  }
  std::optional<int64_t> as_int(const jit::Value* v) const {
    auto c = constant(v);
    if (c && c->isInt()) return c->toInt();
    return std::nullopt;
  }
  std::optional<double> as_double(const jit::Value* v) const {
    auto c = constant(v);
    if (c && c->isDouble()) return c->toDouble();
    if (c && c->isInt()) return static_cast<double>(c->toInt());
    return std::nullopt;
  }
  std::optional<bool> as_bool(const jit::Value* v) const {
    auto c = constant(v);
    if (c && c->isBool()) return c->toBool();
    return std::nullopt;
  }
  std::optional<std::string> as_str(const jit::Value* v) const {
    auto c = constant(v);
    if (c && c->isString()) return c->toStringRef();
    return std::nullopt;
  }
  bool is_none(const jit::Value* v) const {
    auto c = constant(v);
    return c && c->isNone();
  }
  std::optional<std::vector<int64_t>> as_ints(const jit::Value* v) const {
    if (v->node()->kind() == c10::prim::ListConstruct) {
      std::vector<int64_t> out;
      for (const jit::Value* e : v->node()->inputs()) {
        auto i = as_int(e);
        if (!i) return std::nullopt;
        out.push_back(*i);
      }
      return out;
    }
    auto c = constant(v);
    if (c && c->isIntList()) return c->toIntVector();
    return std::nullopt;
  }
  std::optional<std::vector<double>> as_doubles(const jit::Value* v) const {
    if (v->node()->kind() == c10::prim::ListConstruct) {
      std::vector<double> out;
      for (const jit::Value* e : v->node()->inputs()) {
        auto d = as_double(e);
        if (!d) return std::nullopt;
        out.push_back(*d);
      }
      return out;
    }
    auto c = constant(v);
    if (c && c->isDoubleList()) return c->toDoubleVector();
    return std::nullopt;
  }
  // The attribute path when v is `self.<name>` (or `self.<sub>.<name>`).
  std::optional<std::string> attr_name(const jit::Value* v) const {
    auto it = tensors_.find(v);
    if (it == tensors_.end()) return std::nullopt;
    return it->second;
  }
  // Index of the method input v is, if any.
  std::optional<size_t> input_index(const jit::Value* v) const {
    for (size_t i = 1; i < g_.inputs().size(); ++i)
      if (g_.inputs()[i] == v) return i;
    return std::nullopt;
  }

 private:
  const jit::Graph& g_;
  std::vector<const jit::Node*> ops_;
  std::unordered_map<const jit::Value*, std::string> submodules_, tensors_;
  bool clean_ = true;
};

}  // namespace tt::ts
