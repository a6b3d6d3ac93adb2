// The TorchScript lifter (lifter.h): in-place writes (Note [In-place writes while lifting]).
#include "loaders/torchscript/lifter.h"

#include "exec/alias.h"
#include "loaders/jit_builtins.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace tt::ts {

// Note [In-place writes while lifting]
// An ATen op that writes into an argument (x.clamp_(), torch.add(a, b, out=c), x.copy_(y)) is
// lifted as its out-of-place twin only when that computes the same: nothing else can see the
// tensor written (exclusive_write); otherwise it stays an in-place node, written as the same call
// on the same view, in program order (exec/alias.h, Note [In-place writes]). Never lowered to a
// twin whose write would be lost: a view of the tensor, the base it is a view of, a container
// holding it, or (scripted) the same variable read later would all miss the write. Writes into
// a weight or a constant, and in-place shape changes (unsqueeze_, t_, resize_) of shared
// tensors, are refused (exit 4).
// Returns true when the node was lifted here (kept in place); false: lift it as usual.
bool Lifter::lift_inplace(const jit::Node* n, const c10::FunctionSchema& schema,
                          const std::vector<Value*>& ins, Frame& f) {
  const auto& args = schema.arguments();
  // Tensors only: list and dict mutation (append, _set_item, pop) has its own handling.
  std::vector<size_t> written;
  for (size_t i = 0; i < args.size() && i < ins.size(); ++i)
    if (args[i].alias_info() && args[i].alias_info()->isWrite() &&
        args[i].type()->kind() == c10::TypeKind::TensorType)
      written.push_back(i);
  if (written.empty()) return false;
  const std::string& base = schema.name();
  std::string short_base = base.substr(base.find("::") + 2);
  // dropout_(x, p, train=False) (nn.Dropout(inplace=True) in eval) writes nothing: x itself.
  static const std::set<std::string> dropouts = {"aten::dropout_", "aten::feature_dropout_",
                                                 "aten::alpha_dropout_",
                                                 "aten::feature_alpha_dropout_"};
  if (dropouts.count(base) && ins.size() == 3 && n->outputs().size() == 1) {
    const AttrValue* train = ins[2]->constant();
    if (train && std::holds_alternative<bool>(*train) && !std::get<bool>(*train)) {
      f.env[n->output()] = Binding{ins[0], {}};
      return true;
    }
  }
  bool inplace_name = is_inplace_name(short_base);
  std::string why;
  for (size_t i : written) {
    if (std::string w = write_into_state_problem(ins[i]); !w.empty())
      unsupported(n, "an in-place write into " + w, f,
                  "write into a copy (x = x.clone()) or make the update outside the model");
    if (why.empty()) why = exclusive_write(n, n->input(i), ins[i], f);
  }
  // TorchScript's own overloads (x.copy_(3): aten::copy_.int, .float, .Tensor) have no
  // out-of-place twin: kept in place, written x.copy_(v) as Python's dispatcher copy_ does the
  // same (a number fills the tensor converted to its dtype).
  bool twin = !find_jit_only_operator(qualified_overload(schema));
  if (why.empty() && inplace_name && written == std::vector<size_t>{0} && twin)
    return false;  // the twin is exact
  if (!why.empty() && is_metadata_inplace(base))
    unsupported(n,
                "an in-place change of a tensor's shape or strides (" + short_base +
                    ") on a tensor that " + why,
                f,
                "use the out-of-place op (" + short_base.substr(0, short_base.size() - 1) +
                    ") and its result");
  std::string op =
      base + "." + (schema.overload_name().empty() ? "default" : schema.overload_name());
  emit(op, ins, n, f);
  spdlog::debug("kept in place: {} ({})", op,
                !why.empty() ? why
                : twin       ? "an out= form"
                             : "no out-of-place twin");
  return true;
}

// "" when a write into `v` (the IR value of JIT value `jv`, an argument of node `n`) can be lifted
// as an out-of-place op: nothing else shares its memory now, and (scripted graphs) the variable
// is not read after the write nor defined outside the loop or branch that writes it. Otherwise
// why not, as "<reason>" completing "a tensor that ...".
std::string Lifter::exclusive_write(const jit::Node* n, const jit::Value* jv, Value* v,
                                    const Frame& f) {
  const Node* p = v->node();
  if (p == graph_->block()->param_node())
    return "is an input of the model (the caller sees the write)";
  if (p->owning_block() == nullptr || p == p->owning_block()->param_node())
    return "is carried by a loop or branch";
  // An inplace=True module op returns its input, which was exclusive when the call was lifted
  // (try_leaf inlines it otherwise) and is read by nothing else: the result is exclusive too.
  bool inplace_module = !p->module().empty() && p->attrs().get_bool("inplace", false) &&
                        p->num_inputs() > 0 && p->input(0)->num_uses() == 1;
  if (!inplace_module && may_return_alias(*p))
    return "is a view or alias of another tensor (" + p->op() + ")";
  for (const Use& u : v->uses()) {
    std::vector<size_t> shared = aliased_inputs(*u.user);
    if (std::find(shared.begin(), shared.end(), u.index) != shared.end())
      return "another value is a view or alias of (" + u.user->op() + ")";
  }
  // The JIT side: later reads of the same variable, through the callers' frames. The lifter
  // binds several JIT values to one IR value where Python has one object under several names
  // (x[:] is x, a module call returning its argument, tuple packing at module boundaries): a
  // later read of any of them sees the write.
  auto read_later = [](const jit::Value* w, const jit::Node* pos) {
    if (w->node()->owningBlock() != pos->owningBlock()) return true;
    for (const jit::Use& u : w->uses())
      if (u.user != pos && u.user->isAfter(pos)) return true;
    return false;
  };
  const Frame* fr = &f;
  while (jv && fr) {
    if (jv->node()->owningBlock() != n->owningBlock())
      return "was made outside the loop or branch that writes it";
    if (read_later(jv, n)) return "is read again after the write";
    for (const auto& [w, b] : fr->env)
      if (b.value == v && w != jv && read_later(w, n))
        return "is also another variable, read again after the write";
    if (jv->node()->kind() != c10::prim::Param || !fr->caller || !fr->call) break;
    size_t k = jv->offset() + fr->arg_offset;
    if (k >= fr->call->inputs().size()) break;
    jv = fr->call->input(k);
    n = fr->call;
    fr = fr->caller;
  }
  return "";
}

// "a weight ('conv.weight')" / "a constant tensor" when `v` may be (a view of) one; "" otherwise.
std::string Lifter::write_into_state_problem(const Value* v) {
  std::vector<const Value*> todo = {v};
  std::set<const Value*> seen;
  while (!todo.empty()) {
    const Value* x = todo.back();
    todo.pop_back();
    if (!seen.insert(x).second) continue;
    const Node* p = x->node();
    if (p->is("prim.GetAttr")) return "the weight '" + p->weight("value") + "'";
    if (p->is("prim.Constant") && x->type().is_tensor()) return "a constant tensor";
    if (p->owning_block() && p != p->owning_block()->param_node())
      for (size_t i : aliased_inputs(*p)) todo.push_back(p->input(i));
  }
  return "";
}

}  // namespace tt::ts
