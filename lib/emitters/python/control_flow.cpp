// The Python emitter's control flow: prim.If as if/elif/else and prim.Loop as for/while.
#include "emitters/python/emitter.h"
#include "ir/match.h"
#include "passes/pass_util.h"

#include <limits>

namespace tt::pyemit {

// Note [Control flow in Python]
// - prim.If is `if cond:` / `else:`; each branch ends by assigning its results to the If's
//   output variables (one parallel assignment). A value made in a branch only to be returned
//   takes the output's variable directly (`y = F.relu(x)` rather than `r = ...; y = r`).
//   An empty then-branch gives `if not cond:`, an else-branch holding one if statement `elif`.
// - prim.Loop: one variable per loop-carried value, shared by the initial value, the block
//   argument, the value returned at the end of an iteration and the Loop's output. It reuses
//   the initial value's variable when nothing else reads that value. Forms: trip count with a
//   constant-true condition -> `for i in range(n):` (`_` when i is unused); no trip count
//   (None or INT64_MAX) -> `while cond:` with the condition variable re-assigned at the end of
//   the body; both -> `for` with `if not cond: break`.
// - The carried variables are rebound by one parallel assignment at the end of the body
//   (`a, b = b, a` swaps correctly). A returned value takes its carried variable directly only
//   when nothing reads the old value after it is made (can_take_loop_var); values a nested
//   if/loop writes are never bound early into a carried variable.
// - Block-local values keep their own unique names; Python scoping is per function, so a name
//   defined in a branch is never read outside it (the IR does not allow it).

// Emits a block's nodes into their own lines (indented by the caller).
std::vector<std::string> PyEmitter::emit_block(const Block& b) {
  std::vector<std::string> lines;
  plan_inline(b);
  for (Node* n = b.front(); n; n = n->next()) emit_node(*n, lines);
  return lines;
}

void PyEmitter::append_indented(const std::vector<std::string>& lines,
                                std::vector<std::string>& out) {
  for (const auto& l : lines) out.push_back("    " + l);
}

// A value made by a node directly in `b` and returned once by b: it may be computed straight
// into the variable the return goes to (its other readers in b come after it is made, so they
// read that variable).
bool PyEmitter::returned_once(const Block& b, const Value* v) const {
  const Node* def = v->node();
  if (!def || def->owning_block() != &b || def == b.param_node() || preferred_.count(v) ||
      v->constant())
    return false;
  size_t returns = 0;
  for (const Use& u : v->uses()) returns += u.user == b.return_node();
  return returns == 1;
}

// A loop's continue condition, looking through a `bool(t)` that is written as `t`.
Value* PyEmitter::condition_source(Value* v) {
  Node* p = v->node();
  if (p && p->is("bool") && p->num_inputs() == 1 && is_condition_only(v) &&
      p->input(0)->num_uses() == 1 && p->input(0)->node() &&
      p->input(0)->node()->owning_block() == p->owning_block())
    return p->input(0);
  return v;
}

// Used once, as the condition of an if or a loop (the value is only ever tested for truth).
bool PyEmitter::is_condition_only(const Value* v) {
  if (v->num_uses() != 1) return false;
  const Use& u = v->uses()[0];
  if (u.user->is("prim.If")) return u.index == 0;
  if (u.user->is("prim.Loop")) return u.index == 1;
  const Block* b = u.user->owning_block();
  return u.index == 0 && b && u.user == b->return_node() && b->owning_node() &&
         b->owning_node()->is("prim.Loop");
}

void PyEmitter::emit_if(const Node& n, std::vector<std::string>& body) {
  Expr cond = expr(n.input(0));
  std::vector<std::string> names(n.num_outputs());
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    Value* o = n.output(i);
    if (!o->has_uses()) {
      expr_[o] = Expr{"None"};
      continue;
    }
    std::string hint = "result";
    for (const auto& b : n.blocks()) {
      const std::string& r = b->outputs()[i]->name();
      if (good_name(r)) {
        hint = r;
        break;
      }
    }
    names[i] = bind_name(o, hint);
  }
  std::vector<std::string> branch[2];
  for (size_t bi = 0; bi < 2; ++bi) {
    const Block& b = *n.block(bi);
    for (size_t i = 0; i < names.size(); ++i)
      // A loop variable is still read in the branch until its end: never bind it early.
      if (!names[i].empty() && !loop_vars_.count(names[i]) && returned_once(b, b.outputs()[i]))
        preferred_[b.outputs()[i]] = names[i];
    branch[bi] = emit_block(b);
    std::vector<std::string> rhs;
    for (size_t i = 0; i < names.size(); ++i)
      rhs.push_back(names[i].empty() ? "" : expr(b.outputs()[i]).text);
    std::string a = parallel_assign(names, rhs);
    if (!a.empty()) branch[bi].push_back(a);
  }
  if (branch[0].empty() && !branch[1].empty()) {
    body.push_back("if " + not_expr(cond) + ":");
    append_indented(branch[1], body);
    return;
  }
  body.push_back("if " + cond.text + ":");
  if (branch[0].empty()) branch[0].push_back("pass");
  append_indented(branch[0], body);
  if (branch[1].empty()) return;
  // else: a single if statement -> elif
  bool single_if = branch[1][0].rfind("if ", 0) == 0;
  for (size_t i = 1; i < branch[1].size() && single_if; ++i) {
    const std::string& l = branch[1][i];
    single_if = l.rfind("    ", 0) == 0 || l == "else:" || l.rfind("elif ", 0) == 0;
  }
  if (single_if) {
    body.push_back("el" + branch[1][0]);
    body.insert(body.end(), branch[1].begin() + 1, branch[1].end());
    return;
  }
  body.push_back("else:");
  append_indented(branch[1], body);
}

// "h_2" and "h" are versions of one variable.
bool PyEmitter::same_stem(const std::string& a, const std::string& b) {
  auto stem = [](const std::string& s) {
    size_t u = s.find_last_of('_');
    if (u != std::string::npos && u + 1 < s.size() && all_digits(s.substr(u + 1)))
      return s.substr(0, u);
    return s;
  };
  return stem(a) == stem(b);
}

std::optional<bool> PyEmitter::const_true_false(const Value* v) {
  const AttrValue* c = v->constant();
  if (!c) return std::nullopt;
  if (auto* b = std::get_if<bool>(c)) return *b;
  if (auto* i = std::get_if<int64_t>(c)) return *i != 0;
  return std::nullopt;
}

// Whether `ret`, returned by loop body `b` for the carried argument `param`, can be computed
// straight into the carried variable: every read of the old value comes before (or is the
// node computing it, whose inputs are read first), and none is through an inlined list/tuple
// expression or an inline value (Note [Expressions written inline]), which would be evaluated
// later. A nested loop assigns its variables before it runs, so it must not read the old value
// at all.
bool PyEmitter::can_take_loop_var(const Block& b, const Value* param, const Value* ret) const {
  if (!returned_once(b, ret)) return false;
  const Node* def = ret->node();
  if (!def->blocks().empty() && !def->is("prim.If") && !def->is("prim.Loop")) return false;
  for (const Use& u : param->uses()) {
    const Node* a = u.user;
    if (a->is("prim.ListConstruct") || a->is("prim.TupleConstruct")) return false;
    if (a->num_outputs() == 1 && inline_.count(a->output(0))) return false;  // read later
    while (a->owning_block() != &b) a = a->owning_block()->owning_node();
    // The return reads the old value at the very end, after `ret` was bound: no.
    if (a == b.return_node()) return false;
    if (a == def) {
      if (def->is("prim.Loop")) return false;
      continue;
    }
    if (!a->is_before(def)) return false;
  }
  return true;
}

// Note [Range loops in Python]
// TorchScript lowers `for i in range(lo, hi, step)` (all but range(n)) to a loop of
// aten::__range_length(lo, hi, step) iterations whose variable is aten::__derive_index(k, lo,
// step), that is lo + k * step (torch/csrc/jit/runtime/register_prim_ops.cpp: the numbers
// Python's range gives, negative steps included; rows range.length and range.element). Where a
// loop's trip count is range.length and every read of its counter is a range.element of the
// same lo and step in its body, the loop is written back as `for i in range(lo, hi, step):`
// (i the element), and neither the elements nor the length are written: the length only when
// the loop is its one reader and nothing with a side effect comes between them, so that hi
// (perhaps written inline in it) reads the same at the loop. Elsewhere the two are written
// `len(range(lo, hi, step))` and `lo + k * step` (try_infix).

// The range.length node of a loop written back as a range loop; nullptr for other loops.
const Node* PyEmitter::range_loop_length(const Node& loop) {
  if (!loop.is("prim.Loop") || loop.num_inputs() < 2 || loop.blocks().size() != 1) return nullptr;
  const Node* len = loop.input(0)->node();
  if (!len || !len->is("range.length") || len->num_inputs() != 3) return nullptr;
  const Block& blk = *loop.block(0);
  for (const Use& u : blk.inputs()[0]->uses()) {
    const Node* e = u.user;
    if (!e->is("range.element") || e->num_inputs() != 3 || u.index != 0 ||
        e->owning_block() != &blk || e->input(1) != len->input(0) || e->input(2) != len->input(2))
      return nullptr;  // the counter itself is read: the loop keeps range(n)
  }
  return len;
}

// Whether range.length node `len` is left out, its loop being written with range(lo, hi, step).
bool PyEmitter::range_length_elided(const Node& len) {
  const Value* v = len.num_outputs() == 1 ? len.output(0) : nullptr;
  if (!v || v->num_uses() != 1 || v->uses()[0].index != 0) return false;
  const Node* loop = v->uses()[0].user;
  if (loop->owning_block() != len.owning_block() || range_loop_length(*loop) != &len) return false;
  for (const Node* m = len.next(); m && m != loop; m = m->next())
    if (has_side_effects(m)) return false;  // hi might read differently at the loop
  return true;
}

// "hi", "lo, hi" or "lo, hi, step": the arguments of range() for range.length node `len`.
std::string PyEmitter::range_args(const Node& len) {
  auto is_int = [](const Value* v, int64_t k) { return const_int(v) == std::optional<int64_t>(k); };
  std::string args = expr(len.input(1)).text;
  if (!is_int(len.input(0), 0) || !is_int(len.input(2), 1))
    args = expr(len.input(0)).text + ", " + args;
  if (!is_int(len.input(2), 1)) args += ", " + expr(len.input(2)).text;
  return args;
}

void PyEmitter::emit_loop(const Node& n, std::vector<std::string>& body) {
  const Block& blk = *n.block(0);
  const size_t k = n.num_outputs();
  const Value* trip = n.input(0);
  const AttrValue* trip_c = trip->constant();
  bool unbounded = trip_c && (std::holds_alternative<NoneAttr>(*trip_c) ||
                              (std::holds_alternative<int64_t>(*trip_c) &&
                               std::get<int64_t>(*trip_c) == std::numeric_limits<int64_t>::max()));
  Value* init_cond = n.input(1);
  Value* body_cond = blk.outputs()[0];
  bool init_true = const_true_false(init_cond) == std::optional<bool>(true);
  bool body_true = const_true_false(body_cond) == std::optional<bool>(true);

  // One variable per carried value.
  std::vector<std::string> vars(k), before;
  for (size_t j = 0; j < k; ++j) {
    Value* out = n.output(j);
    Value* param = blk.inputs()[j + 1];
    Value* init = n.input(j + 2);
    const Expr& ie = expr(init);
    bool dead = !out->has_uses();
    for (const Use& u : param->uses())
      dead = dead && u.user == blk.return_node() && u.index == j + 1;
    std::string name;
    if (dead) {
      // Nothing reads it: `_` keeps the body's last value computation pyflakes-clean (dce
      // would drop the whole carried value).
      vars[j] = "_";
      expr_[out] = Expr{"None"};
      expr_[param] = Expr{"_"};
      continue;
    }
    if (preferred_.count(out)) {
      name = bind_name(out, "");
    } else if (init->num_uses() == 1 && !init->constant() && is_identifier(ie.text) &&
               !python_reserved(ie.text) &&
               (!good_name(out->name()) || same_stem(out->name(), ie.text))) {
      name = ie.text;  // nothing else reads the initial value: the loop updates it in place
      expr_[out] = Expr(name);
    } else if (!good_name(out->name()) && good_name(param->name())) {
      name = param->name();  // reserved up front, like every IR name
      expr_[out] = Expr(name);
    } else {
      name = bind_name(out, is_identifier(ie.text) ? ie.text : "state");
    }
    if (ie.text != name) before.push_back(name + " = " + ie.text);
    vars[j] = name;
    expr_[param] = Expr(name);
    loop_vars_.insert(name);
  }
  plan_inline(blk);  // can_take_loop_var asks which reads are inline
  for (size_t j = 0; j < k; ++j)
    if (vars[j] != "_" && can_take_loop_var(blk, blk.inputs()[j + 1], blk.outputs()[j + 1]))
      preferred_[blk.outputs()[j + 1]] = vars[j];

  Value* it = blk.inputs()[0];
  const Node* range_len = range_loop_length(n);  // Note [Range loops in Python]
  std::string it_name = it->has_uses() && !range_len ? bind_name(it, "i") : "_";
  std::string range_text = range_len ? range_args(*range_len) : expr(trip).text;
  if (range_len) {
    for (const Use& u : it->uses()) {
      Value* elem = u.user->output(0);
      preferred_.erase(elem);  // the for target, never a carried variable
      if (it_name == "_") it_name = bind_name(elem, "i");
      expr_[elem] = Expr(it_name);
      range_elements_.insert(u.user);
    }
  }

  // The condition variable, when the condition is not constant true.
  bool need_cond = !(init_true && body_true);
  std::string cond_var;
  if (need_cond) {
    const Expr& ce = expr(init_cond);
    if (!init_true && init_cond->num_uses() == 1 && !init_cond->constant() &&
        is_identifier(ce.text) && !python_reserved(ce.text) && !loop_vars_.count(ce.text)) {
      cond_var = ce.text;
    } else if (good_name(body_cond->name()) && returned_once(blk, body_cond)) {
      cond_var = body_cond->name();  // reserved up front, like every IR name
    } else {
      cond_var = unique("cond");
    }
    if (returned_once(blk, body_cond)) {
      Value* src = condition_source(body_cond);
      preferred_[src] = cond_var;
      if (src != body_cond) preferred_[body_cond] = cond_var;
    }
  }

  bool use_for = !unbounded;
  std::vector<std::string> lines;
  if (use_for) {
    if (need_cond && !init_true) {
      if (expr(init_cond).text != cond_var)
        before.push_back(cond_var + " = " + expr(init_cond).text);
      lines.push_back("if not " + cond_var + ":");
      lines.push_back("    break");
    }
    body.insert(body.end(), before.begin(), before.end());
    body.push_back("for " + it_name + " in range(" + range_text + "):");
  } else {
    if (need_cond && expr(init_cond).text != cond_var)
      before.push_back(cond_var + " = " + expr(init_cond).text);
    if (it->has_uses()) before.push_back(it_name + " = 0");
    body.insert(body.end(), before.begin(), before.end());
    body.push_back("while " + (need_cond ? cond_var : std::string("True")) + ":");
  }
  std::vector<std::string> inner = emit_block(blk);
  lines.insert(lines.end(), inner.begin(), inner.end());

  std::vector<std::string> lhs = vars, rhs;
  for (size_t j = 0; j < k; ++j) rhs.push_back(expr(blk.outputs()[j + 1]).text);
  bool break_at_end = use_for && need_cond && init_true;
  if (need_cond) {
    std::string ct = expr(body_cond).text;
    if (break_at_end && const_true_false(body_cond) == std::optional<bool>(false)) {
      ct = "";  // runs once: a plain break below
    } else if (!(break_at_end && ct == cond_var)) {
      lhs.push_back(cond_var);
      rhs.push_back(ct);
    }
    if (break_at_end) {
      std::string a = parallel_assign(lhs, rhs);
      if (!a.empty()) lines.push_back(a);
      if (ct.empty()) {
        lines.push_back("break");
      } else {
        lines.push_back("if not " + cond_var + ":");
        lines.push_back("    break");
      }
      lhs.clear();
    }
  }
  if (!lhs.empty()) {
    std::string a = parallel_assign(lhs, rhs);
    if (!a.empty()) lines.push_back(a);
  }
  if (!use_for && it->has_uses()) lines.push_back(it_name + " += 1");
  if (lines.empty()) lines.push_back("pass");
  append_indented(lines, body);
}

}  // namespace tt::pyemit
