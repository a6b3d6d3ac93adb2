// The torch.export loader's module builder: an exported program as the module torch.jit.trace
// would have given (export_to_module, export.h). Private to lib/loaders/export/.
//
// Note [Exported programs as traced modules]
// An exported program is one flat ATen graph (serialized_exported_program.json; the schema is
// torch/_export/serde/schema.py, version 8.x in torch 2.6) whose nodes carry the nn.Module calls
// they were traced in (metadata nn_module_stack: "key,path,class;key,path,class;..." from the root
// down), with parameters, buffers and lifted constants as graph inputs the signature names. Rather
// than a second lifter, this file rebuilds from it the module torch.jit.trace would have given and
// hands that to the TorchScript lifter (lift_jit_module), so leaf recipes, in-place handling,
// normalisations and the op table apply unchanged:
// - one module object per module path (from the call stacks and the state_dict names), each of its
//   own module class named after the Python class the way the tracer names them
//   ("__torch__.torch.nn.modules.conv.___torch_mangle_N.Conv2d"), holding its parameters and
//   buffers (serialized_state_dict.pt / serialized_constants.pt) under their state_dict names, and
//   lifted tensor constants as plain tensor attributes (the lifter keeps those as constants);
// - one method per module call (forward, forward1, ... when a module is called again: the stack
//   keys differ per call, "b.relu" then "b.relu@1"), holding the nodes whose innermost stack entry
//   is that call and calling its sub-calls with prim::CallMethod. Values crossing a call boundary
//   are method inputs and results (a tuple when there are several); parameters are read with
//   prim::GetAttr chains from the method's self, as in a traced module;
// - ATen nodes get their inputs in schema order, missing ones from the schema's defaults, and
//   LibTorch picks the overload from the input types as for any TorchScript node (a number given
//   for a Tensor argument, `x + 1`, selects the Scalar overload). Symbolic sizes stay code:
//   aten.sym_size.int is aten::size.int, Python operators on SymInts (_operator.mul, ...) are the
//   TorchScript int ops, so a dynamic dim is `x.size(0)` in the generated code; runtime asserts
//   (_assert_scalar, sym_constrain_range*, _assert_tensor_metadata) are dropped, detach/alias and
//   the lift_fresh_copy of a tensor literal are the value itself. A decomposed program
//   (ep.run_decompositions()) gets back the ops its nodes came from where that is exact:
//   convolution -> _convolution, _native_batch_norm_legit_no_training -> batch_norm,
//   addmm(b, x, permute(w)) -> linear, _softmax -> softmax, ..., so its modules are recognised too.
// Scalar nodes (sizes and arithmetic on them) move to the innermost call containing them and all
// their uses: export shares them between modules (ViT's attention layers reuse one batch*heads),
// which would otherwise give a leaf module an extra result. A call whose nodes interleave with its
// caller's so that no single call can stand for them (data flowing out and back in, or an in-place
// write that calling it as one unit would move across a read) is dissolved into the caller.
// The module built here is also --verify's reference (jit_runner.cpp), so the archive's own
// values are what the converted graph is compared with.
//
// The builder is defined over several files: builder.cpp (signature, nodes, the call tree),
// builder_modules.cpp (module objects, scheduling, call results), builder_methods.cpp (method
// graphs, the result), builder_nodes.cpp (nodes); stack.cpp reads the call stacks.
#pragma once

#include "ir/ir.h"
#include "loaders/export/archive.h"
#include "support/diag.h"

#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/source_range.h>
#include <torch/csrc/jit/ir/ir.h>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tt::pt2 {

namespace jit = torch::jit;
using c10::IValue;

// ---- stack.cpp: module paths and calls ----

struct StackEntry {
  std::string key, path, cls;
};

// "layer1.0.conv" from the Python expression dynamo recorded when torch's own normalisation did
// not apply ("L['s'].layer1[0].conv", "getattr(L['self'].layer1, '0')", "._modules['0']");
// nullopt when it is not such an expression (e.g. a slice of a Sequential).
std::optional<std::string> normalize_path(const std::string& p);

// "key,path,class;..." -> entries (the path may hold commas: the key is up to the first comma,
// the class after the last).
std::vector<StackEntry> parse_stack(const std::string& s);

// Whether path is prefix or inside it ("" holds every path).
bool under(const std::string& prefix, const std::string& path);

struct Call {
  std::string key, path, cls;
  Call* parent = nullptr;
  std::vector<Call*> children;  // in order of first appearance, then as scheduled
  std::map<std::string, Call*> by_key;
  std::vector<int> nodes;  // its own nodes, in graph order
  std::vector<std::pair<int, Call*>>
      items;                         // scheduled: a node (index, nullptr) or a sub-call (-1, call)
  std::vector<std::string> outputs;  // values it returns, in graph order
  std::string method;                // forward, forward1, ...
};

// ---- builder_nodes.cpp: node targets ----

// Python operators on SymInts/SymFloats/SymBools -> the TorchScript scalar op (overload chosen by
// the input types).
const std::map<std::string, const char*>& scalar_ops();

// Runtime asserts and constraints, which the module does not keep.
bool is_dropped(const std::string& target);

// ---- the builder ----

class Builder {
 public:
  Builder(std::string path, Diagnostics* diags) : path_(std::move(path)), diags_(diags) {}

  // The module of the archive at the path given (builder.cpp).
  jit::Module run();
  // After run(): the classes the call stacks name, by module path (Note [Module table] in
  // lib/ir/ir.h); the root only when the archive names its class, no forward argument names.
  std::map<std::string, ModuleInfo> module_table() const;

 private:
  enum class Kind { Tensor, Int, Float, Bool };

  // A method being built for one call.
  struct Method {
    Call* call = nullptr;
    std::shared_ptr<jit::Graph> g;
    jit::Value* self = nullptr;
    std::unordered_map<std::string, jit::Value*> env;
    std::vector<std::string> inputs;  // external values, in input order (after self)
    std::map<std::string, jit::Value*>
        objects;  // module path -> its value (GetAttr chains, inputs)
  };

  struct WeightSpec {
    std::string target;  // state_dict / constants name
    enum { Parameter, Buffer, Constant } what;
    at::Tensor value;
  };

  struct Mod {
    std::string cls;
    jit::Module module;
    std::vector<std::string> children;  // direct child names, in order
  };

  jit::Module& root_module() { return mods_.at("").module; }

  // ---- builder.cpp ----
  jit::Module build(const Archive& a);
  void read_signature(const json& sig, const std::map<std::string, at::Tensor>& tensors);
  static void collect_uses(const json& arg, std::vector<std::string>& out);
  static void collect_defs(const json& out, std::vector<std::string>& names);
  bool is_scalar_node(int i) const;
  Call* new_call(Call* parent, const StackEntry& e, const std::string& path);
  void fold_linear();
  void read_nodes();
  const std::set<std::string>& graph_outputs();
  static int depth(const Call* c);
  static Call* common(Call* a, Call* b);
  static bool contains(const Call* outer, const Call* inner);

  // ---- builder_modules.cpp ----
  static std::string sanitize_component(const std::string& s);
  std::string class_name(const std::string& cls);
  Mod& module_at(const std::string& path);
  void build_modules();
  std::vector<std::pair<std::string, const WeightSpec*>> weight_order() const;
  std::optional<std::pair<int, Call*>> item_of(const Call* c, int i) const;
  void subtree_nodes(const Call* c, std::vector<int>& out) const;
  void dissolve(Call* c, Call* child);
  bool reorder_hazard(const Call* c, const Call* k, std::vector<int>& sub) const;
  void schedule(Call* c);
  void find_outputs();
  void name_methods(Call* c, std::map<std::string, int>& count);

  // ---- builder_methods.cpp ----
  c10::TypePtr type_of(const std::string& name) const;
  c10::TypePtr input_type(const std::string& name) const;
  jit::Value* add_input(Method& m, const std::string& key, const c10::TypePtr& type,
                        const std::string& debug);
  jit::Value* object(Method& m, const std::string& path);
  jit::Value* value(Method& m, const std::string& name);
  Method build_method(Call* c, const json& call_graph);
  jit::Value* output_value(Method& m, const json& arg);
  jit::Value* root_result(Method& m, const json& call_graph);

  // ---- builder_nodes.cpp ----
  std::string node_name(const json& n) const;
  std::string where(const json& n, const Call* c) const;
  // "file.py:12" of the node's stack trace (the file's base name), or "".
  std::string short_loc(const json& n) const;
  static size_t frame(const std::string& st);
  static std::pair<std::string, size_t> location(const json& n);
  jit::SourceRange source_range(const json& n);
  [[noreturn]] void unsupported(const json& n, const Call* c, const std::string& what,
                                const std::string& fix) const;
  static const c10::FunctionSchema* find_schema(const std::string& qual,
                                                const std::string& overload);
  static bool is_float_type(const c10::TypePtr& t);
  static bool is_float_list(const c10::TypePtr& t);
  jit::Value* arg_value(Method& m, const json& arg, const c10::TypePtr& formal, const json& n);
  void bind_outputs(Method& m, jit::Node* node, const json& n);
  jit::Node* make_node(Method& m, const std::string& kind, const std::vector<jit::Value*>& ins,
                       const json& n);
  static bool is_inplace_target(const std::string& target);
  bool alias_of(Method& m, int i, const std::string& target);
  bool only_first_output_used(const json& n);
  void emit_node(Method& m, int i);

  std::string path_;
  Diagnostics* diags_;
  const json* graph_ = nullptr;
  std::vector<const json*> nodes_;
  std::unordered_map<std::string, Kind> kinds_;
  std::map<std::string, WeightSpec> weights_;  // graph input name -> parameter/buffer/constant
  std::vector<std::string> user_inputs_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> users_;
  std::unordered_map<std::string, bool> live_;
  std::map<int, std::tuple<std::string, std::string, std::string>>
      linear_;  // addmm -> (x, weight, bias)
  std::set<std::string> outputs_;
  bool outputs_read_ = false;
  std::deque<Call> calls_;
  Call* root_ = nullptr;
  std::vector<Call*> node_call_;
  std::vector<bool> dropped_;
  std::map<std::string, Mod> mods_;
  std::shared_ptr<jit::CompilationUnit> cu_;
  int mangle_ = 0;
  std::map<std::pair<std::string, size_t>, std::shared_ptr<jit::Source>> sources_;
};

}  // namespace tt::pt2
