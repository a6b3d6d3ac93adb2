// tinytrace IR: Graph / Block / Node / Value.
//
// Note [IR ownership and invariants]
// - A Graph owns one top-level Block. A Block owns its Nodes (in topological order) and two
//   sentinel nodes: the param node (whose outputs are the block's inputs) and the return node
//   (whose inputs are the block's outputs). A Node owns its output Values and its nested Blocks.
// - Every Value knows its producer (node + output index) and its uses (node + input index).
//   Uses by the return node are uses like any other, so "value has no uses" means dead.
// - Only the methods below change inputs, outputs, uses or order; they keep use lists
//   consistent. Passes never touch the vectors directly.
// - Value names are unique within a Graph (the SSA name printed in .tir without the '%').
//
// Op names are the PyTorch call the Python emitter writes ("nn.Conv2d", "F.relu", "torch.cat",
// "Tensor.view"); an op tinytrace does not know keeps its ATen name ("aten::foo.overload").
// Inputs of non-module ops are in ATen schema order. See op_table.h.
#pragma once

#include "support/diag.h"

#include <ATen/core/Tensor.h>

#include <atomic>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace tt {

// ---------------------------------------------------------------------------------------------
// dtypes and types

enum class DType : int8_t {
  Unknown,
  F32,
  F64,
  F16,
  BF16,
  I64,
  I32,
  I16,
  I8,
  U8,
  Bool,
  C64,
  C128,
  QI8,
  QU8,
  QI32,
};

// Short text form used in .tir ("f32", "i64", "bool", ...); "?" for Unknown.
const char* dtype_name(DType d);
std::optional<DType> dtype_from_name(const std::string& s);
// Python spelling ("torch.float32").
const char* dtype_python(DType d);
// Conversions to/from c10::ScalarType codes (as stored in TorchScript constants).
DType dtype_from_scalar_type(int64_t code);
int64_t dtype_to_scalar_type(DType d);  // -1 for Unknown

struct Type {
  enum class Kind : int8_t {
    Any,     // unknown / anything
    Tensor,  // dtype + optional shape
    Int,
    Float,
    Bool,
    Str,
    None,
    Device,
    ScalarType,    // a dtype used as a value (torch.float32)
    Layout,        // torch.strided ...
    MemoryFormat,  // torch.contiguous_format ...
    List,          // elems[0] is the element type
    Tuple,         // elems are the element types
    Optional,      // elems[0] is the contained type
    Dict,          // elems[0] the key type (str, int, ...), elems[1] the value type
    Complex,       // a Python complex number (Note [Complex scalars])
    Enum,          // a member of a Python Enum class (Note [Enum types])
    Generator,     // a torch.Generator object (Note [Generator values])
  };

  Kind kind = Kind::Any;
  DType dtype = DType::Unknown;  // Tensor only
  std::optional<std::vector<int64_t>>
      shape;                // Tensor only; nullopt = unknown rank; -1 = unknown dim
  std::vector<Type> elems;  // List / Tuple / Optional / Dict
  // Note [NamedTuple types]
  // A Tuple may be a NamedTuple (torchvision's GoogLeNetOutputs, a typing.NamedTuple of user
  // code): `name` is its qualified name as TorchScript has it ("__torch__.torchvision.models.
  // googlenet.GoogLeNetOutputs") and `fields` its field names, one per element; both are empty
  // for a plain tuple. Only the type says so: constructing one is prim.TupleConstruct, reading a
  // field prim.TupleIndex with the field's position, as in TorchScript's IR. The .tir form is
  // NamedTuple["qualified.Name", field: T, ...]; NAME.py defines a `class Name(NamedTuple)` per
  // name and constructs it where the model does (emitters/python/named_tuples.cpp).
  std::string name;
  std::vector<std::string> fields;
  // Note [Enum types]
  // A value of a TorchScript Enum class (`class Mode(Enum): SCALE = 1`) has kind Enum: `name` is
  // the class's qualified name ("__torch__.Mode"), elems[0] the type of its members' values
  // (int, float or str: all TorchScript allows) and `fields` one "NAME=VALUE" per member in the
  // class's order, VALUE the member's value as .tir text (1, 0.5, "relu"; enum_members() reads
  // them back). At run time (interpreter, constants) a member is its value: a class's members
  // have distinct values, and the type says the class. Only three ops look at an enum:
  // prim.EnumValue (`m.value`: the value itself), prim.EnumName (`m.name`, looked up in its
  // names/values attributes) and ==/!= (operator.eq/ne on the values; the lifter folds a
  // comparison of two classes to its constant). A constant of an enum type is its value; NAME.py
  // defines the class and spells the constant Mode.SCALE (emitters/python/named_tuples.cpp). The
  // .tir form is Enum["__torch__.Mode", SCALE=1, SHIFT=2].
  // Note [Generator values]
  // A torch.Generator made in a forward (`g = torch.Generator(); g.manual_seed(7)`) is a value of
  // kind Generator (.tir `Generator`): a mutable object, not data. Making one (aten::Generator),
  // seeding it (manual_seed.generator, seed) and every random op drawing from it (`generator=g`)
  // are ordered side effects on it: never CSE'd, folded, moved or dropped (passes/pass_util.cpp).
  // At run time the interpreter holds a real at::Generator, so a seeded model draws what
  // TorchScript draws bit for bit.

  static Type any() { return Type{}; }
  static Type tensor(DType d = DType::Unknown) {
    Type t;
    t.kind = Kind::Tensor;
    t.dtype = d;
    return t;
  }
  static Type tensor(DType d, std::vector<int64_t> shape) {
    Type t = tensor(d);
    t.shape = std::move(shape);
    return t;
  }
  static Type of(Kind k) {
    Type t;
    t.kind = k;
    return t;
  }
  static Type list(Type elem) {
    Type t = of(Kind::List);
    t.elems.push_back(std::move(elem));
    return t;
  }
  static Type tuple(std::vector<Type> elems) {
    Type t = of(Kind::Tuple);
    t.elems = std::move(elems);
    return t;
  }
  static Type named_tuple(std::string name, std::vector<std::string> fields,
                          std::vector<Type> elems) {
    Type t = tuple(std::move(elems));
    t.name = std::move(name);
    t.fields = std::move(fields);
    return t;
  }
  static Type dict(Type key, Type value) {
    Type t = of(Kind::Dict);
    t.elems = {std::move(key), std::move(value)};
    return t;
  }
  static Type optional(Type elem) {
    Type t = of(Kind::Optional);
    t.elems.push_back(std::move(elem));
    return t;
  }

  static Type enum_type(std::string name, Type value, std::vector<std::string> members) {
    Type t = of(Kind::Enum);
    t.name = std::move(name);
    t.elems.push_back(std::move(value));
    t.fields = std::move(members);
    return t;
  }

  bool is_tensor() const { return kind == Kind::Tensor; }
  bool is_enum() const { return kind == Kind::Enum; }
  bool is_named_tuple() const { return kind == Kind::Tuple && !name.empty(); }
  bool has_rank() const { return shape.has_value(); }
  bool is_complete() const;  // tensor with known dtype and all dims known
  std::string str() const;   // .tir text: "f32[1,?,3]", "Tensor", "int", "List[int]", ...
  bool operator==(const Type& o) const {
    return kind == o.kind && dtype == o.dtype && shape == o.shape && elems == o.elems &&
           name == o.name && fields == o.fields;
  }
  bool operator!=(const Type& o) const { return !(*this == o); }
};

// The type an Optional holds; any other type is itself.
inline const Type& contained_type(const Type& t) {
  return t.kind == Type::Kind::Optional && !t.elems.empty() ? t.elems[0] : t;
}

// ---------------------------------------------------------------------------------------------
// attributes

struct NoneAttr {
  bool operator==(const NoneAttr&) const { return true; }
};
struct DeviceAttr {
  std::string name;  // "cpu"
  bool operator==(const DeviceAttr& o) const { return name == o.name; }
};

// Attribute / constant values. Integers stay int64; lists are homogeneous.
// Printed in .tir as: none, true/false, 3, 0.5 (always with '.' or exponent), "str", [1,2],
// [0.5,1.0], ["a","b"], f32 (dtype), device("cpu"), tensor<f32[2]>[1.0,2.0] / tensor<...>@weight,
// complex(1.0, -0.0).
//
// Note [Complex scalars]
// TorchScript has a complex scalar type (complex(a, b), cmath functions, dicts keyed by complex);
// the IR's is Type::Kind::Complex ("complex" in .tir, the report and Python annotations) and a
// constant holds a std::complex<double>, printed complex(re, im) with both parts as floats are
// (inf, nan, -0.0 kept), in .tir and in the generated Python alike; two constants are the same
// only when the signs of their zero parts are. The interpreter holds it as c10::complex<double>,
// as TorchScript does. Python's complex arithmetic and cmath are not TorchScript's: division,
// pow, log, tan, the inverse and hyperbolic functions round otherwise (sqrt too, at a -0.0 real
// part), exp, sin and cos raise on overflow; mixed int/float/complex
// operands lose a -0.0 part or turn an inf into a nan where TorchScript does not; Python raises
// on division by zero; complex(a, b) of ints beyond 2**53 differs. So only what computes the same
// bits in both has a Python spelling: complex(a, b) of floats and bools, z + w, z - w, z * w, -z,
// == and != (also against a float), abs(z), cmath.phase / isnan / isinf / isfinite, and the dict
// operations; every other complex op is written torch.ops.aten.<op>.<overload>(...), which runs
// TorchScript's own kernel (Note [TorchScript builtins without a row] in
// lib/loaders/torchscript/lifter_ops.cpp). TorchScript itself pools a float constant -0.0 with
// 0.0 and saves a complex constant's -0.0 part as +0.0 (`-1.+0.j`): the archive's values are
// what the lifter reads.
using AttrValue = std::variant<NoneAttr, bool, int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, DType, DeviceAttr,
                               at::Tensor, std::complex<double>>;

std::string attr_str(const AttrValue& v);  // .tir text of a value (tensors printed inline)
// Whether `v` can be the default of a graph input of type `t` (Note [Forward defaults]): None of
// an Optional (or None), and a value of the (contained) type: bool, int (also a dtype, layout or
// memory format, as TorchScript holds those), float, complex, str, device, a list of ints,
// floats or strs, or a tuple of those of its length. Tensors and objects have none.
bool default_fits(const Type& t, const AttrValue& v);
bool attr_equal(const AttrValue& a, const AttrValue& b);

// The members of an Enum type (Note [Enum types]), in the class's order: name and value.
struct EnumMember {
  std::string name;
  AttrValue value;  // int64_t, double or std::string
};
std::vector<EnumMember> enum_members(const Type& t);
// The "NAME=VALUE" text of a member in Type::fields.
std::string enum_member_field(const std::string& name, const AttrValue& value);

// Ordered name -> value list (order is printed order; names unique).
class Attrs {
 public:
  bool has(const std::string& name) const;
  const AttrValue* find(const std::string& name) const;
  const AttrValue& at(const std::string& name) const;  // asserts present
  void set(const std::string& name, AttrValue v);      // replaces in place or appends
  bool erase(const std::string& name);
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

  // Typed getters; return the default when absent or of another type.
  int64_t get_int(const std::string& name, int64_t def = 0) const;
  double get_float(const std::string& name, double def = 0.0) const;  // accepts int too
  bool get_bool(const std::string& name, bool def = false) const;
  std::string get_str(const std::string& name, const std::string& def = "") const;
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> def = {}) const;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

// ---------------------------------------------------------------------------------------------
// weights

// A parameter or buffer of the model, by its state_dict name ("layer1.0.conv1.weight").
struct Weight {
  at::Tensor tensor;
  bool is_param = true;  // false: buffer (running_mean, num_batches_tracked, tensor constants)
};

// Note [Weight-store edits]
// Passes that rename, drop or add weights collect the edits and apply them in one pass over the
// store (WeightStore::apply), so the state_dict keeps the model's order: a renamed entry stays
// where it was, a new entry goes right after the one it belongs to (a folded bias after its
// weight). Writing into the result keeps WeightStore::set's meaning: a name written twice keeps
// its first place and its last value.
struct WeightEdits {
  std::unordered_set<std::string> erase;                // entries that leave the store
  std::unordered_map<std::string, std::string> rename;  // old name -> new, in place
  // New entries right after an existing one (its old name), in the order given.
  std::unordered_map<std::string, std::vector<std::pair<std::string, Weight>>> insert_after;
  bool empty() const { return erase.empty() && rename.empty() && insert_after.empty(); }
};

// Insertion-ordered name -> Weight map; order is the state_dict order of the original model.
// Erasing leaves a hole in the order that the next names() closes (Note [Scale in graph size]):
// erasing k of n entries costs O(k) plus one O(n) compaction, not O(k n).
//
// Note [Weight-store slots]
// Beside each name of the order, slots_ holds a pointer to its entry in index_ (entries of an
// unordered_map do not move on rehash), null for a hole. Compacting the order and applying edits
// then walk the order through these pointers and hash a name only where an edit names it: on the
// 730k weights of scripts/bench_passes.sh's 1M-node graph, hashing every name of the store (two
// or three times per apply, once per compaction) was most of fold-batchnorm's time (issue #22).
// ir_op_counts().weight_lookups counts the hashed lookups, so a unit test bounds them.
class WeightStore {
 public:
  WeightStore() = default;
  WeightStore(const WeightStore& o) : order_(o.order_), holes_(o.holes_), index_(o.index_) {
    relink();
  }
  WeightStore(WeightStore&&) = default;  // the map's entries move with it: slots_ stay valid
  WeightStore& operator=(const WeightStore& o) {
    if (this != &o) *this = WeightStore(o);
    return *this;
  }
  WeightStore& operator=(WeightStore&&) = default;

  bool has(const std::string& name) const { return lookup(name) != index_.end(); }
  const Weight* find(const std::string& name) const;
  Weight* find(const std::string& name);
  const Weight& at(const std::string& name) const;
  void set(const std::string& name, Weight w);  // replaces in place or appends
  // Appends `name` unless it is there already (then false, nothing changes): one lookup.
  bool add(std::string name, Weight w);
  bool erase(const std::string& name);
  const std::vector<std::string>& names() const;
  size_t size() const { return index_.size(); }
  int64_t numel() const;
  int64_t nbytes() const;
  // A name not yet used, derived from `hint` ("conv.weight" -> "conv.weight_1").
  std::string unique_name(const std::string& hint) const;
  // Applies `edits` in one pass over the order (Note [Weight-store edits]; lib/ir/rewrite.cpp).
  void apply(WeightEdits edits);

 private:
  struct Entry {
    Weight weight;
    size_t pos = 0;  // index in order_
  };
  using Index = std::unordered_map<std::string, Entry>;
  Index::const_iterator lookup(const std::string& name) const;
  Index::iterator lookup(const std::string& name);
  void append(Index::iterator it, std::string name);
  void compact() const;
  void relink();                            // slots_ from index_ (after a copy)
  mutable std::vector<std::string> order_;  // may hold holes: entries erased since compact()
  mutable std::vector<Entry*> slots_;       // Note [Weight-store slots]: null for a hole
  mutable size_t holes_ = 0;
  Index index_;
};

// Note [Scale in graph size]
// Every IR operation a pass uses costs O(1) amortised or O(what it touches), so that passes
// written as one walk stay linear in graph size even where one value has 10^5 uses (a pooled
// constant `1` or `None` in a deep traced model) or 10^5 weights go at once:
// - Use lists. A value's uses live in slots; each node remembers the slot of each of its inputs,
//   so dropping a use (replace_input, remove_input, destroy) is O(1): the slot becomes a hole
//   (trailing holes are popped at once), and the list is compacted when holes outnumber the
//   live uses. Order is kept: uses() lists the live uses in the order they were added, as before.
//   Inserting or removing an input shifts the recorded index of the later inputs of that node
//   only (O(inputs), not O(uses of each)).
// - Node order numbers (Note [Node order numbers]): appending and prepending leave a full gap;
//   only repeated insertion at one spot in the middle renumbers, and then the block once.
// - WeightStore::erase leaves a hole in the order (closed by the next names()).
// - Names: Graph::claim_name counts per hint, so n values named alike cost O(n).
// ir_op_counts() counts the steps of these operations that are not O(1) (entries moved by a
// compaction, entries scanned to find a use by position, nodes renumbered, input indices
// shifted); tests/unit/test_ir_scale.cpp bounds them, so a complexity claim is checked by a
// count, not a time. The counts are per thread.
struct IrOpCounts {
  uint64_t use_slots_moved = 0;        // use-list compaction
  uint64_t use_slots_scanned = 0;      // UseList::operator[] walking past holes
  uint64_t nodes_renumbered = 0;       // Block::renumber
  uint64_t input_indices_shifted = 0;  // insert_input / remove_input
  uint64_t weight_slots_moved = 0;     // WeightStore compaction
  uint64_t node_count_updates = 0;     // Block::count_nodes, one per enclosing block
  uint64_t weight_lookups = 0;         // WeightStore lookups by name (Note [Weight-store slots])
};
IrOpCounts& ir_op_counts();

// ---------------------------------------------------------------------------------------------
// graph structure

struct OpInfo;
class Graph;
class Block;
class Node;
class Value;

// Note [Interned node strings]
// A node's op, module, scope and source location repeat across a graph: a deep scripted model's
// 175k nodes have a few hundred distinct ones. Each is kept once, in the graph's pool, and a
// node holds a pointer to it: 8 bytes instead of a std::string's 32 and the heap block of a long
// one, for every one of the four (issue #22). The strings live as long as their graph; a node
// copying another graph's strings interns them in its own.
class StringPool {
 public:
  const std::string* intern(std::string s);
  // The empty string every pool shares (a function's static: ready before any graph is made).
  static const std::string* empty() {
    static const std::string e;
    return &e;
  }

 private:
  std::unordered_map<std::string_view, std::unique_ptr<const std::string>> strings_;
};

struct Use {
  Node* user;
  size_t index;
  bool operator==(const Use& o) const { return user == o.user && index == o.index; }
};

// The live uses of a value, in the order they were added (a view: valid until the value's uses
// change). Holes left by removed uses are skipped (Note [Scale in graph size]).
class UseList {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Use;
    using difference_type = std::ptrdiff_t;
    using pointer = const Use*;
    using reference = const Use&;
    iterator(const Use* p, const Use* end) : p_(p), end_(end) { skip(); }
    const Use& operator*() const { return *p_; }
    const Use* operator->() const { return p_; }
    iterator& operator++() {
      ++p_;
      skip();
      return *this;
    }
    bool operator==(const iterator& o) const { return p_ == o.p_; }
    bool operator!=(const iterator& o) const { return p_ != o.p_; }

   private:
    void skip() {
      while (p_ != end_ && !p_->user) ++p_;
    }
    const Use* p_;
    const Use* end_;
  };
  UseList(const std::vector<Use>& slots, size_t live) : slots_(slots), live_(live) {}
  iterator begin() const { return {slots_.data(), slots_.data() + slots_.size()}; }
  iterator end() const { return {slots_.data() + slots_.size(), slots_.data() + slots_.size()}; }
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  const Use& front() const { return *begin(); }
  const Use& operator[](size_t i) const;  // O(i + holes before it)

 private:
  const std::vector<Use>& slots_;
  size_t live_;
};

class Value {
 public:
  Node* node() const { return node_; }  // producer (the param node for block inputs)
  size_t offset() const { return offset_; }
  // Creation order within the graph: a value made later has a larger serial. A set of `Value*`
  // kept across rewrites can meet a new value at the address of a destroyed one; the serial tells
  // them apart (MutatedMemory in exec/alias.h).
  uint64_t serial() const { return serial_; }
  UseList uses() const { return UseList(uses_, uses_.size() - holes_); }
  bool has_uses() const { return uses_.size() != holes_; }
  size_t num_uses() const { return uses_.size() - holes_; }
  const Type& type() const { return type_; }
  void set_type(Type t) { type_ = std::move(t); }
  const std::string& name() const { return name_; }
  Graph* graph() const;
  // Renames (made unique within the graph; the stored name may get a suffix).
  Value* set_name(const std::string& hint);

  // Given:   %a used by n1, n2
  // Execute: a->replace_all_uses_with(b)
  // Result:  n1, n2 use %b; %a has no uses.
  void replace_all_uses_with(Value* other);
  // Same, but only the uses for which pred(use) is true.
  void replace_uses_with_if(Value* other, const std::function<bool(const Use&)>& pred);

  // Constant value when produced by prim.Constant, else nullptr.
  const AttrValue* constant() const;
  // True when produced by prim.Constant holding None.
  bool is_none_constant() const;

 private:
  friend class Node;
  friend class Block;
  friend class Graph;
  Value(Node* node, size_t offset, Type type, uint64_t serial)
      : node_(node), offset_(offset), serial_(serial), type_(std::move(type)) {}
  // Records a use; returns its slot (Note [Scale in graph size]).
  size_t add_use(Node* user, size_t index);
  // Drops the use in `slot` in O(1) amortised.
  void drop_use(size_t slot);
  Node* node_;
  size_t offset_;
  uint64_t serial_;
  Type type_;
  std::string name_;
  std::vector<Use> uses_;  // slots; a hole has user == nullptr; the last slot is never a hole
  size_t holes_ = 0;
};

class Node {
 public:
  const std::string& op() const { return *op_; }
  void set_op(std::string op);
  bool is(const char* op) const { return *op_ == op; }
  // The op's row in the op table (lib/ir/op_table.h), looked up once per op name; nullptr for an
  // op the table does not know. Safe to call from threads that only read the graph (Note
  // [Emitters in parallel] in lib/driver/convert.cpp).
  const OpInfo* info() const;

  // inputs
  const std::vector<Value*>& inputs() const { return inputs_; }
  Value* input(size_t i) const { return inputs_.at(i); }
  size_t num_inputs() const { return inputs_.size(); }
  void add_input(Value* v);
  void insert_input(size_t i, Value* v);
  void replace_input(size_t i, Value* v);
  void replace_input_with(Value* from, Value* to);  // every occurrence
  void remove_input(size_t i);
  void remove_all_inputs();

  // outputs
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(size_t i = 0) const { return outputs_.at(i); }
  size_t num_outputs() const { return outputs_.size(); }
  Value* add_output(Type t = Type::any(), const std::string& name_hint = "");
  void erase_output(size_t i);  // output must have no uses

  // nested blocks (prim.If has two, prim.Loop one)
  const std::vector<std::unique_ptr<Block>>& blocks() const { return blocks_; }
  Block* block(size_t i) const { return blocks_.at(i).get(); }
  Block* add_block();

  // attributes, weights and provenance
  Attrs& attrs() { return attrs_; }
  const Attrs& attrs() const { return attrs_; }
  // Weight references: local key -> state_dict name ("weight" -> "conv1.weight"), ordered.
  const std::vector<std::pair<std::string, std::string>>& weights() const { return weights_; }
  std::string weight(const std::string& key) const;  // "" if absent
  void set_weight(const std::string& key, const std::string& name);
  bool erase_weight(const std::string& key);
  // Module instance path for module ops ("layer1.0.conv1"); empty for other ops. Two nodes with
  // the same module path call the same (shared) module instance.
  const std::string& module() const { return *module_; }
  void set_module(std::string m);
  // Module scope the node was inlined from ("layer1.0"); empty at top level.
  const std::string& scope() const { return *scope_; }
  void set_scope(std::string s);
  // Source location "file.py:102" when known.
  const std::string& loc() const { return *loc_; }
  void set_loc(std::string l);
  // Copies scope, loc (and nothing else) from another node: rewrites keep provenance.
  void copy_provenance(const Node* from);

  // position
  Block* owning_block() const { return block_; }
  Graph* graph() const;
  // Note [Intrusive node list]: the neighbours are fields of the node.
  Node* next() const { return next_; }  // nullptr at the end of the block (never the return node)
  Node* prev() const { return prev_; }  // nullptr at the start
  bool is_before(const Node* other) const;  // same block only
  void insert_before(Node* pos);            // node must not be in a block yet
  void insert_after(Node* pos);
  void move_before(Node* pos);
  void move_after(Node* pos);
  // Removes from its block and frees it: outputs must have no uses (asserted).
  void destroy();

 private:
  friend class Block;
  friend class Graph;
  friend class Value;
  Node(Graph* g, std::string op);
  void remove_use_of_input(size_t i);
  void unlink();
  void unlink_from_list();  // out of its block's list; block_ = nullptr
  size_t nested_count() const;

  Graph* graph_;
  const std::string* op_;  // Note [Interned node strings]
  // The cache of info(): two readers may fill it at once, both with the same row.
  mutable std::atomic<const OpInfo*> info_{nullptr};
  mutable std::atomic<bool> info_known_{false};
  std::vector<Value*> inputs_;
  std::vector<size_t> use_slots_;  // use_slots_[i]: the slot of input i in its value's uses_
  std::vector<Value*> outputs_;
  std::vector<std::unique_ptr<Value>> owned_outputs_;
  std::vector<std::unique_ptr<Block>> blocks_;
  Attrs attrs_;
  std::vector<std::pair<std::string, std::string>> weights_;
  const std::string* module_ = StringPool::empty();  // Note [Interned node strings]
  const std::string* scope_ = StringPool::empty();
  const std::string* loc_ = StringPool::empty();
  Block* block_ = nullptr;
  Node* next_ = nullptr;  // the block's nodes are a list of these (Note [Intrusive node list])
  Node* prev_ = nullptr;
  uint64_t order_ = 0;  // increasing along the block; used by is_before
};

class Block {
 public:
  ~Block();  // frees the nodes without maintaining use lists (Note [Intrusive node list])
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  // Block inputs (outputs of the param node) and outputs (inputs of the return node).
  const std::vector<Value*>& inputs() const;
  const std::vector<Value*>& outputs() const;
  Value* add_input(Type t = Type::any(), const std::string& name_hint = "");
  void erase_input(size_t i);  // must have no uses
  void add_output(Value* v);
  void replace_output(size_t i, Value* v);
  void erase_output(size_t i);
  Node* param_node() const { return param_.get(); }
  Node* return_node() const { return ret_.get(); }
  Node* owning_node() const { return owner_; }
  Graph* graph() const { return graph_; }

  // Nodes in order. Iteration is safe against destroying the current node when done as
  //   for (Node* n = b->front(); n; ) { Node* nx = n->next(); ...; n = nx; }
  Node* front() const;
  Node* back() const;
  bool empty() const { return !head_; }
  size_t size() const { return size_; }
  std::vector<Node*> nodes() const;  // snapshot
  void append(Node* n);              // node must not be in a block yet
  void prepend(Node* n);

 private:
  friend class Node;
  friend class Graph;
  Block(Graph* g, Node* owner);
  void renumber();
  void place(Node* n);  // assigns n's order number after it was linked in
  void clear();         // destroys every node (back to front) and the outputs
  // Adds delta to total_ here and in every enclosing block up to a detached owner.
  void count_nodes(int64_t delta);
  Graph* graph_;
  Node* owner_;
  size_t total_ = 0;  // nodes here and in nested blocks (Note [Node counts] in ir.cpp)
  std::unique_ptr<Node> param_, ret_;
  // Note [Intrusive node list]
  // The block owns its nodes through a doubly linked list threaded through the nodes themselves
  // (Node::next_ / prev_), not a std::list<std::unique_ptr<Node>>: walking to the next node reads
  // the current node only, not a separate list cell and then the node (two cache misses per node
  // on a graph far larger than the caches: Node::next was ~5% of `tinytrace opt --passes fuse`
  // on the 1M-node graph of scripts/bench_passes.sh, issue #22), and linking a node allocates
  // nothing. The sentinel param and return nodes are not in the list (their next/prev are null).
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t size_ = 0;
};

// Note [Module table]
// What the loader knows about the model's module tree, beyond the paths nodes carry (#module,
// #scope): each module instance's original Python class and the argument names of its forward.
// The Python emitter writes one class per (class, structure) from it and builds containers as
// containers (Note [Classes of the generated module] in lib/emitters/python/classes.cpp). Keys
// are module paths ("" is the root, "layer1.0"); entries may be missing (ONNX has no classes), and
// a path may have an entry although no node uses it. Passes that add modules (unshared copies,
// FloatFunctional, stubs) add leaf modules, which need no entry; no pass renames a module that
// nodes are scoped in. Entries describe the model as loaded: after the passes a leaf's node says
// what it is now (fuse-intrinsic makes conv1 a ConvReLU2d, --fuse removes bn1, a new leaf may
// take the path of an original module no node called). Filled by the TorchScript loader
// (module_table in lib/loaders/torchscript/jit_util.h) and the .pt2 loader (nn_module_stack);
// printed in .tir as a section (Note [Modules in .tir] in lib/ir/printer.cpp).
struct ModuleInfo {
  // Qualified class name without TorchScript's "__torch__." prefix
  // ("torchvision.models.resnet.BasicBlock", "torch.nn.modules.container.Sequential"); "" unknown.
  std::string type;
  // Names of its forward's arguments without self, when known ({"x"}).
  std::vector<std::string> forward_args;
  bool operator==(const ModuleInfo& o) const {
    return type == o.type && forward_args == o.forward_args;
  }
};

enum class ContainerKind : int8_t { None, Sequential, ModuleList, ModuleDict };
// The container a class name stands for: torch.nn's Sequential/ModuleList/ModuleDict (under
// torch.nn.modules.container or torch.nn), else None (subclasses of them are None too).
ContainerKind container_kind(const std::string& type);
// The class name without its module path ("torchvision.models.resnet.BasicBlock" -> "BasicBlock").
std::string short_type_name(const std::string& type);

// Note [Numbered names]
// The value names of a graph, each held by one value. Most values of a loaded graph have no name
// of their own and are numbered ("0", "1", ...: Value::set_name("")): those names (any
// name that is a number written without a leading zero) are kept in a vector indexed by the
// number, the others in a hash map. Naming a value costs no hashing then, and the map is a
// quarter of the size: on the 175k values of a deep scripted model, the hash map of every name
// was a quarter of lifting (issue #22). Which names are taken is the same as with one map.
class NameTable {
 public:
  // Enters `name` for `v`; false (and nothing changes) when another value holds it.
  bool claim(const std::string& name, Value* v);
  Value* find(const std::string& name) const;
  void release(const std::string& name);
  // Room for n names of either kind (a reserve that is not used costs no memory until touched).
  void reserve(size_t n) {
    numbered_.reserve(n);
    others_.reserve(n);
  }

 private:
  // The number a name spells (no sign, no leading zero, at most 18 digits), or -1.
  static int64_t number_of(const std::string& name);
  // Numbers this far past the vector's end go to the map, so "99999999" costs no memory.
  static constexpr size_t kNumberedReach = 1 << 16;
  std::vector<Value*> numbered_;                    // numbered_[n]: the holder of "n", or null
  std::unordered_map<std::string, Value*> others_;  // every other name (and far numbers)
  size_t numbers_in_others_ = 0;                    // far numbers in others_
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Block* block() const { return top_.get(); }
  const std::vector<Value*>& inputs() const { return top_->inputs(); }
  const std::vector<Value*>& outputs() const { return top_->outputs(); }
  Value* add_input(Type t = Type::any(), const std::string& name_hint = "") {
    return top_->add_input(std::move(t), name_hint);
  }
  void add_output(Value* v) { top_->add_output(v); }

  // Creates a detached node; insert it with Block::append / Node::insert_before.
  Node* create(const std::string& op, const std::vector<Value*>& inputs = {},
               size_t num_outputs = 0);
  // Creates and inserts before `pos` (or appends to the top block when pos is nullptr).
  Node* insert(const std::string& op, const std::vector<Value*>& inputs, size_t num_outputs,
               Node* pos);
  // Creates a prim.Constant before `pos` (or at the start of the top block when nullptr).
  Value* constant(AttrValue v, Type t, Node* pos = nullptr);

  // Model name (from the file or --name) and free-form source info.
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // Module path -> what the loader knows of it (Note [Module table]).
  std::map<std::string, ModuleInfo>& modules() { return modules_; }
  const std::map<std::string, ModuleInfo>& modules() const { return modules_; }

  // Note [Forward defaults]
  // The default value a graph input has in the original forward (`mask: Optional[Tensor] =
  // None`, `k: int = 2`), so that NAME.py's forward keeps it and the converted module is called
  // the way the original was. Only a trailing run of inputs has one (Python's rule), of the
  // input's type (the verifier checks both); .tir writes it after the type (`%k : int = 2`).
  // The loader reads them from the forward's schema; ONNX and torch.export have none.
  // input_default is null for an input without one; default_fits says which values fit a type.
  const AttrValue* input_default(const Value* input) const;
  void set_input_default(const Value* input, AttrValue v);
  void clear_input_default(const Value* input) { input_defaults_.erase(input); }
  // The inputs before the first with a default: what a call must pass.
  size_t num_required_inputs() const;

  WeightStore& weights() { return weights_; }
  const WeightStore& weights() const { return weights_; }

  // All nodes, blocks first-to-last, depth-first into nested blocks (pre-order).
  std::vector<Node*> all_nodes() const;
  size_t num_nodes() const;  // counts nested nodes too; O(1) (Note [Node counts] in ir.cpp)

  // Names: unique within the graph.
  // Room for `n` named values (a loader that knows the size saves the name table's rehashes).
  void reserve_values(size_t n) { names_.reserve(n); }  // Note [Numbered names]
  Value* find_value(const std::string& name) const;
  // The serial the next new value gets (Value::serial).
  uint64_t next_value_serial() const { return next_serial_; }

 private:
  friend class Value;
  friend class Node;
  friend class Block;
  void release_name(const std::string& name);
  std::string claim_name(const std::string& hint, Value* v);
  StringPool strings_;  // before top_: its nodes point into it (Note [Interned node strings])
  std::unique_ptr<Block> top_;
  std::string name_;
  WeightStore weights_;
  std::map<std::string, ModuleInfo> modules_;
  std::unordered_map<const Value*, AttrValue> input_defaults_;  // Note [Forward defaults]
  NameTable names_;
  std::unordered_map<std::string, uint64_t> name_counters_;
  uint64_t next_anon_ = 0;
  uint64_t next_serial_ = 0;
};

// Names a value gets from the source ("input.1" -> "input"): strips TorchScript's ".N" suffix and
// replaces characters that are not [A-Za-z0-9_] with '_'. Empty when nothing usable is left.
std::string sanitize_name(const std::string& raw);

// Where a node is (Note [Located errors] in support/diag.h): its first output's name, its module
// scope and its source line.
Location location_of(const Node& n);
// "aten.add node %y in module 'layer1' at model.py:12": how messages name a node.
std::string describe(const Node& n);

}  // namespace tt
