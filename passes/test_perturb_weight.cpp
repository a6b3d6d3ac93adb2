// test-perturb-weight: a deliberately WRONG transformation, for testing --verify.
//
// Before:
//   fc.weight : f32[10,16] param = [w0, w1, ...]
// After:
//   fc.weight : f32[10,16] param = [w0 + delta, w1, ...]
//
// Adds `delta` (option, default 0.5) to the first element of one floating-point weight: the one
// named by option `weight=NAME`, or else the first floating-point parameter in state_dict order.
// It changes what the model computes on purpose, so `convert --passes test-perturb-weight
// --verify` must fail with exit 5; the end-to-end tests rely on that. Never use it otherwise.
#include "passes/pass.h"

#include <ATen/ATen.h>

namespace tt {

bool run_test_perturb_weight(Graph& g, PassContext& ctx) {
  std::string target = ctx.option("weight", "");
  double delta = std::stod(ctx.option("delta", "0.5"));
  for (const std::string& name : g.weights().names()) {
    Weight* w = g.weights().find(name);
    if (!target.empty() ? name != target
                        : !(w->is_param && w->tensor.defined() && w->tensor.is_floating_point() &&
                            w->tensor.numel() > 0))
      continue;
    if (!w->tensor.is_floating_point() || w->tensor.numel() == 0)
      throw Error(ExitCode::Usage, "test-perturb-weight: weight '" + name +
                                       "' is not a non-empty floating-point tensor — name another");
    // A copy: the loaded tensor may share storage with something else.
    at::Tensor t = w->tensor.clone();
    t.view(-1)[0].add_(delta);
    w->tensor = t;
    ctx.rewrite("perturb", nullptr);
    return true;
  }
  if (!target.empty())
    throw Error(ExitCode::Usage, "test-perturb-weight: the model has no weight '" + target + "'");
  return false;
}

}  // namespace tt
