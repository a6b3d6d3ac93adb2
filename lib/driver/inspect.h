// `tinytrace inspect MODEL`: what is in a model file — inputs/outputs, the module tree with
// parameter counts, the op histogram, parameter totals, ops that fell back to torch.ops.aten,
// warnings. The JSON document (format "tinytrace-inspect") is described by
// lib/emitters/inspect.schema.json; the text form is printed from the same document.
#pragma once

#include "loaders/loader.h"
#include "ir/input_spec.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace tt {

constexpr int kInspectVersion = 1;

// One module of the model's module tree (the root, path "", is the model itself).
struct ModuleSummary {
  std::string path;                // "layer1.0.conv1"
  std::string cls;                 // original class (module table: torch.nn.modules.conv.Conv2d)
  int depth = 0;                   // 0 for the root
  std::vector<const Node*> calls;  // nodes with module() == path (leaf module ops), in order
  // Over the module and its submodules, like sum(p.numel() for p in m.parameters()).
  int64_t param_numel = 0, param_tensors = 0, buffer_numel = 0, buffer_tensors = 0;
  // "nn.Conv2d"; "nn.Conv2d+nn.BatchNorm2d" if one path was called as several ops; "" for a
  // module with no call of its own (custom modules are inlined, their nodes carry scope()).
  std::string type() const;
};

// The module tree in pre-order (children in state_dict order, then order of first use): every
// module path that calls an op (module()), that is a scope of inlined nodes (scope()), or that
// owns a parameter/buffer (including ones only read with prim.GetAttr, or never read), and all
// their ancestors.
std::vector<ModuleSummary> collect_modules(const Graph& g);

struct InspectOptions {
  std::string model_path;
  std::vector<InputSpec> input_shapes;  // optional: shapes of inputs, outputs and (--dot) edges
  bool json = false;
  std::string dot_path;  // --dot FILE: also write the graph as Graphviz (and FILE.svg with dot)
};

nlohmann::ordered_json inspect_json(const Model& m);
// Human-readable form of an inspect_json document.
void print_inspect_text(const nlohmann::ordered_json& doc, std::ostream& os);

// The whole command. Throws tt::Error (exit codes of DESIGN.md §1).
void run_inspect(const InspectOptions& opts, std::ostream& out);

}  // namespace tt
