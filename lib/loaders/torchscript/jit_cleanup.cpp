// The TorchScript lifter (lifter.h): its own clean-ups, the tracer noise folded while lifting and
// the dead pure nodes swept after it.
#include "loaders/torchscript/lifter.h"

#include "ir/op_table.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

namespace tt::ts {

// Tracer noise that is the value itself: aten::Int / ScalarImplicit of a prim::NumToTensor, and
// x[:] on some dim. True when n's result was bound to that value (lift_op lifts nothing then).
bool Lifter::fold_tracer_noise(const std::string& qual, const std::vector<Value*>& ins,
                               const jit::Node* n, Frame& f) {
  // aten::Int(prim::NumToTensor(x)) -> x, and the same for ScalarImplicit (tracer noise).
  if ((qual == "aten::Int.Tensor" || qual == "aten::ScalarImplicit") && ins.size() == 1) {
    Node* p = ins[0]->node();
    if (p->is("prim.NumToTensor") && p->num_inputs() == 1) {
      auto kind = p->input(0)->type().kind;
      if (kind == Type::Kind::Int ||
          (qual == "aten::ScalarImplicit" && kind == Type::Kind::Float)) {
        f.env[n->output()] = Binding{p->input(0), {}};
        return true;
      }
    }
  }

  // x[:] on some dim (start 0, end INT64_MAX, step 1): the tracer records one for every `:`
  // in an indexing expression; it is the tensor itself.
  if (qual == "aten::slice.Tensor" && ins.size() == 5) {
    auto int_is = [](Value* v, int64_t want) {
      const AttrValue* c = v->constant();
      return c && std::holds_alternative<int64_t>(*c) && std::get<int64_t>(*c) == want;
    };
    auto none_or = [&](Value* v, int64_t want) {
      const AttrValue* c = v->constant();
      return c && (std::holds_alternative<NoneAttr>(*c) || int_is(v, want));
    };
    if (ins[1]->constant() && none_or(ins[2], 0) &&
        none_or(ins[3], std::numeric_limits<int64_t>::max()) && int_is(ins[4], 1)) {
      f.env[n->output()] = Binding{ins[0], {}};
      return true;
    }
  }

  // x[[2, 0]]: the tracer records the index list as a constant tensor moved to the CPU in its
  // own dtype, to(c, cpu, dtype, non_blocking=False, copy=False, None), which returns c itself.
  if (qual == "aten::to.device" && ins.size() == 6) {
    const AttrValue* c = ins[0]->constant();
    const AttrValue* dev = ins[1]->constant();
    const AttrValue* dt = ins[2]->constant();
    auto is_false = [](Value* v) {
      const AttrValue* b = v->constant();
      return b && std::holds_alternative<bool>(*b) && !std::get<bool>(*b);
    };
    if (c && std::holds_alternative<at::Tensor>(*c) && dev &&
        std::holds_alternative<DeviceAttr>(*dev) && std::get<DeviceAttr>(*dev).name == "cpu" &&
        dt && is_false(ins[3]) && is_false(ins[4]) && ins[5]->is_none_constant()) {
      const at::Tensor& t = std::get<at::Tensor>(*c);
      int64_t code = std::holds_alternative<DType>(*dt) ? dtype_to_scalar_type(std::get<DType>(*dt))
                     : std::holds_alternative<int64_t>(*dt) ? std::get<int64_t>(*dt)
                                                            : -1;
      if (t.device().is_cpu() && static_cast<int64_t>(t.scalar_type()) == code) {
        f.env[n->output()] = Binding{ins[0], {}};
        return true;
      }
    }
  }
  return false;
}

// Removes constants, list/tuple builders, NumToTensor and GetAttr nodes left unused by the
// lifter's folds (pure nodes only).
void Lifter::sweep_dead_prims() {
  static const std::set<std::string> pure = {"prim.Constant",       "prim.ListConstruct",
                                             "prim.TupleConstruct", "prim.NumToTensor",
                                             "prim.GetAttr",        "prim.Uninitialized"};
  // Pre-order reversed: every use (also inside a nested block) is visited before its definition.
  std::vector<Node*> nodes = graph_->all_nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* n = *it;
    // also the pure builtins whose only reader was a message the lifter dropped (the arguments
    // of a raise's f-string: Note [Text of numbers] in lifter_ops.cpp)
    bool pure_builtin = is_attribute_op(n->op()) || n->op().rfind("operator.", 0) == 0 ||
                        n->op() == "len" || n->op() == "str" || n->op() == "str.format";
    if (!pure.count(n->op()) && !pure_builtin) continue;
    if (op_has(*n, kWritesContainer)) continue;  // operator.setitem/delitem: effects
    bool used = std::any_of(n->outputs().begin(), n->outputs().end(),
                            [](Value* v) { return v->has_uses(); });
    if (!used) n->destroy();
  }
}

}  // namespace tt::ts
