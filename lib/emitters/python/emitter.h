// The Python emitter's class (private to lib/emitters/python/ and lib/emitters/python.cpp).
//
// PyEmitter writes one Graph as a module; its methods are split by concern:
//   python.cpp (lib/emitters/)  the entry emit_python, run() (the file's layout), checks, the class name
//   module_tree.cpp             the module tree of __init__: entries, registrations, nn constructors
//                               (ctor_table), qconfigs, in-place safety (Note [In-place modules])
//   forward.cpp                 forward's statements (emit_node, assign, the return) and naming
//   inline.cpp                  which values are written inside their reader (Note [Expressions
//                               written inline])
//   literals.cpp                constants: literal, tensor_literal, expr
//   calls.cpp                   calls: module calls, function/method/aten calls, ATen schemas
//                               (Note [Dropping default arguments]), infix, index/slice/index_put
//   control_flow.cpp            if/loop statements (Note [Control flow in Python])
//   main_block.cpp              the __main__ block
//   classes.cpp                 the hierarchical layout: one class per module type, containers
//                               (Note [Classes of the generated module]): regions, outlining
//   class_forward.cpp           a class's forward, its numbers (markers), optional children
//   class_init.cpp              a class's __init__, its constructor parameters, rendering
//   named_tuples.cpp            NamedTuple classes (Note [NamedTuples in Python])
// The lexical pieces (quoting, numbers, names) are the shared toolkit, emitters/pysrc.h.
#pragma once

#include "emitters/pysrc.h"
#include "emitters/python.h"
#include "exec/alias.h"
#include "ir/ir.h"
#include "ir/op_table.h"
#include "ir/py_helpers.h"

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>

#include <deque>
#include <functional>
#include <ostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tt::pyemit {

using namespace tt::pysrc;

// ---------------------------------------------------------------------------------------------
// helpers shared by the emitter's files

// "layer1.0.conv1" -> getattr(self.layer1, "0").conv1; "" -> self.
inline std::string self_path(const std::string& dotted) { return dotted_attr("self", dotted); }

// Module paths: strictly below `base` ("" is above every other path); the parent ("" for a
// top-level name); `path` without `base`'s prefix.
bool under(const std::string& path, const std::string& base);
bool under_or_at(const std::string& path, const std::string& base);
std::string parent_path(const std::string& path);
std::string relative(const std::string& path, const std::string& base);
// The top-block node a node lies in (itself for top-block nodes and the top block's sentinels).
const Node* top_of(const Node* n, const Block* top);
// f on n, on every node nested in its blocks (pre-order), and on those blocks' return nodes.
void for_each_deep(const Node* n, const std::function<void(const Node*)>& f);

// "0", "12" (no leading zero): a positional child of a container.
bool index_name(const std::string& s);
// An attribute name that can be written `self.name`: an identifier nn.Module does not use itself.
bool plain_attr(const std::string& s);

// Names the generated forward must not rebind: keywords, the modules it uses, and builtins
// the generated code calls.
bool python_reserved(const std::string& s);
inline bool good_name(const std::string& s) { return is_identifier(s) && !python_reserved(s); }
// An IR name without its graph-wide suffix ("conv1_7" -> "conv1").
std::string local_base(const std::string& ir_name);
// Whether the model's source named the value (TorchScript numbers the others: "%123"); the name
// may still need changing for Python ("lambda" -> lambda_).
inline bool has_source_name(const Value* v) { return is_identifier(local_base(v->name())); }

// Import aliases for op-name prefixes of quantization modules.
const std::map<std::string, std::string>& import_aliases();
// Module classes called through a method ("FloatFunctional.add" -> self.ff.add(a, b)).
const std::map<std::string, std::string>& method_module_classes();

DType tensor_dtype(const at::Tensor& t);
bool is_float_dtype(DType d);
bool is_complex_dtype(DType d);
bool is_quantized_dtype(DType d);

// "1, 2, 3" (the arguments of torch.empty / torch.zeros); "()" for a scalar.
std::string shape_args(at::IntArrayRef sizes);

// torch.add/sub/mul/div written as an infix operator: the same call (no alpha, no rounding mode).
bool arithmetic_is_infix(const Node& n);

[[noreturn]] void unsupported(const Node& n, const std::string& what, const std::string& fix);

// The module tree declared in __init__ (Note [Shape of the generated module]).
struct ModEntry {
  std::string name;  // attribute name in the parent ("" for the root)
  std::string path;  // dotted path from the root
  ModEntry* parent = nullptr;
  const Node* op = nullptr;  // module op that constructs it; nullptr: plain nn.Module()
  std::vector<std::string> params, buffers;  // weight names registered directly here
  std::vector<ModEntry*> children;
  std::map<std::string, ModEntry*> by_name;
};

// An expression of __init__ (Note [Classes of the generated module]): a leaf value, or a call
// with arguments. Leaves are where instances of one generated class may differ: they become the
// class's constructor parameters.
struct CExpr {
  enum class Wrap : int8_t { None, List, Dict, OrderedDict };
  // Its place in the parent call: keyword, whether written positionally, the default it may
  // be left out for.
  std::string name;
  bool positional = false;
  std::optional<std::string> def;
  std::string text;     // a leaf's Python text
  bool module = false;  // the leaf is a whole module (an activation: nn.ReLU(inplace=True))
  std::string callee;   // a call: "nn.Conv2d"
  int cls = -1;         // a call of generated class #cls (callee empty)
  // nn.ModuleList([...]) / nn.ModuleDict({...}) / nn.Sequential(OrderedDict([...])): the
  // arguments go into a list, dict or ordered dict (keys: their names).
  Wrap wrap = Wrap::None;
  std::vector<CExpr> args;
  bool is_leaf() const { return callee.empty() && cls < 0; }
};

// The structure of an __init__ expression with its leaves left out (comparing classes).
void skeleton(const CExpr& e, std::string& out);

// One statement of a class's __init__.
struct InitStmt {
  enum class Kind : int8_t { Module, Param, Buffer, Super, Raw } kind = Kind::Module;
  std::string target;  // attribute name (Module/Param/Buffer)
  CExpr value;         // Raw: value.text is the whole statement
};
// A statement without its leaf values: kind, target and skeleton (comparing classes).
std::string stmt_key(const InitStmt& s);

// A composite module instance: the root, a custom module or a container (a ModEntry without a
// module op). Built by classes.cpp.
struct Region;
struct Item {
  const Node* node = nullptr;  // a node of the top block, or
  Region* call = nullptr;      // the call of an outlined child
};
struct Region {
  ModEntry* entry = nullptr;
  std::string type;  // original class (ModuleInfo::type), "" unknown
  enum class Render : int8_t {
    Class,
    SeqClass,
    Sequential,
    SequentialDict,
    ModuleList,
    ModuleDict
  };
  Render render = Render::Class;
  bool outlined = false;    // has its own forward, called from its parent
  bool chain = false;       // outlined and its forward is its children in order (nn.Sequential's)
  bool split = false;       // has nodes nested in blocks of nodes outside it: cannot be outlined
  bool skip = false;        // weightless and inline: nothing to build
  std::vector<Item> items;  // own nodes and outlined children's calls, in the order written
  std::vector<const Node*> covered;  // top-block nodes it covers (own and its children's)
  std::vector<const Value*> inputs, outputs;
  Region* parent = nullptr;
  std::vector<Region*> kids;  // composite children, in module order
  // class sharing
  std::vector<InitStmt> init;
  std::string canon;  // forward text with canonical names ("" when not outlined)
  int cls = -1;
  std::vector<std::string> leaves;  // leaf texts of init, in order
  std::vector<std::string> args;    // its class's constructor arguments (texts)
  // The numbers its forward writes (each use of a constant of the top block, in the order
  // written) and a name for each from where it is used: instances that differ only in them
  // share a class.
  std::vector<std::string> const_vals, const_hints;
  // Its class's optional child (Note [Classes of the generated module]): "" when none.
  std::string optional_child;
};

// A generated class (Note [Classes of the generated module]).
struct ClassInfo {
  std::string name;
  std::vector<Region*> instances;
  struct Param {
    std::string name;
    std::optional<std::string> def;
    bool module = false;  // a module: passed by keyword
  };
  std::vector<Param> params;
  std::vector<int> leaf_param;  // leaf index -> parameter (-1: written as its literal)
  // Forward constant index -> the attribute that holds it ("" : written as its literal); the
  // attribute is set from parameter const_param[i] in __init__.
  std::vector<std::string> const_attr;
  std::vector<int> const_param;
  // A child some instances have and others not (resnet's downsample): a parameter that defaults
  // to None, and `if self.downsample is not None:` around its call.
  std::string optional_child;
  int optional_param = -1;
  bool merged = false;  // its instances went to another class
};

// What the candidate schemas say about argument i; fields are set only when all agree.
struct ArgFacts {
  bool known = false;  // at least one candidate schema covers the argument
  bool kwarg_only = false;
  std::string name;
  std::optional<int> fixed_size;  // int[N]
};

// ---------------------------------------------------------------------------------------------

class PyEmitter {
 public:
  PyEmitter(const Graph& g, const PythonEmitOptions& opts, Diagnostics& diags)
      : g_(g), opts_(opts), diags_(diags) {}

  std::string run();

 private:
  const std::set<std::string>& builtins_called();
  // python.cpp: checks and the class name
  void check_structure();
  std::string class_name() const;
  void write_header(std::ostream& os) const;
  void write_main(std::ostream& os, const std::vector<std::string>& main_block) const;
  void collect_helpers();
  // Throws a usage error when the model's class name is also a name NAME.py binds at the top.
  void check_class_name() const;
  void write_helpers(std::ostream& os) const;
  // NamedTuple classes (named_tuples.cpp, Note [NamedTuples in Python]): one per qualified name
  // the graph's types hold, its Python class name, a type's annotation (the typing names it
  // uses added to `typing`), the class definitions and their typing import.
  void collect_named_tuples();
  std::string named_tuple_class(const Type& t) const;
  std::string annotation(const Type& t, std::set<std::string>& typing) const;
  void write_named_tuples(std::ostream& os) const;
  void import_named_tuple_types();

  // classes.cpp: the hierarchical layout (Note [Classes of the generated module])
  using ParamOf = std::function<const std::string*(const CExpr&)>;
  bool try_hierarchy(std::vector<std::string>& lines);
  std::vector<std::string> emit_classes();
  Region* region_at(const std::string& path) const;
  Region* owner_of(const Node* n) const;
  void build_regions();
  void classify(Region& r);
  std::vector<ModEntry*> ordered_children(const Region& r) const;
  void outline_all();
  size_t first_pos(const Region& r) const;
  std::vector<Region*> post_order();
  bool order_items(Region& r);
  bool can_outline(const Region& r, const std::vector<const Node*>& nodes) const;
  void interface(Region& r);
  bool is_chain(const Region& r) const;
  std::string child_access(const ModEntry* parent, const std::string& name, const std::string& base,
                           bool weight) const;
  std::string module_ref(const std::string& path) const;
  std::string weight_ref(const std::string& name) const;
  void reset_forward_state();
  std::vector<std::string> emit_forward(Region& r, bool canonical,
                                        std::vector<std::string>& params);
  void emit_region_call(const Region& k, std::vector<std::string>& body);
  void bind_constants(Region& r);
  static std::string strip_markers(const std::string& s, std::vector<std::string>* hints = nullptr,
                                   std::vector<std::string>* vals = nullptr);
  std::string fill_markers(const std::string& line, size_t& k) const;
  std::string const_hint(const Value* v, const Region& r);
  void make_const_params(ClassInfo& c);
  void merge_optional_children(size_t first_new);
  bool emit_optional_call(const std::string& path, const std::vector<const Value*>& ins,
                          const std::vector<const Value*>& outs, std::vector<std::string>& body);
  std::string class_base_name(const Region& r) const;
  // class_init.cpp: __init__ of the classes, their parameters, rendering
  CExpr entry_expr(const ModEntry& c);
  std::vector<CExpr> child_exprs(const Region& k);
  void build_init(Region& r);
  void add_qconfigs(Region& r, const ModEntry& e);
  static CExpr empty_tensor_expr(const at::Tensor& t, DType d, const std::string& attr);
  static std::vector<const CExpr*> init_leaves(const Region& r);
  void assign_class(Region& r);
  void make_params(ClassInfo& c);
  std::string render(const CExpr& e, const ParamOf& param_of);
  std::string callee_text(const CExpr& e) const;
  std::vector<std::string> render_args(const CExpr& e, const ParamOf& param_of);
  std::vector<std::string> render_lines(const std::string& prefix, const CExpr& e,
                                        const std::string& suffix, const ParamOf& param_of);
  std::vector<std::string> render_init(const Region& r, const ClassInfo* c);

  // module_tree.cpp: __init__
  ModEntry* entry(const std::string& path, const std::string& after = "");
  void build_module_tree();
  static bool same_attrs(const Node& a, const Node& b);
  std::vector<std::string> emit_init();
  void emit_entry(const ModEntry& e, std::vector<std::string>& lines);
  DType weight_dtype(const std::string& name, const at::Tensor& t) const;
  static std::string empty_tensor(const at::Tensor& t, DType d);
  std::string module_qconfig(const Node& n);
  std::string module_ctor(const Node& n);
  CExpr module_ctor_expr(const Node& n);
  CExpr module_ctor_expr_of(const Node& n, const std::string& op, const Attrs& attrs);
  std::optional<DType> module_float_dtype(const Node& n) const;  // Note [Float dtype of nn modules]
  static bool at_default(const CExpr& a);
  std::string render_literal(const CExpr& e);
  bool inplace_is_safe(const std::string& path) const;
  bool fresh_value(const Value* v) const;
  std::string module_attr_text(const std::string& name, const AttrValue& v);
  void use_alias(const std::string& alias);

  // forward.cpp: names
  void reserve_names();
  std::string unique(const std::string& hint) { return names_.unique(hint); }
  std::string bind_name(Value* v, const std::string& hint);
  static std::string op_hint(const std::string& op);
  static std::string module_hint(const std::string& path);
  std::string value_hint(const Value* v) const;

  // inline.cpp: values written inside their reader (Note [Expressions written inline])
  void plan_inline(const std::vector<Item>& seq, const Region* r, bool top);
  void plan_inline(const Block& b);

  // forward.cpp: statements
  // `lhs = rhs` for n's outputs (unused ones as `_`); with first_only, rhs gives n's first result
  // alone (Note [Python call forms] in ir/op_table.h) and only that output is bound.
  void assign(const Node& n, const Expr& rhs, const std::string& hint, bool pure,
              std::vector<std::string>& body, bool first_only = false);
  void emit_node(const Node& n, std::vector<std::string>& body);
  // The __init__ expression of a module attribute's initial value (Note [Module state in Python]).
  std::string state_init(const Node& n, const Value* v);
  // Whether some node may change the list or dict `v` in place (Note [Container mutation] in
  // exec/alias.h): its literal is then written once, under a name, never repeated.
  bool may_be_mutated(const Value* v);
  std::string emit_return();

  // literals.cpp: expressions
  const Expr& expr(const Value* v) const;
  Expr literal(const AttrValue& a, const Type& t);
  std::string tensor_literal(const at::Tensor& t);

  // control_flow.cpp
  std::vector<std::string> emit_block(const Block& b);
  static void append_indented(const std::vector<std::string>& lines, std::vector<std::string>& out);
  bool returned_once(const Block& b, const Value* v) const;
  static Value* condition_source(Value* v);
  static bool is_condition_only(const Value* v);
  void emit_if(const Node& n, std::vector<std::string>& body);
  static bool same_stem(const std::string& a, const std::string& b);
  static std::optional<bool> const_true_false(const Value* v);
  bool can_take_loop_var(const Block& b, const Value* param, const Value* ret) const;
  void emit_loop(const Node& n, std::vector<std::string>& body);
  const Node* range_loop_length(const Node& loop);
  bool range_length_elided(const Node& len);
  std::string range_args(const Node& len);

  // calls.cpp
  void emit_module_call(const Node& n, std::vector<std::string>& body);
  std::vector<const c10::FunctionSchema*> candidate_schemas(const Node& n, const OpInfo* info);
  static bool not_in_aten_order(const std::string& op);
  static std::string python_default(const std::string& op, const std::string& keyword);
  static bool constant_fits(const AttrValue& c, const c10::Argument& arg);
  static ArgFacts arg_facts(const std::vector<const c10::FunctionSchema*>& schemas, size_t i);
  static bool is_default_in_all(const std::vector<const c10::FunctionSchema*>& schemas, size_t i,
                                const AttrValue* c);
  struct CallArgs {
    std::vector<Expr> positional;
    std::vector<std::pair<std::string, Expr>> keyword;
  };
  CallArgs call_args(const Node& n, const OpInfo* info, size_t first);
  static std::string format_args(const CallArgs& a, bool splat_single_list = false);
  std::string function_callee(const std::string& op);
  std::string torch_ops_callee(const std::string& op);
  void emit_call(const Node& n, std::vector<std::string>& body);
  std::string float_data_cast(const Node& n, CallArgs& a);
  void emit_call_form(const Node& n, const PyCallForm& form, const std::string& hint,
                      std::vector<std::string>& body);
  Expr try_infix(const Node& n);
  Expr list_operand(const Value* v, const Value* other);
  std::string try_index_or_fill(const Node& n);
  std::string index_subscripts(const Value& indices);
  bool try_index_put(const Node& n, const std::string& hint, std::vector<std::string>& body);
  bool try_container_statement(const Node& n, std::vector<std::string>& body);
  Expr try_slice(const Node& n);

  // main_block.cpp: __main__
  std::vector<std::string> emit_main(const std::vector<std::string>& forward_params);
  std::vector<std::string> with_defaults(std::vector<std::string> params);
  std::vector<InputSpec> example_specs() const;
  static std::string example_tensor(const InputSpec& s);

  // Every node of the graph, nested ones too (Graph::all_nodes), walked once: the emitter never
  // changes the graph, and each walk of a deep model's was ~10 ms of a dozen (issue #22).
  const std::vector<Node*>& graph_nodes() const {
    if (!graph_nodes_) graph_nodes_ = g_.all_nodes();
    return *graph_nodes_;
  }

  const Graph& g_;
  const PythonEmitOptions& opts_;
  Diagnostics& diags_;
  mutable std::optional<std::vector<Node*>> graph_nodes_;
  bool prepared_ = false;  // the graph has Quant/DeQuantStubs (--quant-prep)

  std::deque<ModEntry> storage_;
  std::map<std::string, ModEntry*> entries_;
  std::map<std::string, const Node*> module_nodes_;
  std::map<std::string, std::vector<const Node*>> module_calls_;

  NameAllocator names_{python_reserved};                  // forward's locals
  std::optional<std::set<std::string>> builtins_called_;  // builtins_called()
  std::unordered_map<const Value*, Expr> expr_;
  // Values written inside the expression that reads them (Note [Expressions written inline]).
  std::unordered_set<const Value*> inline_;
  std::optional<MutatedMemory> mutated_;  // may_be_mutated
  // Values that take the variable of the if/loop result they become (Note [Control flow in Python]).
  std::unordered_map<const Value*, std::string> preferred_;
  // Variables of loop-carried values: rebound at the end of each iteration.
  std::set<std::string> loop_vars_;
  // range.element nodes written as their range loop's variable (Note [Range loops in Python]).
  std::unordered_set<const Node*> range_elements_;
  std::set<std::string> imports_;
  // Definitions NAME.py writes before the model's classes, those used first (Note [Python helper
  // definitions] in ir/py_helpers.h).
  std::vector<std::string> helpers_;
  // NamedTuple types in definition order, and the class each qualified name is written as.
  std::vector<Type> named_tuples_;
  std::vector<Type> enums_;  // Note [Enums in Python]; their class names in named_tuple_class_
  std::map<std::string, std::string> named_tuple_class_;
  // Namespaces of the ops written torch.ops.<ns>.<op> (Note [Op libraries] in ir/model.h).
  std::set<std::string> op_namespaces_;
  bool use_functional_ = false;

  // The hierarchical layout (classes.cpp).
  std::deque<Region> regions_;  // pre-order: the root first
  std::map<std::string, Region*> regions_by_path_;
  std::unordered_map<const Node*, size_t> pos_;  // top-block order
  // Note [Reads of a top-level node]
  // What a top-block node t and the nodes nested in it read from outside t: each value once, in
  // the order for_each_deep first reads it, with the top-block node that makes it (top_of).
  // Ordering a region's items, its interface, its constants and whether it can be outlined all
  // ask this of the same nodes, once per level of the module hierarchy: walking t's blocks each
  // time was most of a deep scripted model's Python time (issue #22). The graph does not change
  // while the emitter runs, so the answer is kept.
  struct Read {
    const Value* value;
    const Node* top;  // top_of(value->node())
  };
  const std::vector<Read>& reads(const Node* t) const;
  mutable std::unordered_map<const Node*, std::vector<Read>> reads_;
  std::vector<ClassInfo> classes_;
  std::map<std::string, int> class_by_key_;
  std::vector<std::string> class_names_;
  std::vector<std::string> root_params_;
  std::string cur_path_;                  // the module whose forward or __init__ is being written
  bool canonical_ = false;                // forward names are v, v_1, ... (to compare structures)
  size_t leaf_cursor_ = 0;                // next init leaf while rendering
  const ClassInfo* cur_class_ = nullptr;  // the class whose forward is written (constants)
  std::string elide_child_;  // a child whose call is left out (its input goes on): comparing
  int child_calls_ = 0;      // how many calls of that child were met
  int elided_ = 0;           // how many of them were left out
  // Module state (Note [Module state in Python]): the attributes given an initial value so far
  // and the __init__ lines that do it.
  std::set<std::string> state_inits_;
  std::vector<std::string> state_init_lines_;
};

}  // namespace tt::pyemit
