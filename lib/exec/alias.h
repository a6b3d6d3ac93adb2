// Which values may share memory, and which nodes write into their inputs: the facts that keep
// in-place ops on views exact (Note [In-place writes]).
//
// Note [In-place writes]
// The IR is SSA, but a node may write into the memory of an input: an in-place ATen op kept as
// such ("aten::clamp_.default", "aten::copy_.default", written `v.clamp_(0, 0.5)`). Every other
// value that shares that memory (the base a view was taken of, other views of it, containers
// holding it) then reads the written data from that point on, as in PyTorch. The loaders keep an
// in-place op only where such sharing exists; an in-place op on a tensor nothing else can see is
// lifted as its out-of-place twin, which computes the same. Because the write is a side effect,
// passes must keep program order around it: dce keeps the writer (pass_util's has_side_effects),
// cse merges only constants in such a graph, and rewrites that would copy, fold or drop a value
// of that memory (fold-constants, eliminate-noops, fusions) leave it alone (`mutated_memory`).
// The interpreter, the Python emitter and the TorchScript emitter run the nodes in order on real
// views, so they write where PyTorch writes.
//
// Note [Container mutation]
// Lists and dicts of scripted models are mutable objects, as in Python: `l.append(x)`, `l[i] = v`,
// `d[k] = v`, `l.pop()`, `l.insert(i, x)`, `l.extend(m)` (and `l += m`), `l.remove(x)`,
// `l.clear()`, `l.reverse()`, `del l[i]`, `d.update(e)`, `d.setdefault(k, v)`, `d.popitem()` are
// nodes of the op table rows with kWritesContainer (list.append, operator.setitem, dict.pop, ...)
// that write into their input 0, kept in program order exactly like in-place tensor ops: their
// input 0 is written memory (written_inputs), so `mutated_memory` covers the container, every
// container holding it (a tuple, a dict, another list, a block result) and what it holds, and
// the passes neither fold, merge, drop nor move reads across the write. A value names the
// object, not its contents: after `l.append(x)` later reads use the same value `l`, and so see
// the write, whichever name (tuple item, callee argument, dict value) they reach it through. The
// interpreter runs the nodes on shared c10::List/c10::Dict objects (TorchScript's own builtins,
// lib/exec/dispatch.h), the Python emitter writes the same statement (`l.append(x)`, `l[i] = v`)
// and gives a mutated list literal its own name rather than repeating it.
//
// Note [Module state]
// A module attribute a scripted forward reads before it writes it, or writes inside an `if` or a
// loop (a cache `if self.cache is None: self.cache = ...`, torchvision's AnchorGenerator
// rewriting `self.cell_anchors` with .to()), keeps its value from one call to the next, as in
// Python. The IR says so with two prim ops whose attrs name the attribute (`module`, its module
// path, "" for the root; `name`): `%v = prim.StateGet(%init)` reads it, its input being the value
// the attribute has before any write (constants and weight reads: tensors are weights, so NAME.pth
// carries them), and `prim.StateSet(%v)` writes it. Neither is pure, so the passes treat them as
// effects in program order, like container mutation: dce keeps them, cse merges nothing across
// them (only constants in such a graph), fold-constants never folds a read, and nothing is moved
// across them. The interpreter keeps the values of one Interpreter's runs (the first read keeps
// the initial value, so an in-place change of it is seen by later calls too); the Python emitter
// writes `self.<module>.<name>` (Note [Module state in Python]); the TorchScript emitter refuses.
// The lifter makes them (Note [Module attributes written in forward]).
#pragma once

#include "ir/ir.h"

#include <string>
#include <vector>

namespace tt {

// Whether an ATen op (qualified: "aten::slice.Tensor", "aten::relu_") or an IR op may return a
// tensor sharing memory with an input: a view, the input itself (dropout in eval, to() to the
// same dtype, contiguous() of a contiguous tensor, an identity module), or a container of such.
// From the ATen schemas of every overload the op may run as, plus the composite ops whose schema
// says "new tensor" but that return their input in some cases. Unknown ops: true.
bool may_return_alias(const Node& n);
bool aten_may_return_alias(const std::string& qualified);
// The inputs of `n` whose memory its results may share (empty: the results are new tensors).
std::vector<size_t> aliased_inputs(const Node& n);

// Indices of the inputs a node writes into (in-place ATen ops named "aten::x_..." or "Tensor.x_",
// out= overloads): for "x_" ops the receiver, for others every argument the schema marks as
// written. Empty for every other node.
std::vector<size_t> written_inputs(const Node& n);

// Whether an op name without namespace names an in-place variant: "relu_", not "__and__".
bool is_inplace_name(const std::string& short_name);

// The in-place ATen ops that change a tensor's shape or strides rather than its data
// (unsqueeze_, transpose_, resize_, as_strided_, set_, ...): base name "aten::unsqueeze_".
bool is_metadata_inplace(const std::string& aten_base);

// The values whose memory some node of a graph may write in place, as of when it was taken
// (`mutated_memory`). A pass keeps one across its rewrites; a value created after it (a folded
// constant, a fused node's result) is never in it, even at the address of a destroyed value that
// was: values are kept by serial (Value::serial), and a serial is never given twice in a graph,
// so whether a rewrite happened cannot depend on the allocator. One bit per serial: a set of
// pointers cost a hash and a malloc per value (issue #22).
class MutatedMemory {
 public:
  MutatedMemory() = default;
  MutatedMemory(const Graph* g, std::vector<bool> by_serial, size_t count)
      : graph_(g), by_serial_(std::move(by_serial)), count_(count) {}
  bool contains(const Value* v) const {
    uint64_t s = v->serial();
    return s < by_serial_.size() && by_serial_[s] && v->graph() == graph_;
  }
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }

 private:
  const Graph* graph_ = nullptr;
  std::vector<bool> by_serial_;  // sized Graph::next_value_serial() when taken
  size_t count_ = 0;
};

// Every value whose memory some node of `g` may write in place: the written inputs and, closed
// transitively, every value that may share memory with one of them (views of it, what it is a
// view of, containers holding it, block results and loop-carried values it flows into).
MutatedMemory mutated_memory(const Graph& g);

}  // namespace tt
