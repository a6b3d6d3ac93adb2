// Module ops in the interpreter: the node's lowering (lib/ir/module_lowering.h, Note [Module
// lowering]) run on the node's inputs against the weights of the graph the node belongs to.
#include "exec/interpreter.h"

#include "ir/module_lowering.h"
#include "support/diag.h"

namespace tt {

std::unique_ptr<Graph> lower_module_or_throw(const Node& n) {
  if (!has_module_lowering(n.op()))
    throw Error(ExitCode::Unsupported,
                "the interpreter has no lowering for module op " + n.op() + " (" + n.module() + ")")
        .at(location_of(n));
  std::string why;
  auto g = lower_module(n, why);
  if (!g)
    throw Error(ExitCode::Unsupported, "the interpreter cannot run " + n.module() + ": " + why)
        .at(location_of(n));
  return g;
}

std::vector<c10::IValue> run_lowered_module(const Graph& lowered, const WeightStore& weights,
                                            const std::vector<c10::IValue>& inputs) {
  Interpreter sub(lowered);
  sub.weights_override = &weights;
  sub.wrap_errors = false;  // a kernel's error is the module node's (the caller names it)
  return sub.run(inputs);
}

std::vector<c10::IValue> run_module_op(const Node& n, const WeightStore& weights,
                                       const std::vector<c10::IValue>& inputs) {
  return run_lowered_module(*lower_module_or_throw(n), weights, inputs);
}

}  // namespace tt
