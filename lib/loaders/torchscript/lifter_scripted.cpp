// The TorchScript lifter (lifter.h): scripted method graphs (Note [Scripted method graphs]).
//
// Note [Scripted method graphs]
// A method of a torch.jit.script'ed module still calls TorchScript functions (F.relu, ...), reads
// configuration attributes (self.stride, self.training, self.use_res_connect) and branches on
// them. Before lifting such a method, the lifter works on a copy of its graph (shared by the
// instances whose attributes agree, Note [Sharing prepared graphs]): non-tensor attributes
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

#include "loaders/loader.h"

#include <spdlog/spdlog.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/loop_unrolling.h>
#include <torch/csrc/jit/passes/remove_mutation.h>

#include <cstring>
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

// Note [Sharing prepared graphs]
// Preparing a scripted method graph (Note [Scripted method graphs]) copies, inlines and folds
// it, which costs far more than lifting the result; a deep model has hundreds of instances of
// one layer type, whose methods share one graph. What preparation makes of a graph depends only
// on that graph and on the attributes fold_attrs reads from the instance (the values it turns
// into constants, and which attributes are modules, tensors/objects or absent). So each prepared
// graph is kept with those reads, and an instance whose own attributes give the same reads
// (same kind, same value: doubles compared bit for bit, containers element by element; any
// other kind of value never matches) reuses it. The lifter only reads the graph and binds self
// and the inputs per call, so instances can share it. Preparations that failed (the plain graph
// is lifted instead) are kept per instance, as before.

// Note [Constant propagation to a fixpoint]
// LibTorch's ConstantPropagation builds its alias analysis once, on the graph as it was before the
// pass, and queries it for nodes it has changed since: the constants it inserts are new Values,
// and an If it inlined or a loop it removed was freed. When a new constant lands at the address
// of a freed Value, the analysis answers for the freed one ("has writers") and the node using the
// constant is not folded. So which folds one run makes depends on where malloc puts things: the
// same archive converted twice gave different code and reports (in a Swin block,
// `window_size[0] * window_size[1]` folded to 16 by LibTorch in some runs, by the lifter in
// others, with another location and other value numbers). Running the pass again until it
// changes nothing makes the result deterministic: a run that changes nothing has freed nothing,
// so its analysis was exact and nothing foldable is left. RemoveListMutation queries its analysis
// the same way; where it runs, the two repeat together until neither changes anything.
static void propagate_constants(std::shared_ptr<jit::Graph>& g, bool remove_list_mutation) {
  for (int round = 0; round < 16; ++round) {
    bool changed = remove_list_mutation && jit::RemoveListMutation(g);
    if (!jit::ConstantPropagation(g) && !changed) break;
  }
}

// What `owner`'s attribute at `path` is, as fold_attrs sees it.
Lifter::AttrRead Lifter::read_attr(const jit::Module& owner, std::vector<std::string> path) {
  AttrRead r;
  jit::Module m = owner;
  for (size_t i = 0; i < path.size(); ++i) {
    if (!m.hasattr(path[i])) {
      r.what = kAttrAbsent;
      break;
    }
    IValue v = m.attr(path[i]);
    if (i + 1 < path.size()) {
      if (!v.isModule()) {  // cannot happen for one class type; never matches a recorded read
        r.what = kAttrAbsent;
        r.value = IValue(static_cast<int64_t>(i));
        break;
      }
      m = jit::Module(v.toObject());
      continue;
    }
    if (v.isModule())
      r.what = kAttrModule;
    else if (v.isTensor() || v.isObject())
      r.what = kAttrKept;
    else
      r.value = std::move(v);
  }
  r.path = std::move(path);
  return r;
}

bool Lifter::same_attr_value(const IValue& a, const IValue& b) {
  if (a.tagKind() != b.tagKind()) return false;
  if (a.isNone()) return true;
  if (a.isBool()) return a.toBool() == b.toBool();
  if (a.isInt()) return a.toInt() == b.toInt();
  if (a.isDouble()) {
    double x = a.toDouble(), y = b.toDouble();
    return std::memcmp(&x, &y, sizeof x) == 0;
  }
  if (a.isString()) return a.toStringRef() == b.toStringRef();
  if (a.isDevice()) return a.toDevice() == b.toDevice();
  auto same_elems = [](const auto& xs, const auto& ys) {
    if (xs.size() != ys.size()) return false;
    for (size_t i = 0; i < xs.size(); ++i)
      if (!same_attr_value(xs[i], ys[i])) return false;
    return true;
  };
  if (a.isTuple()) return same_elems(a.toTupleRef().elements(), b.toTupleRef().elements());
  if (a.isList()) return same_elems(a.toListRef(), b.toListRef());
  return false;
}

bool Lifter::reads_match(const std::vector<AttrRead>& reads, const jit::Module& self) {
  for (const AttrRead& r : reads) {
    AttrRead now = read_attr(self, r.path);
    if (now.what != r.what || (r.what == kAttrValue && !same_attr_value(now.value, r.value)) ||
        (r.what == kAttrAbsent && !same_attr_value(now.value, r.value)))
      return false;
  }
  return true;
}

// Non-tensor attributes of self (and of its submodules, reached through GetAttr chains) become
// constants. `paths` holds each owner's path from self; every attribute looked at is added to
// `reads` (Note [Sharing prepared graphs]).
void Lifter::fold_attrs(jit::Graph& g, jit::Block* b,
                        std::unordered_map<const jit::Value*, jit::Module>& owners,
                        std::unordered_map<const jit::Value*, std::vector<std::string>>& paths,
                        std::vector<AttrRead>& reads) const {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;
    for (jit::Block* sub : n->blocks()) fold_attrs(g, sub, owners, paths, reads);
    if (n->kind() != c10::prim::GetAttr) continue;
    auto o = owners.find(n->input(0));
    if (o == owners.end()) continue;
    std::string name = n->s(c10::attr::name);
    // An attribute some method writes is read while lifting, in program order (Note [Module
    // attributes written in forward]); which ones they are depends on the type only.
    std::pair<std::string, std::string> attr{type_key(n->input(0)->type()), name};
    if (written_attrs_.count(attr) && !warn_only_attrs_.count(attr)) continue;
    std::vector<std::string> path = paths.at(n->input(0));
    path.push_back(name);
    AttrRead read = read_attr(o->second, {name});
    read.path = path;
    reads.push_back(read);
    if (read.what == kAttrAbsent || read.what == kAttrKept) continue;
    IValue v = o->second.attr(name);
    if (v.isModule()) {
      owners.emplace(n->output(), jit::Module(v.toObject()));
      paths.emplace(n->output(), std::move(path));
      continue;
    }
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
  auto unprep = per_instance_.find(key);
  if (unprep != per_instance_.end()) return unprep->second;
  std::vector<PreparedGraph>& shared = prepared_[{g.get(), leaf}];
  for (const PreparedGraph& pg : shared)
    if (reads_match(pg.reads, self)) return pg.graph;
  ++loader_op_counts().scripted_graphs_prepared;
  std::shared_ptr<jit::Graph> copy = g->copy();
  std::vector<AttrRead> reads;
  try {
    if (leaf)
      jit::Inline(*copy);
    else
      inline_functions(*copy);
    std::unordered_map<const jit::Value*, jit::Module> owners;
    std::unordered_map<const jit::Value*, std::vector<std::string>> paths;
    auto st = copy->inputs().empty() ? nullptr : copy->inputs()[0]->type()->cast<c10::ClassType>();
    if (st && st->is_module()) {
      owners.emplace(copy->inputs()[0], self);
      paths.emplace(copy->inputs()[0], std::vector<std::string>{});
    }
    // Note [Comparing a value with itself]: before the attributes become constants that
    // ConstantPropagation would compare by value.
    if (!fold_jit_self_comparisons(copy->block())) {
      per_instance_[key] = g;
      return g;
    }
    fold_attrs(*copy, copy->block(), owners, paths, reads);
    // Note [Constant propagation to a fixpoint]
    propagate_constants(copy, /*remove_list_mutation=*/false);
    if (!leaf) drop_raise_guards(copy->block(), /*builtin_only=*/true);
    if (leaf) {
      drop_raise_guards(copy->block());
      jit::UnrollConstantLoops(copy);
      propagate_constants(copy, /*remove_list_mutation=*/true);
    }
    jit::EliminateDeadCode(copy);
  } catch (const std::exception& e) {
    // Preparation is a simplification; the plain graph is still a faithful input.
    spdlog::debug("preparing a scripted method graph failed ({}); lifting it as it is",
                  first_line(e.what()));
    per_instance_[key] = g;
    return g;
  }
  // A handful of variants per graph at most in real models; the bound keeps the lookup O(1).
  if (shared.size() < 16)
    shared.push_back(PreparedGraph{std::move(reads), copy});
  else
    per_instance_[key] = copy;
  return copy;
}

}  // namespace tt::ts
