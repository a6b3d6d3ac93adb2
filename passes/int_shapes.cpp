// int-shapes: the tracer's shape arithmetic on 0-dim tensors back to Python int arithmetic.
//
// Before (what torch.jit.trace records for `n_h = x.size(2) // 16` and `n_h * n_w`):
//   %10 : int = Tensor.size(%x, %two)
//   %h : Tensor = prim.NumToTensor(%10)
//   %16 : i64[] = prim.Constant[value=tensor<i64[]>[16]]()
//   %n_h : Tensor = torch.floor_divide(%h, %16)
//   %13 : Tensor = torch.mul(%n_h, %n_w)
//   %14 : int = int(%13)
//   %y : Tensor = Tensor.reshape(%z, ... %14 ...)
//   %p : Tensor = torch.pow(%n_h, %half)
// After:
//   %h : int = Tensor.size(%x, %two)
//   %c16 : int = prim.Constant[value=16]()
//   %n_h : int = operator.floordiv(%h, %c16)
//   %13 : int = operator.mul(%n_h, %n_w)
//   %y : Tensor = Tensor.reshape(%z, ... %13 ...)
//   %t : Tensor = prim.NumToTensor(%n_h)
//   %p : Tensor = torch.pow(%t, %half)
//
// Note [Int shapes]
// Tracing turns every Python int that comes from a size into a 0-dim int64 tensor
// (prim.NumToTensor) and the arithmetic on it into tensor ops, converted back with int(...) /
// aten::ScalarImplicit where a size is needed. The Python int ops (operator.*, the ops scripted
// models use: the emitter writes them infix, the interpreter runs them with Python semantics)
// compute the same numbers, so the chain is rewritten when that is exact:
// - int-like tensors: prim.NumToTensor of an int value, a 0-dim int64 tensor constant, and the
//   result of an op rewritten here; every one is a 0-dim int64 tensor holding that int;
// - an op is rewritten only when every operand is an int-like tensor or an int value (a Python
//   int scalar) and at least one is a tensor: the op on 0-dim int64 tensors and int scalars gives
//   a 0-dim int64 tensor (no promotion), holding exactly what the Python int op gives (checked
//   on torch 2.6 for all sign combinations, division by zero raising in both):
//     add / sub / rsub (alpha 1)  -> a + b, a - b, b - a
//     mul, neg                    -> a * b, -a
//     floor_divide, div(floor)    -> a // b (torch rounds integer floor_divide down since 1.13)
//     div(trunc)                  -> a // b when both are known non-negative (sizes, constants
//                                    >= 0, and +, *, // of such; % by such), where trunc = floor
//     remainder                   -> a % b (both take the divisor's sign)
//   Not rewritten: true division (a float tensor), alpha other than 1, float or bool sources and
//   scalars (a 0-dim int tensor times a Python float is a float32 tensor, the Python product a
//   float64), int tensors of other dtypes or ranks.
// - uses of a rewritten tensor: int(...) / aten::ScalarImplicit take the int itself (the node
//   goes); float(...) / bool(...) read the int instead (same number); any other user of a
//   rewritten op gets a prim.NumToTensor of the int inserted right before it, so where a tensor is
//   really used it is the same 0-dim int64 tensor. A source prim.NumToTensor stays for the users
//   that still read it (all of them when nothing rewritten reads it).
// - names and provenance: the int takes the tensor's name (`n_h`, `h`) unless it has a name of its
//   own; new nodes copy scope and loc from the node they replace. The pass removes the nodes it
//   made dead (rewritten ops, sources and int constants nothing reads any more).
//
// Linear: one walk in program order (operands are settled before their users), then one pass
// over the rewritten values, last first.
#include "passes/pass.h"
#include "passes/pass_util.h"

#include "ir/op_table.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

namespace tt {
namespace {

const char* kRule = "int-arith";

// The IR op for a Python int operator, through the op table (the row of aten::floordiv.int ...).
std::string int_op(const char* aten_overload, const char* fallback) {
  const OpInfo* info = find_op_by_aten(aten_overload);
  return info ? info->name : fallback;
}

bool is_int(const Value* v) { return v->type().kind == Type::Kind::Int; }

bool anonymous(const std::string& name) {
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(uint8_t(c)); });
}

// True when the int value v is known to be >= 0: a constant, a size/numel/dim/len, or +, *, // of
// such values, or % by such a value (Python's % takes the divisor's sign).
bool nonnegative(const Value* v, int depth = 0) {
  if (auto c = const_int(v)) return *c >= 0;
  if (const AttrValue* c = v->constant(); c && std::holds_alternative<at::Tensor>(*c)) {
    const at::Tensor& t = std::get<at::Tensor>(*c);  // an int-like 0-dim int64 constant
    return t.defined() && t.dim() == 0 && t.item<int64_t>() >= 0;
  }
  if (depth > 64 || !is_int(v)) return false;
  const Node* p = v->node();
  if (calls_aten(p, "aten::size") || calls_aten(p, "aten::numel") || calls_aten(p, "aten::dim") ||
      calls_aten(p, "aten::len"))
    return true;
  if (p->num_inputs() != 2 || p->op().rfind("operator.", 0) != 0) return false;
  if (calls_aten(p, "aten::add") || calls_aten(p, "aten::mul") || calls_aten(p, "aten::floordiv"))
    return nonnegative(p->input(0), depth + 1) && nonnegative(p->input(1), depth + 1);
  if (calls_aten(p, "aten::remainder")) return nonnegative(p->input(1), depth + 1);
  return false;
}

class IntShapes {
 public:
  IntShapes(Graph& g, PassContext& ctx) : g_(g), rw_(ctx) {}
  bool changed() const { return changed_; }

  // Returns false when n was destroyed.
  bool visit(Node* n) {
    if (n->num_outputs() != 1 || !n->blocks().empty()) return true;
    if (calls_aten(n, "aten::Int") || calls_aten(n, "aten::ScalarImplicit")) return sink(n);
    if (calls_aten(n, "aten::Float") || calls_aten(n, "aten::Bool")) {
      if (n->num_inputs() == 1 && !is_int(n->input(0)) && int_like(n->input(0))) {
        rw_.rewrite("int-conversion", n);
        n->replace_input(0, take_int(n->input(0)));
        changed_ = true;
      }
      return true;
    }
    const std::string& op = n->op();
    if (op.rfind("torch.", 0) != 0 && op.rfind("Tensor.", 0) != 0) return true;
    rw_.run(kRule, n, check(n), [&](Plan& p) { apply(n, p); });
    return true;
  }

  // Gives the remaining users of each rewritten op's tensor a prim.NumToTensor of its int, moves
  // the name over and removes what is dead. Last rewritten first, so a node is gone before the
  // values it read are looked at. A source prim.NumToTensor is already the tensor of its int:
  // it stays for the users that still read it.
  void finish() {
    for (auto it = rewritten_.rbegin(); it != rewritten_.rend(); ++it) {
      Value* t = *it;
      Value* iv = int_of_.at(t);
      bool source = t->node()->is("prim.NumToTensor");
      std::vector<Node*> users;
      for (const Use& u : t->uses())
        if (std::find(users.begin(), users.end(), u.user) == users.end()) users.push_back(u.user);
      for (Node* u : source ? std::vector<Node*>{} : users) {
        Node* nt = g_.create("prim.NumToTensor", {iv}, 0);
        nt->add_output(t->type());
        nt->copy_provenance(t->node());
        Block* b = u->owning_block();
        if (b && u == b->return_node())
          b->append(nt);
        else
          nt->insert_before(u);
        u->replace_input_with(t, nt->output());
      }
      if (anonymous(iv->name()) && !anonymous(t->name())) {
        std::string name = t->name();
        t->set_name("");
        iv->set_name(name);
      }
      if (!t->has_uses()) t->node()->destroy();
    }
    for (auto& [tensor_const, int_const] : int_consts_) {
      if (!int_const->has_uses()) int_const->node()->destroy();
      if (!tensor_const->has_uses()) tensor_const->node()->destroy();
    }
  }

 private:
  struct Plan {
    std::string op;
    std::vector<Value*> ints;  // the operands (int-like tensors or ints), in the int op's order
  };

  // Whether v is an int-like tensor (Note [Int shapes]); nothing changes.
  bool int_like(Value* v) const {
    if (int_of_.count(v) || int_consts_.count(v)) return true;
    if (Node* p = producer_is(v, "prim.NumToTensor"))
      return p->num_inputs() == 1 && is_int(p->input(0));
    const AttrValue* c = v->constant();
    if (!c || !std::holds_alternative<at::Tensor>(*c)) return false;
    const at::Tensor& t = std::get<at::Tensor>(*c);
    return t.defined() && t.dim() == 0 && t.scalar_type() == at::kLong && !t.is_quantized();
  }

  // The int an int-like tensor holds (or an int value itself), made available where v is
  // defined: a source prim.NumToTensor is recorded as rewritten, a 0-dim constant gets an int
  // constant beside it.
  Value* take_int(Value* v) {
    if (is_int(v)) return v;
    if (auto it = int_of_.find(v); it != int_of_.end()) return it->second;
    if (auto it = int_consts_.find(v); it != int_consts_.end()) return it->second;
    if (Node* p = producer_is(v, "prim.NumToTensor")) {
      int_of_[v] = p->input(0);
      rewritten_.push_back(v);
      return p->input(0);
    }
    Node* k = g_.create("prim.Constant", {}, 0);
    k->attrs().set("value", AttrValue(std::get<at::Tensor>(*v->constant()).item<int64_t>()));
    k->add_output(Type::of(Type::Kind::Int));
    k->copy_provenance(v->node());
    k->insert_after(v->node());
    int_consts_[v] = k->output();
    return k->output();
  }

  // int(t) / ScalarImplicit(t) of an int-like t: its users read the int.
  bool sink(Node* n) {
    if (n->num_inputs() != 1 || is_int(n->input(0)) || !int_like(n->input(0))) return true;
    Value* iv = take_int(n->input(0));
    rw_.rewrite("int-conversion", n);
    n->output()->replace_all_uses_with(iv);
    n->destroy();
    changed_ = true;
    return false;
  }

  Match<Plan> check(Node* n) {
    struct Kind {
      const char* aten;
      size_t operands;
    };
    static const Kind kinds[] = {
        {"aten::add", 2}, {"aten::sub", 2}, {"aten::rsub", 2},         {"aten::mul", 2},
        {"aten::div", 2}, {"aten::neg", 1}, {"aten::floor_divide", 2}, {"aten::remainder", 2}};
    const Kind* kind = nullptr;
    for (const Kind& k : kinds)
      if (calls_aten(n, k.aten)) kind = &k;
    if (!kind || n->num_inputs() < kind->operands) return {};
    // Only chains that start at an int-like tensor are this pass's business.
    bool any_tensor = false;
    for (size_t i = 0; i < kind->operands; ++i)
      any_tensor |= !is_int(n->input(i)) && int_like(n->input(i));
    if (!any_tensor) return {};
    std::vector<Value*> ints;  // the operands; take_int gives their ints once the check passed
    for (size_t i = 0; i < kind->operands; ++i) {
      Value* v = n->input(i);
      if (!is_int(v) && !int_like(v))
        return Reject("an operand is not a 0-dim int64 tensor or an int");
      ints.push_back(v);
    }
    std::string base = kind->aten;
    size_t extra = n->num_inputs() - kind->operands;
    if (base == "aten::add" || base == "aten::sub" || base == "aten::rsub") {
      if (extra > 1 || (extra == 1 && const_int(n->input(2)) != std::optional<int64_t>(1)))
        return Reject("alpha is not 1");
      if (base == "aten::rsub") std::swap(ints[0], ints[1]);
      return Plan{base == "aten::add" ? int_op("aten::add.int", "operator.add")
                                      : int_op("aten::sub.int", "operator.sub"),
                  ints};
    }
    if (extra != 0 && base != "aten::div") return Reject("unexpected extra inputs");
    if (base == "aten::mul") return Plan{int_op("aten::mul.int", "operator.mul"), ints};
    if (base == "aten::neg") return Plan{int_op("aten::neg.int", "operator.neg"), ints};
    if (base == "aten::remainder") return Plan{int_op("aten::remainder.int", "operator.mod"), ints};
    std::string floordiv = int_op("aten::floordiv.int", "operator.floordiv");
    if (base == "aten::floor_divide") return Plan{floordiv, ints};
    // aten::div: only with a rounding mode (true division gives a float tensor).
    if (extra != 1) return Reject("true division gives a float");
    const AttrValue* mode = n->input(2)->constant();
    if (!mode || !std::holds_alternative<std::string>(*mode))
      return Reject("true division gives a float");
    const std::string& m = std::get<std::string>(*mode);
    if (m == "floor") return Plan{floordiv, ints};
    if (m == "trunc" && nonnegative(int_of(ints[0])) && nonnegative(int_of(ints[1])))
      return Plan{floordiv, ints};
    return Reject("trunc rounding of a value that may be negative");
  }

  // The int an operand already has (an int, a rewritten result, a source's int), or the
  // operand itself for a 0-dim constant not taken yet (nonnegative() reads its value).
  const Value* int_of(Value* v) const {
    if (is_int(v)) return v;
    if (auto it = int_of_.find(v); it != int_of_.end()) return it->second;
    if (auto it = int_consts_.find(v); it != int_consts_.end()) return it->second;
    if (Node* p = producer_is(v, "prim.NumToTensor")) return p->input(0);
    return v;
  }

  void apply(Node* n, const Plan& p) {
    std::vector<Value*> ints;
    for (Value* v : p.ints) ints.push_back(take_int(v));
    Node* m = g_.create(p.op, ints, 0);
    m->add_output(Type::of(Type::Kind::Int));
    m->copy_provenance(n);
    m->insert_before(n);
    int_of_[n->output()] = m->output();
    rewritten_.push_back(n->output());
    changed_ = true;
  }

  Graph& g_;
  Rewriter rw_;
  bool changed_ = false;
  // int-like tensor -> its int; rewritten_ lists the keys from sources and rewritten ops in the
  // order they were found (int constants are in int_consts_ only).
  std::unordered_map<Value*, Value*> int_of_;
  std::vector<Value*> rewritten_;
  std::unordered_map<Value*, Value*> int_consts_;  // 0-dim int64 constant -> int constant
};

}  // namespace

bool run_int_shapes(Graph& g, PassContext& ctx) {
  IntShapes pass(g, ctx);
  walk_pre(g.block(), [&](Node* n) { return pass.visit(n); });
  pass.finish();
  return pass.changed();
}

}  // namespace tt
