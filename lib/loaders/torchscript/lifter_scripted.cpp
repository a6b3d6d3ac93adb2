// The TorchScript lifter (lifter.h): scripted method graphs (Note [Scripted method graphs]).
//
// Note [Scripted method graphs]
// A method of a torch.jit.script'ed module still calls TorchScript functions (F.relu, ...), reads
// configuration attributes (self.stride, self.training, self.use_res_connect) and branches on
// them. Before lifting such a method, the lifter works on a copy of its graph (cached per module
// instance, since attribute values differ between instances of one type): non-tensor attributes
// of self become constants, prim::CallFunction calls are inlined, and the JIT's constant
// propagation resolves what became constant (config branches, `x is None` on constants); the
// result is what this instance actually computes. A method of a known torch.nn leaf type is
// additionally fully inlined (its calls on self, e.g. Conv2d._conv_forward), input guards
// (`if input.dim() != 4: raise ...`, which the nn module performs itself when called) are
// dropped, constant-trip loops are unrolled and list mutation removed, so the leaf recipes see the
// same single key op a traced leaf has. Scripted nn.LSTM / nn.GRU / nn.MultiheadAttention calls
// are lifted from the module's attributes instead (Note [Scripted RNN and attention modules]).
// Traced graphs have none of these constructs and are lifted as they are.
#include "loaders/torchscript/lifter.h"

#include <spdlog/spdlog.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/loop_unrolling.h>
#include <torch/csrc/jit/passes/remove_mutation.h>

#include <functional>
#include <tuple>

namespace tt::ts {

bool Lifter::has_script_constructs(const jit::Block& b, const jit::Value* self) {
  for (const jit::Node* n : b.nodes()) {
    auto k = n->kind();
    if (k == c10::prim::If || k == c10::prim::Loop || k == c10::prim::CallFunction) return true;
    if (k == c10::prim::GetAttr && n->input(0) == self) {
      const c10::TypePtr& t = n->output()->type();
      auto ct = t->cast<c10::ClassType>();
      if (!(ct && ct->is_module()) && !t->isSubtypeOf(*c10::TensorType::get())) return true;
    }
    for (const jit::Block* sub : n->blocks())
      if (has_script_constructs(*sub, self)) return true;
  }
  return false;
}

// Non-tensor attributes of self (and of its submodules, reached through GetAttr chains) become
// constants.
void Lifter::fold_attrs(jit::Graph& g, jit::Block* b,
                        std::unordered_map<const jit::Value*, jit::Module>& owners) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;
    for (jit::Block* sub : n->blocks()) fold_attrs(g, sub, owners);
    if (n->kind() != c10::prim::GetAttr) continue;
    auto o = owners.find(n->input(0));
    if (o == owners.end()) continue;
    std::string name = n->s(c10::attr::name);
    if (!o->second.hasattr(name)) continue;
    IValue v = o->second.attr(name);
    if (v.isModule()) {
      owners.emplace(n->output(), jit::Module(v.toObject()));
      continue;
    }
    if (v.isTensor() || v.isObject()) continue;
    jit::WithInsertPoint guard(n);
    auto c = g.insertConstant(v, c10::nullopt, n->scope());  // may throw for odd IValues
    c->node()->setSourceRange(n->sourceRange());
    n->output()->replaceAllUsesWith(c);
    n->destroy();
  }
}

// prim::CallFunction nodes inlined (repeatedly: inlined bodies call further functions).
void Lifter::inline_functions(jit::Graph& g) {
  for (int round = 0; round < 50; ++round) {
    std::vector<jit::Node*> calls;
    std::function<void(jit::Block*)> collect = [&](jit::Block* b) {
      for (jit::Node* n : b->nodes()) {
        if (n->kind() == c10::prim::CallFunction && jit::tryToGraphFunction(n) &&
            plain_name(jit::tryToGraphFunction(n)->qualname().qualifiedName()) != kInterpolate)
          calls.push_back(n);
        for (jit::Block* sub : n->blocks()) collect(sub);
      }
    };
    collect(g.block());
    if (calls.empty()) return;
    for (jit::Node* n : calls) {
      jit::GraphFunction* fn = jit::tryToGraphFunction(n);
      n->removeInput(0);  // the function value; the callee's inputs are the rest
      // PyTorch's own functions (F.adaptive_avg_pool2d, TorchScript builtins) check their
      // arguments again when the generated code calls them: their input guards are not the
      // model's. The model's own functions are named __torch__.<module>.<function>.
      std::shared_ptr<jit::Graph> body = fn->graph()->copy();
      if (fn->qualname().qualifiedName().rfind("__torch__.", 0) != 0)
        drop_raise_guards(body->block());
      jit::inlineCallTo(n, fn, body.get());
    }
  }
}

// An If without results whose branches only raise or do nothing (an input check).
bool Lifter::is_raise_guard(const jit::Node* n) {
  if (n->kind() != c10::prim::If || !n->outputs().empty()) return false;
  bool raises = false;
  for (const jit::Block* b : n->blocks()) {
    for (const jit::Node* m : b->nodes()) {
      auto k = m->kind();
      if (k == c10::prim::RaiseException)
        raises = true;
      else if (!m->blocks().empty() || (m->hasSideEffects() && k != c10::aten::warn))
        return false;  // the message is built from pure ops (dim, format, ...)
    }
  }
  return raises;
}

// builtin_only: only the guards of TorchScript's builtin functions, compiled from source text
// into the method itself (`assert` in aten::list_with_default; their location is "<string>").
void Lifter::drop_raise_guards(jit::Block* b, bool builtin_only) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;
    if (is_raise_guard(n) && (!builtin_only || node_loc(n).rfind("<string>:", 0) == 0)) {
      n->destroy();
      continue;
    }
    for (jit::Block* sub : n->blocks()) drop_raise_guards(sub, builtin_only);
  }
}

// The graph to lift for `g` called on `self` (the graph itself for a traced method).
std::shared_ptr<jit::Graph> Lifter::prepared(const std::shared_ptr<jit::Graph>& g,
                                             const jit::Module& self, bool leaf) {
  const jit::Value* self_in = g->inputs().empty() ? nullptr : g->inputs()[0];
  if (!has_script_constructs(*g->block(), self_in)) return g;
  auto key = std::make_tuple(g.get(), static_cast<const void*>(self._ivalue().get()), leaf);
  auto it = prepared_.find(key);
  if (it != prepared_.end()) return it->second;
  std::shared_ptr<jit::Graph> copy = g->copy();
  try {
    if (leaf)
      jit::Inline(*copy);
    else
      inline_functions(*copy);
    std::unordered_map<const jit::Value*, jit::Module> owners;
    auto st = copy->inputs().empty() ? nullptr : copy->inputs()[0]->type()->cast<c10::ClassType>();
    if (st && st->is_module()) owners.emplace(copy->inputs()[0], self);
    fold_attrs(*copy, copy->block(), owners);
    jit::ConstantPropagation(copy);
    if (!leaf) drop_raise_guards(copy->block(), /*builtin_only=*/true);
    if (leaf) {
      drop_raise_guards(copy->block());
      jit::UnrollConstantLoops(copy);
      jit::RemoveListMutation(copy);
      jit::ConstantPropagation(copy);
    }
    jit::EliminateDeadCode(copy);
  } catch (const std::exception& e) {
    // Preparation is a simplification; the plain graph is still a faithful input.
    spdlog::debug("preparing a scripted method graph failed ({}); lifting it as it is",
                  first_line(e.what()));
    copy = g;
  }
  prepared_[key] = copy;
  return copy;
}

}  // namespace tt::ts
