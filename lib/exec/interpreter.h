// The IR interpreter: runs a Graph node by node on ATen (DESIGN.md §3). One engine behind
// --verify, shape inference, constant folding and profiling.
//
// Module ops run their lowering (lib/ir/module_lowering.h, lib/exec/modules.cpp); function
// ops and aten:: fallback ops go through the c10 dispatcher by schema (lib/exec/dispatch.h);
// prim ops are handled here.
#pragma once

#include "ir/ir.h"

#include <ATen/core/ivalue.h>

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <optional>
#include <string>
#include <vector>

namespace tt {

// The IValue a constant attribute stands for, read as `type` says (ints typed ScalarType become
// dtypes, etc.).
c10::IValue attr_to_ivalue(const AttrValue& v, const Type& type);
// A graph input's default (Note [Forward defaults] in ir/ir.h) as the value a call passes: the
// Optional's contained type applies, and a tuple (held as a list of its items) is a tuple.
c10::IValue default_to_ivalue(const AttrValue& v, const Type& type);

// Runs one module op ("nn.Conv2d") on its already-evaluated inputs: its lowering (Note [Module
// lowering] in lib/ir/module_lowering.h) against `weights`. Throws tt::Error(Unsupported) for a
// module op it cannot run; a kernel's own error propagates as raised.
std::vector<c10::IValue> run_module_op(const Node& n, const WeightStore& weights,
                                       const std::vector<c10::IValue>& inputs);
// The two steps of run_module_op, for callers that run one node many times (the interpreter
// keeps the lowered graph of each module node it meets).
std::unique_ptr<Graph> lower_module_or_throw(const Node& n);
std::vector<c10::IValue> run_lowered_module(const Graph& lowered, const WeightStore& weights,
                                            const std::vector<c10::IValue>& inputs);

class Interpreter {
 public:
  explicit Interpreter(const Graph& g) : g_(g) {}

  // Runs the graph; returns the graph outputs. Throws tt::Error naming the failing node (its
  // op, first output and scope) when an op fails.
  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs);

  // Called after every top-level node with its wall time in milliseconds (for `profile`).
  std::function<void(const Node&, double)> on_node;

  // Weights to read instead of the graph's (same names), e.g. meta copies for shape inference.
  const WeightStore* weights_override = nullptr;
  // Called with every value the run computes (inputs of executed blocks included).
  std::function<void(const Value*, const c10::IValue&)> on_value;
  // Called when a non-prim op fails, with its inputs; outputs it returns replace the failure
  // (infer-shapes runs ops that have no meta kernel for real). nullopt: the error propagates.
  std::function<std::optional<std::vector<c10::IValue>>(const Node&,
                                                        const std::vector<c10::IValue>&)>
      on_failure;
  // Called before a non-prim op runs; outputs it returns are used instead of running the op
  // (infer-shapes: shape rules for ops known to lack a meta kernel, as failing costs a backtrace).
  std::function<std::optional<std::vector<c10::IValue>>(const Node&,
                                                        const std::vector<c10::IValue>&)>
      intercept;
  // false: an op's own error (c10::Error, ...) propagates as raised instead of becoming a
  // tt::Error naming the node (a module's lowering runs inside the module node, which is named).
  bool wrap_errors = true;

 private:
  void run_block(const Block& b, const std::vector<c10::IValue>& inputs,
                 std::vector<c10::IValue>& outputs);
  void run_node(const Node& n);
  const c10::IValue& get(const Value* v) const;
  const WeightStore& weights() const { return weights_override ? *weights_override : g_.weights(); }
  void set(const Value* v, c10::IValue iv);
  // The values of `b` that leave env_ after each node of it (nullptr: before the first).
  const std::unordered_map<const Node*, std::vector<const Value*>>& dead_after(const Block& b);

  const Graph& g_;
  std::unordered_map<const Value*, c10::IValue> env_;
  // Note [Freeing values after their last use], per block, made once per run.
  std::unordered_map<const Block*, std::unordered_map<const Node*, std::vector<const Value*>>>
      dead_after_;
  std::unordered_map<const Node*, std::unique_ptr<Graph>> lowered_;  // module nodes run so far
  // Module attributes forward wrote (prim.StateSet) or read (prim.StateGet), by "module.name":
  // kept across the runs of one Interpreter, as the module keeps them across calls.
  std::map<std::string, c10::IValue> state_;
  int depth_ = 0;
};

}  // namespace tt
