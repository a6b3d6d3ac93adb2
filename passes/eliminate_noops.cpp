// eliminate-noops: remove nodes that return their input unchanged.
//
// Before:
//   %d : f32[1,8] = nn.Dropout[p=0.5, inplace=false](%x) #module=drop
//   %e : f32[1,8] = Tensor.detach(%d)
//   %f : f32[1,8] = Tensor.to(%e, %f32, %false, %false, %none)
//   %g : f32[1,8] = Tensor.view(%f, %shape)            // %shape = [1,8]
//   return %g
// After:
//   return %x
//
// Each rule replaces every use of the node's result by its input and deletes the node:
// - nn.Dropout* (and other dropout modules) without `training=true`, and F.dropout /
//   feature_dropout / alpha_dropout with `train` a constant false: identity in eval;
// - nn.Identity with one input;
// - Tensor.detach: no autograd in the generated inference code;
// - Tensor.contiguous(memory_format=contiguous_format) only where that is provably harmless:
//   nothing downstream depends on the memory layout (Note [Where contiguous matters]), and no
//   value of its memory is written in place (contiguous may copy; without it the write would
//   reach the input);
// - Tensor.to(dtype) / Tensor.type_as(other) when the input's dtype is known and equal to the
//   target, with copy=false and memory_format None/preserve_format (tinytrace models run on CPU,
//   so .to(other) does not move devices);
// - Tensor.view / Tensor.reshape to the shape the input already has, when the input's shape is
//   complete and the target is known (a complete output type, or a constant size list).
//
// Note [Where contiguous matters]
// Most ops accept any strides, but many also pass them on: an elementwise op on a permuted tensor
// returns a permuted tensor (PyTorch keeps the input's layout), as do views, clone() and the
// activations. So the check follows every use, transitively through such ops, and keeps the
// contiguous() when it reaches a layout-sensitive one: Tensor.view / view_as / as_strided /
// is_contiguous / stride, an op tinytrace does not know (aten:: fallbacks), a prim op, a block or
// graph output (the value escapes: the caller may view it), or an in-place write. It stops at
// results whose layout never depends on the input's: contiguous() itself, the matrix products
// (mm, bmm, matmul, linear, addmm, nn.Linear) and non-tensor results (sizes, dtypes). YOLOv5's
// head, x.permute(...).contiguous() then sigmoid() then view(), keeps its contiguous().
//
// Linear in the graph for each contiguous node (its downstream cone, each node visited once).
#include "passes/pass.h"
#include "passes/pass_util.h"

#include "exec/alias.h"
#include "ir/op_table.h"

#include <unordered_set>

namespace tt {
namespace {

bool is_dropout_module(const Node* n) {
  return is_module_op(n) && n->op().find("Dropout") != std::string::npos;
}

// The check: the input to forward, named by its rule; nothing when `n` is not a no-op
// candidate.
class NoopMatcher {
 public:
  explicit NoopMatcher(MutatedMemory mutated) : mutated_(std::move(mutated)) {}

  Match<Value*> match(Node* n, const char*& rule) {
    if (n->num_outputs() != 1 || n->num_inputs() == 0 || !n->blocks().empty()) return {};
    if (is_module_op(n)) {
      if (is_dropout_module(n)) {
        rule = "dropout";
        if (n->attrs().get_bool("training", false)) return Reject("module is in training mode");
        return n->input(0);
      }
      if (n->is("nn.Identity")) {
        rule = "identity";
        if (n->num_inputs() != 1) return Reject("identity with several inputs");
        return n->input(0);
      }
      return {};
    }
    if (calls_aten(n, "aten::dropout") || calls_aten(n, "aten::feature_dropout") ||
        calls_aten(n, "aten::alpha_dropout") || calls_aten(n, "aten::feature_alpha_dropout")) {
      rule = "dropout";
      auto train = n->num_inputs() > 2 ? const_bool(n->input(2)) : std::nullopt;
      if (!train || *train) return Reject("train is not a constant false");
      return n->input(0);
    }
    if (calls_aten(n, "aten::detach")) {
      rule = "detach";
      return n->input(0);
    }
    if (calls_aten(n, "aten::contiguous")) return match_contiguous(n, rule);
    if (calls_aten(n, "aten::to") || calls_aten(n, "aten::type_as")) return match_to(n, rule);
    if (calls_aten(n, "aten::view") || calls_aten(n, "aten::reshape"))
      return match_reshape(n, rule);
    return {};
  }

 private:
  // Why `user` depends on the layout of its input (nullptr: it does not).
  static const char* layout_sensitive(const Node* user) {
    if (user->op().rfind("prim.", 0) == 0) return "the tensor escapes (returned or stored)";
    if (is_aten_fallback(user->op())) return "an op tinytrace does not know reads it";
    if (!written_inputs(*user).empty()) return "it is written in place";
    for (const char* b :
         {"aten::view", "aten::view_as", "aten::as_strided", "aten::is_contiguous", "aten::stride"})
      if (calls_aten(user, b)) return "a view (or stride read) needs a contiguous tensor";
    return nullptr;
  }

  // Results whose layout never depends on the input's (Note [Where contiguous matters]).
  static bool layout_fresh(const Node* user) {
    if (user->is("nn.Linear")) return true;
    for (const char* b : {"aten::contiguous", "aten::mm", "aten::bmm", "aten::matmul",
                          "aten::linear", "aten::addmm", "aten::size", "aten::dim", "aten::numel"})
      if (calls_aten(user, b)) return true;
    for (const Value* o : user->outputs())
      if (o->type().is_tensor() || o->type().kind == Type::Kind::Any) return false;
    return true;  // sizes, dtypes, numbers
  }

  // "" when nothing downstream of `v` depends on its layout; otherwise why.
  static std::string layout_dependence(const Value* v) {
    std::vector<const Value*> todo = {v};
    std::unordered_set<const Node*> seen;
    while (!todo.empty()) {
      const Value* x = todo.back();
      todo.pop_back();
      for (const Use& u : x->uses()) {
        const Node* user = u.user;
        if (!seen.insert(user).second) continue;
        if (const char* why = layout_sensitive(user))
          return std::string(why) + " (" + user->op() + ")";
        if (layout_fresh(user)) continue;
        for (const Value* o : user->outputs()) todo.push_back(o);
      }
    }
    return "";
  }

  Match<Value*> match_contiguous(Node* n, const char*& rule) {
    rule = "contiguous";
    if (n->num_inputs() > 1) {
      const Value* mf = n->input(1);
      auto code = const_int(mf);
      if (!const_is_none(mf) && !(code && *code == 0))
        return Reject("memory_format is not contiguous_format");
    }
    if (mutated_.contains(n->output()) || mutated_.contains(n->input(0)))
      return Reject("its memory is written in place");
    std::string why = layout_dependence(n->output());
    if (!why.empty()) return Reject(std::move(why));
    return n->input(0);
  }

  Match<Value*> match_to(Node* n, const char*& rule) {
    rule = "to-same-dtype";
    Value* self = n->input(0);
    if (!self->type().is_tensor() || self->type().dtype == DType::Unknown)
      return Reject("input dtype unknown");
    if (n->num_inputs() < 2) return Reject("unexpected inputs");
    Value* target = n->input(1);
    std::optional<DType> to;
    if (target->type().is_tensor())
      to = target->type().dtype == DType::Unknown ? std::nullopt
                                                  : std::optional<DType>(target->type().dtype);
    else
      to = const_dtype(target);
    if (!to) return Reject("target dtype unknown");
    if (*to != self->type().dtype) return Reject("dtype changes");
    if (calls_aten(n, "aten::type_as"))
      return n->num_inputs() == 2 ? Match<Value*>(self) : Match<Value*>();
    // aten::to.dtype / to.other: (self, dtype|other, non_blocking, copy, memory_format)
    if (n->num_inputs() > 3) {
      auto copy = const_bool(n->input(3));
      if (!copy || *copy) return Reject("copy is not a constant false");
    }
    if (n->num_inputs() > 4) {
      const Value* mf = n->input(4);
      auto code = const_int(mf);
      if (!const_is_none(mf) && !(code && *code == 1))
        return Reject("memory_format is neither None nor preserve_format");
    }
    if (n->num_inputs() > 5) return Reject("unexpected inputs (device overload)");
    return self;
  }

  Match<Value*> match_reshape(Node* n, const char*& rule) {
    rule = "same-shape";
    Value* self = n->input(0);
    if (n->num_inputs() != 2) return Reject("unexpected inputs");
    if (!has_complete_shape(self)) return Reject("input shape not fully known");
    const auto& in_shape = *shape_of(self);
    const Value* size = n->input(1);
    if (size->type().kind == Type::Kind::ScalarType || const_dtype(size))
      return Reject("view(dtype) reinterprets the data");
    if (has_complete_shape(n->output())) {
      if (*shape_of(n->output()) != in_shape) return Reject("shape changes");
      return self;
    }
    const AttrValue* c = size->constant();
    const auto* dims = c ? std::get_if<std::vector<int64_t>>(c) : nullptr;
    if (!dims) return Reject("target shape unknown");
    if (dims->size() != in_shape.size()) return Reject("rank changes");
    int unknown = 0;
    for (size_t i = 0; i < dims->size(); ++i) {
      if ((*dims)[i] == -1) {
        ++unknown;
        continue;
      }
      if ((*dims)[i] != in_shape[i]) return Reject("shape changes");
    }
    // With one -1 and every other dim equal, the -1 is the input's dim too (when numel > 0).
    if (unknown > 1) return Reject("several -1 dims");
    for (int64_t d : in_shape)
      if (d == 0 && unknown) return Reject("-1 with an empty tensor is ambiguous");
    return self;
  }

  MutatedMemory mutated_;  // memory written in place (exec/alias.h)
};

}  // namespace

bool run_eliminate_noops(Graph& g, PassContext& ctx) {
  bool changed = false;
  NoopMatcher m(mutated_memory(g));
  Rewriter rw(ctx);
  walk_pre(g.block(), [&](Node* n) {
    const char* rule = "";
    Match<Value*> found = m.match(n, rule);  // sets `rule`
    return !rw.run(rule, n, std::move(found), [&](Value* src) {
      rw.rewrite(rule, n);
      n->output()->replace_all_uses_with(src);
      n->destroy();
      changed = true;
    });
  });
  return changed;
}

}  // namespace tt
