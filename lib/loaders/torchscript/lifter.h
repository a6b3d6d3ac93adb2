// The lifter of the TorchScript loader: one jit::Module's forward, as an IR graph. Private to
// lib/loaders/torchscript/ (the entry points are load_torchscript / lift_jit_module, load.cpp).
//
// Note [Lifting TorchScript]
// torch::jit::load gives a Module whose methods are un-inlined JIT graphs: `self` is the first
// input, submodules are reached with prim::GetAttr chains and called with prim::CallMethod
// (forward, or forward1, forward2, ... when the tracer saw a module called several times).
// The lifter walks the top module's forward graph with a Frame per method being lifted; a Frame
// maps each JIT value either to an IR value or to a module reference (path + jit::Module).
// - prim::GetAttr of a submodule gives a module reference; of a parameter/buffer gives a
//   prim.GetAttr node with a weight ref; of anything else gives a constant.
// - prim::CallMethod on a submodule whose type is a known torch.nn leaf AND whose method graph
//   matches that leaf's recipe (Note [Leaf recipes]) becomes one module op node; any other call
//   is inlined: the callee's graph is lifted in a new Frame whose nodes get scope = callee path.
// - ATen ops go through the op table (find_op_by_aten); a few ATen forms are normalised first
//   (Note [ATen normalisations]); unknown ATen ops keep their qualified name with a warning.
// - Scripted models: see Note [Scripted method graphs] and Note [Lifting control flow].
//
// The class is defined over several files, by concern: lifter.cpp (weights, values, constants,
// the node dispatch), lifter_control.cpp (prim::If / prim::Loop, list and dict mutation), lifter_modules.cpp
// (calls: inlining, leaf recipes, scripted leaves), lifter_scripted.cpp (preparing scripted
// method graphs), lifter_inplace.cpp (in-place writes), lifter_ops.cpp (ATen ops, normalisations,
// scalar builtins) and jit_cleanup.cpp (tracer noise, dead pure nodes).
#pragma once

#include "loaders/torchscript/jit_util.h"
#include "support/diag.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tt::ts {

// lifter_quantized.cpp: the state_dict entries a quantized module keeps outside its parameters
// and buffers (packed weight and bias, scale, zero point; Note [Quantized modules]); nullopt for a
// module that is not one of torch.ao.nn.quantized's. `parent` and `name` locate a traced
// QFunctional, whose scale the trace recorded in its parent's graph only.
std::optional<std::vector<std::pair<std::string, at::Tensor>>> quantized_state(
    const jit::Module& m, const jit::Module* parent = nullptr, const std::string& name = "");

struct ModuleRef {
  jit::Module module;
  std::string path;  // "" for the top module
};

struct ObjectState;
struct Binding;

// What a JIT value stands for while lifting one method: an IR value, a module, a TorchScript
// object made in the graph, or a tuple that holds one of those (Note [Objects while lifting]).
struct Binding {
  Value* value = nullptr;
  std::optional<ModuleRef> module;
  std::shared_ptr<ObjectState> object;
  std::shared_ptr<std::vector<Binding>> tuple;
  bool is_value() const { return value != nullptr; }
};

// A TorchScript class instance (prim::CreateObject) while lifting: its fields as last written,
// and the IR block it was made in (writes from any other block are refused).
struct ObjectState {
  c10::ClassTypePtr type;
  std::map<std::string, Binding> fields;
  const Block* home = nullptr;
  // An object kept in the model (a module's attribute, BoxCoder): fields not written yet are
  // read from it as constants; writes are refused (they would persist between calls).
  c10::intrusive_ptr<c10::ivalue::Object> stored;
  // An object kept as module state (Note [Objects as module state]): read from its slots, or
  // written to them; its fields are not written after that. `is_none` is the read of the
  // presence slot of an Optional attribute (true when it holds None), nullptr otherwise.
  bool in_state = false;
  Value* is_none = nullptr;
};

struct Frame {
  ModuleRef self;
  std::string scope;
  std::unordered_map<const jit::Value*, Binding> env;
  // The frame and node that called this method or function (nullptr at the top), and how graph
  // input i maps to the call's input i + arg_offset; for Note [In-place writes while lifting].
  const Frame* caller = nullptr;
  const jit::Node* call = nullptr;
  size_t arg_offset = 0;
};

class Lifter {
 public:
  Lifter(jit::Module root, Diagnostics& diags,
         std::vector<std::pair<std::string, std::string>>* source_values)
      : root_(std::move(root)), diags_(diags), source_values_(source_values) {}

  // The IR graph of the root module's forward (lifter.cpp).
  std::unique_ptr<Graph> run();

 private:
  // ---- lifter.cpp ----
  // The graph inputs' defaults from the forward's schema (Note [Forward defaults] in ir.h).
  void read_input_defaults(const c10::FunctionSchema& schema);
  void collect_weights(const jit::Module& m, const std::string& prefix);
  static void collect_names(const jit::Module& m, const std::string& prefix,
                            std::vector<std::pair<std::string, bool>>& out);
  void add_weight(const std::string& name, const at::Tensor& t, bool is_param);
  static std::string name_hint(const jit::Value* v);
  Value* value_of(Frame& f, const jit::Value* v, const jit::Node* user,
                  IntRole role = IntRole::Plain);
  Value* typed_int(Value* val, IntRole role, Frame& f, const jit::Node* user);
  Node* append(const std::string& op, const std::vector<Value*>& ins, Frame& f,
               const jit::Node* src);
  Node* emit(const std::string& op, const std::vector<Value*>& ins, const jit::Node* src, Frame& f);
  Value* add_constant(AttrValue v, Type t, Frame& f, const jit::Node* src);
  Value* constant_value(const IValue& iv, const c10::TypePtr& type, Frame& f, const jit::Node* src);
  Value* tensor_constant(const at::Tensor& raw, Frame& f, const jit::Node* src,
                         const std::string& what);
  [[noreturn]] void unsupported(const jit::Node* n, const std::string& what, const Frame& f,
                                const std::string& fix) const;
  void lift_block(const jit::Block& b, Frame& f);
  void lift_into(Block* b, const jit::Block& jb, Frame& f, const jit::Node* owner);
  const Binding& binding_of(Frame& f, const jit::Value* v);
  void lift_isinstance(const jit::Node* n, Frame& f);
  void lift_generator(const jit::Node* n, Frame& f);
  void lift_raise(const jit::Node* n, Frame& f);
  bool lift_answered_builtin(const jit::Node* n, Frame& f);
  bool lift_einsum_sublist(const jit::Node* n, Frame& f);
  bool lift_percent_format(const jit::Node* n, Frame& f);
  bool lift_object_id(const jit::Node* n, Frame& f);
  std::optional<const void*> object_id(const jit::Value* v) const;
  bool lift_dequantize_any(const jit::Node* n, Frame& f);
  void lift_node(const jit::Node* n, Frame& f);
  std::vector<Value*> inputs_of(const jit::Node* n, Frame& f);
  void lift_get_attr(const jit::Node* n, Frame& f);
  void lift_attr_value(const jit::Node* n, Frame& f);
  void lift_unpack(const jit::Node* n, Frame& f);
  void lift_tuple_index(const jit::Node* n, Frame& f);
  void lift_inlined(const jit::Node* n, const std::shared_ptr<jit::Graph>& g, Frame& sub, Frame& f);

  // ---- lifter_objects.cpp ----
  void find_attr_writes();
  static bool warn_only_read(const jit::Node* get_attr);
  void lift_create_object(const jit::Node* n, Frame& f);
  void lift_set_attr(const jit::Node* n, Frame& f);
  bool lift_object_get_attr(const jit::Node* n, Frame& f);
  void lift_state_get(const jit::Node* n, Frame& f);
  std::map<const Value*, Value*> drop_unwritten_state();
  static c10::ClassTypePtr object_class(const c10::TypePtr& t);
  bool lift_object_state_get(const jit::Node* n, Frame& f);
  Node* state_node(const char* op, Value* in, const ModuleRef& owner, const std::string& slot,
                   const std::string& attr, Frame& f, const jit::Node* n);
  Binding read_object_state(const ModuleRef& owner, const std::string& slot,
                            const std::string& attr, const c10::TypePtr& type, const IValue& init,
                            Frame& f, const jit::Node* n);
  void write_object_state(const ModuleRef& owner, const std::string& slot, const std::string& attr,
                          const c10::TypePtr& type, const Binding& v, Frame& f, const jit::Node* n);
  bool drop_unused_slot_reads();
  void lift_object_call(const jit::Node* n, const std::shared_ptr<ObjectState>& obj, Frame& f);
  void lift_with(const jit::Node* n, Frame& f);
  bool lift_tuple_of_refs(const jit::Node* n, Frame& f);
  bool lift_unpack_refs(const jit::Node* n, Frame& f);
  static std::string type_key(const c10::TypePtr& t);
  Binding stored_attr(const IValue& v, const c10::TypePtr& type, Frame& f, const jit::Node* n);

  // ---- lifter_control.cpp ----
  void lift_if(const jit::Node* n, Frame& f);
  bool lift_asserted_object(const jit::Node* n, Value* cond, Frame& f);
  void lift_loop(const jit::Node* n, Frame& f);
  static const char* container_mutation_op(const jit::Node* n);
  void lift_container_mutation(const jit::Node* n, const char* op, Frame& f);
  void lift_popitem(const jit::Node* n, Value* dict, Frame& f);
  void lift_sort_as_sorted(const jit::Node* n, const std::vector<Value*>& ins, Frame& f);

  // ---- lifter_modules.cpp ----
  void lift_call(const jit::Node* n, Frame& f);
  void lift_call_function(const jit::Node* n, Frame& f);
  void lift_fork(const jit::Node* n, Frame& f);
  void lift_inlined(const jit::Node* n, const std::shared_ptr<jit::Graph>& g, size_t arg_offset,
                    Frame& f);
  bool lift_interpolate(const jit::Node* n, Frame& f);
  bool try_scripted_leaf(const jit::Node* call, const ModuleRef& callee, const std::string& type,
                         Frame& f);
  bool lift_scripted_encoder(const jit::Node* call, const ModuleRef& callee, Frame& f);
  bool try_leaf(const jit::Node* call, const ModuleRef& callee,
                const std::shared_ptr<jit::Graph>& method_graph, Frame& f);

  // ---- lifter_quantized.cpp ----
  bool try_quantized_leaf(const jit::Node* call, const ModuleRef& callee,
                          const std::shared_ptr<jit::Graph>& method_graph, Frame& f);
  bool lift_traced_qfunctional(const jit::Node* n, Frame& f);
  void set_module_weights(Node* node, const std::string& path) const;

  // ---- lifter_scripted.cpp ----
  static bool has_script_constructs(const jit::Block& b, const jit::Value* self);
  // One attribute read that preparation folded or looked at (Note [Sharing prepared graphs]):
  // its path from self and what it was (the value, or kAttrModule / kAttrKept / kAttrAbsent).
  struct AttrRead {
    std::vector<std::string> path;
    int what = 0;
    IValue value;
  };
  static constexpr int kAttrValue = 0, kAttrModule = 1, kAttrKept = 2, kAttrAbsent = 3;
  static AttrRead read_attr(const jit::Module& owner, std::vector<std::string> path);
  static bool same_attr_value(const IValue& a, const IValue& b);
  static bool reads_match(const std::vector<AttrRead>& reads, const jit::Module& self);
  void fold_attrs(jit::Graph& g, jit::Block* b,
                  std::unordered_map<const jit::Value*, jit::Module>& owners,
                  std::unordered_map<const jit::Value*, std::vector<std::string>>& paths,
                  std::vector<AttrRead>& reads) const;
  static void inline_functions(jit::Graph& g);
  static bool fold_jit_self_comparisons(jit::Block* b);
  static bool is_raise_guard(const jit::Node* n);
  static void drop_raise_guards(jit::Block* b, bool builtin_only = false);
  std::shared_ptr<jit::Graph> prepared(const std::shared_ptr<jit::Graph>& g,
                                       const jit::Module& self, bool leaf);

  // ---- lifter_inplace.cpp ----
  bool lift_inplace(const jit::Node* n, const c10::FunctionSchema& schema,
                    const std::vector<Value*>& ins, Frame& f);
  std::string exclusive_write(const jit::Node* n, const jit::Value* jv, Value* v, const Frame& f);
  static std::string write_into_state_problem(const Value* v);

  // ---- lifter_ops.cpp ----
  void lift_op(const jit::Node* n, Frame& f);
  static const char* python_builtin(const std::string& name, const std::vector<Value*>& ins);
  static bool is_dtype_comparison(const std::vector<Value*>& ins);
  static bool exact_through_torch_ops(const jit::Node* n, const c10::FunctionSchema& s);
  static bool holds_default(const Value* v, const c10::Argument& arg);
  static bool only_in_messages(const jit::Value* v);
  void require_exact_text(const jit::Node* n, Frame& f);
  static bool fits_python_call(const OpInfo& info, const c10::FunctionSchema& schema,
                               const std::vector<Value*>& ins);
  Value* fold_scalar(const std::string& op, const std::vector<Value*>& ins, const jit::Node* n,
                     Frame& f);
  bool fold_self_comparison(const jit::Node* n, const std::vector<Value*>& ins, Frame& f);
  bool normalize(const std::string& qual, std::vector<Value*>& ins, const jit::Node* n, Frame& f,
                 std::string& op);

  // ---- jit_cleanup.cpp ----
  bool fold_tracer_noise(const std::string& qual, const std::vector<Value*>& ins,
                         const jit::Node* n, Frame& f);
  void sweep_dead_prims();

  jit::Module root_;
  Diagnostics& diags_;
  std::vector<std::pair<std::string, std::string>>* source_values_;  // Model::source_values
  std::unique_ptr<Graph> graph_;
  // Values that are not constants and feed an argument of type ScalarType, Layout or
  // MemoryFormat (typed_int): Note [Forward defaults] in ir.h.
  std::unordered_set<const Value*> int_roles_;
  std::set<std::string> state_dict_names_;
  std::map<std::tuple<Value*, int, Block*>, Value*> typed_consts_;
  Block* cur_ = nullptr;  // where lifted nodes go (a prim.If/prim.Loop block while lifting one)
  // Note [One buffer per constant tensor]: TensorImpl -> (the tensor, kept alive; buffer name)
  std::map<const void*, std::pair<at::Tensor, std::string>> constant_buffers_;
  std::set<std::string> inlined_notes_;
  std::set<std::string> resolved_notes_;
  bool message_args_dropped_ = false;       // lift_node, aten::format of a raise
  int generators_ = 0, initial_seeds_ = 0;  // Note [Generators while lifting]
  // Note [Builtins the lifter answers]: what the output of each prim::id lifted last stands for
  // (the object, module or nullptr for None), and the type an Any result of dequantize holds.
  std::unordered_map<const jit::Value*, const void*> object_ids_;
  std::unordered_map<const jit::Value*, c10::TypePtr> known_types_;
  // Prepared graphs (Note [Sharing prepared graphs]): per method graph and leaf flag, each with
  // the attribute reads it depends on; per instance: graphs whose preparation failed (the plain
  // graph) and those beyond the bound on variants per graph.
  struct PreparedGraph {
    std::vector<AttrRead> reads;
    std::shared_ptr<jit::Graph> graph;
  };
  std::map<std::pair<const jit::Graph*, bool>, std::vector<PreparedGraph>> prepared_;
  std::map<std::tuple<const jit::Graph*, const void*, bool>, std::shared_ptr<jit::Graph>>
      per_instance_;
  int depth_ = 0;
  // Note [Module attributes written in forward]: the (module type, attribute) pairs some method
  // writes with prim::SetAttr (never folded into constants), those of them whose every read only
  // decides whether to warn, and per module instance, the attributes read and written so far.
  std::set<std::pair<std::string, std::string>> written_attrs_;
  std::set<std::pair<std::string, std::string>> warn_only_attrs_;
  std::set<std::pair<const void*, std::string>> module_reads_;
  std::map<std::pair<const void*, std::string>, Binding> module_writes_;
  // Module attributes kept as state (Note [Module attributes written in forward]): the
  // prim.StateGet nodes of each attribute read so far, and the attributes forward writes as state.
  std::map<std::pair<const void*, std::string>, std::vector<std::pair<Node*, std::string>>>
      state_reads_;  // (read, its name)
  std::set<std::pair<const void*, std::string>> state_writes_;
  std::set<std::pair<const void*, std::string>> module_reads_objects_;  // read as an object
  // Note [Objects as module state]: per slot, the attribute (and field path) it holds; the
  // "module.slot" paths of the slots.
  std::map<std::pair<const void*, std::string>, std::string> slot_attrs_;
  std::set<std::string> slot_paths_;
};

}  // namespace tt::ts
