// fuse-linear: rewrite the decomposed linear layers tracing leaves behind into F.linear.
//
// Before:
//   %w : Tensor = prim.GetAttr() @value=fc.weight
//   %b : Tensor = prim.GetAttr() @value=fc.bias
//   %wt : Tensor = Tensor.t(%w)
//   %y : Tensor = torch.addmm(%b, %x, %wt, %one, %one)
//   %m : Tensor = torch.matmul(%x2, %wt)
//   %z : Tensor = torch.add(%m, %b, %one)
// After:
//   %y : Tensor = F.linear(%x, %w, %b)
//   %z : Tensor = F.linear(%x2, %w, %b)
//
// Fires when:
// - addmm(bias, x, w.t(), beta=1, alpha=1): F.linear with a 2-d input is defined as exactly this
//   addmm, so the rewrite is exact for every bias addmm accepted;
// - add(matmul(x, w.t()), bias, alpha=1) or add(bias, matmul(...)) (also with mm), where the
//   matmul result has no other use and the bias is known to be 1-d (from its weight or its
//   type): F.linear computes matmul(x, w.t()) + bias for any other input rank;
// - w is a prim.GetAttr weight read (a parameter: F.linear's weight) and `t` is Tensor.t or
//   transpose(0, 1) of it, in the same block as the rewritten node.
// The transpose and matmul nodes are deleted when nothing else uses them. The new node takes the
// place, name, scope and loc of the node it replaces.
//
// Linear: one walk; each match looks at a fixed number of producers.
#include "passes/pass.h"
#include "passes/pass_util.h"

#include "exec/alias.h"
#include "ir/op_table.h"

#include <unordered_set>

namespace tt {
namespace {

std::string linear_op_name() {
  const OpInfo* info = find_op_by_aten("aten::linear");
  return info ? info->name : "F.linear";
}

class LinearFuser {
 public:
  LinearFuser(Graph& g, PassContext& ctx)
      : g_(g), rw_(ctx), linear_(linear_op_name()), mutated_(mutated_memory(g)) {}
  bool changed() const { return changed_; }

  bool visit(Node* n) {
    Match<Fusion> m;
    if (calls_aten(n, "aten::addmm"))
      m = check_addmm(n);
    else if (calls_aten(n, "aten::add"))
      m = check_matmul_add(n);
    return !rw_.run("fuse", n, std::move(m),
                    [&](const Fusion& f) { replace(n, f.x, f.w, f.b, f.rule); });
  }

 private:
  // What replaces the node: F.linear(x, w, b), reported as `rule`.
  struct Fusion {
    Value *x, *w, *b;
    const char* rule;
  };

  // The weight w when t = w.t() / w.transpose(0, 1) and w is a 2-d weight read.
  Value* transposed_weight(Value* t, const Node* at) {
    Node* tn = t->node();
    bool is_t = calls_aten(tn, "aten::t") && tn->num_inputs() == 1;
    if (!is_t && calls_aten(tn, "aten::transpose") && tn->num_inputs() == 3) {
      auto d0 = const_int(tn->input(1));
      auto d1 = const_int(tn->input(2));
      is_t = d0 && d1 &&
             ((*d0 == 0 && *d1 == 1) || (*d0 == 1 && *d1 == 0) || (*d0 == 0 && *d1 == -1) ||
              (*d0 == -1 && *d1 == 0) || (*d0 == -2 && *d1 == -1) || (*d0 == -1 && *d1 == -2));
    }
    if (!is_t) return nullptr;
    if (tn->owning_block() != at->owning_block()) return nullptr;
    Value* w = tn->input(0);
    Node* wn = producer_is(w, "prim.GetAttr");
    if (!wn) return nullptr;
    const Weight* wt = g_.weights().find(wn->weight("value"));
    if (wt && wt->tensor.defined() && wt->tensor.dim() != 2) return nullptr;
    return w;
  }

  bool is_one(const Value* v) {
    auto f = const_float(v);
    return f && *f == 1.0;
  }

  // A 1-d bias (read from its weight, or from its type): adding it never broadcasts the matmul
  // result to a bigger shape, so matmul + bias == F.linear (which adds the bias in place).
  bool is_vector_bias(const Value* b) {
    if (Node* bn = producer_is(b, "prim.GetAttr")) {
      const Weight* bt = g_.weights().find(bn->weight("value"));
      if (bt && bt->tensor.defined()) return bt->tensor.dim() == 1;
    }
    const auto& s = shape_of(b);
    return s && s->size() == 1;
  }

  void replace(Node* old, Value* x, Value* w, Value* b, const char* rule) {
    Node* lin = g_.create(linear_, {x, w, b});
    lin->insert_before(old);
    lin->copy_provenance(old);
    Value* out = lin->add_output(old->output()->type());
    rw_.rewrite(rule, old);
    std::string name = old->output()->name();
    old->output()->replace_all_uses_with(out);
    std::vector<Value*> maybe_dead(old->inputs().begin(), old->inputs().end());
    old->destroy();
    out->set_name(name);
    // The matmul / transpose feeding it go too when nothing else reads them.
    for (Value* v : maybe_dead) destroy_if_dead(v->node());
    changed_ = true;
  }

  void destroy_if_dead(Node* n) {
    if (n->op() == "prim.Param" || n->is("prim.GetAttr") || n->is("prim.Constant")) return;
    if (!(calls_aten(n, "aten::t") || calls_aten(n, "aten::transpose") ||
          calls_aten(n, "aten::matmul") || calls_aten(n, "aten::mm")))
      return;
    for (Value* o : n->outputs())
      if (o->has_uses()) return;
    std::vector<Node*> inputs;
    for (Value* v : n->inputs()) inputs.push_back(v->node());
    n->destroy();
    for (Node* p : inputs) destroy_if_dead(p);
  }

  Match<Fusion> check_addmm(Node* n) {
    // aten::addmm(self, mat1, mat2, beta=1, alpha=1)
    if (n->num_inputs() < 3 || n->num_outputs() != 1) return Reject("unexpected inputs");
    for (size_t i = 3; i < n->num_inputs(); ++i)
      if (!is_one(n->input(i))) return Reject("beta or alpha is not 1");
    Value* w = transposed_weight(n->input(2), n);
    if (!w) return Reject("mat2 is not the transpose of a weight");
    return Fusion{n->input(1), w, n->input(0), "addmm"};
  }

  // Says why for each operand that is a matmul but does not fit, and goes on to the other one.
  Match<Fusion> check_matmul_add(Node* n) {
    // aten::add.Tensor(self, other, alpha=1)
    if (n->num_inputs() < 2 || n->num_outputs() != 1) return {};
    if (n->num_inputs() > 2 && !is_one(n->input(2))) return Reject("alpha is not 1");
    for (int side = 0; side < 2; ++side) {
      Value* mm = n->input(side);
      Value* b = n->input(1 - side);
      Node* mn = mm->node();
      if (!(calls_aten(mn, "aten::matmul") || calls_aten(mn, "aten::mm")) || mn->num_inputs() != 2)
        continue;
      if (!mm->type().is_tensor() && mm->type().kind != Type::Kind::Any) continue;
      if (!has_one_use(mm)) {
        rw_.reject("fuse", n, "the matmul result has other uses");
        continue;
      }
      if (mn->owning_block() != n->owning_block()) continue;
      if (mutated_.contains(mn->input(0))) {
        // F.linear at the add would read x after a write between the matmul and the add.
        rw_.reject("fuse", n, "the matmul's input is written in place");
        continue;
      }
      Value* w = transposed_weight(mn->input(1), n);
      if (!w) {
        rw_.reject("fuse", n, "the matmul's second operand is not the transpose of a weight");
        continue;
      }
      if (!b->type().is_tensor() && b->type().kind != Type::Kind::Any)
        return Reject("bias is not a tensor");
      if (!is_vector_bias(b)) return Reject("bias is not known to be 1-d");
      return Fusion{mn->input(0), w, b, "matmul+add"};
    }
    return {};
  }

  Graph& g_;
  Rewriter rw_;
  std::string linear_;
  MutatedMemory mutated_;  // memory written in place (exec/alias.h)
  bool changed_ = false;
};

}  // namespace

bool run_fuse_linear(Graph& g, PassContext& ctx) {
  LinearFuser f(g, ctx);
  walk_pre(g.block(), [&](Node* n) { return f.visit(n); });
  return f.changed();
}

}  // namespace tt
