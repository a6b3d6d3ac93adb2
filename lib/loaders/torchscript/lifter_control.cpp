// The TorchScript lifter (lifter.h): control flow and mutated lists (Note [Lifting control flow],
// Note [Lists mutated in a block]).
//
// Note [Lifting control flow]
// prim::If and prim::Loop become prim.If / prim.Loop in the IR in TorchScript's own form
// (DESIGN.md §4, the .tir form of blocks): an If has the condition as input and
// two argument-less blocks returning its outputs; a Loop has (max_trip_count, initial_condition,
// carried...) as inputs and one block with arguments (iteration, carried...) returning
// (continue_condition, carried...). An If whose condition is a constant in the IR is resolved
// here: only the taken branch is lifted (a "branch-resolved" note). Scalar TorchScript builtins
// become Python spellings: operator.add/lt/getitem/is_/is_not/not_/..., len, int/float/bool; with
// constant inputs they are evaluated while lifting. prim::RaiseException becomes
// prim.RaiseException(msg) (an effect), prim::Uninitialized prim.Uninitialized, and
// prim::unchecked_cast disappears (the IR is not typed strictly enough to need it).
//
// Note [Lists mutated in a block]
// The IR is functional, TorchScript lists are mutable. `l.append(x)` / `l.extend(m)` becomes
// `l2 = l + [x]` / `l + m` (operator.add) and later reads of l use l2. A list appended to inside
// a prim.If branch or prim.Loop body but made outside it becomes an extra If result / Loop
// carried value, so the rebinding survives the block. This is faithful only when nothing else
// refers to the same list object: the list must be made in this method (ListConstruct, list(),
// copy(), +, slicing) and never stored in a list/tuple, passed to a call, cast or returned from
// a block (list_alias_problem); otherwise the append exits 4. list(l) / l.copy() are `list(l)`.
// F.interpolate's own TorchScript body appends to a list; its calls are lifted as the
// F.interpolate op instead of being inlined (lift_interpolate).
#include "loaders/torchscript/lifter.h"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

namespace tt::ts {

void Lifter::lift_if(const jit::Node* n, Frame& f) {
  Value* cond = value_of(f, n->input(0), n);
  const AttrValue* c = cond->constant();
  if (c && std::holds_alternative<bool>(*c)) {
    bool taken = std::get<bool>(*c);
    const jit::Block* b = n->blocks().at(taken ? 0 : 1);
    lift_block(*b, f);
    for (size_t i = 0; i < n->outputs().size(); ++i)
      f.env[n->output(i)] = binding_of(f, b->outputs()[i]);
    std::string loc = node_loc(n);
    if (resolved_notes_.insert(f.scope + "@" + loc).second)
      diags_.add({Severity::Note, "branch-resolved",
                  std::string("the condition of this `if` is the constant ") +
                      (taken ? "True" : "False") +
                      " (a module attribute or TorchScript constant): only the " +
                      (taken ? "`if`" : "`else`") + " branch was kept",
                  "", f.scope, loc});
    return;
  }
  Node* node = append("prim.If", {cond}, f, n);
  for (const jit::Value* o : n->outputs()) node->add_output(convert_type(o->type()), name_hint(o));
  // Lists appended to inside a branch are extra results (Note [Lists mutated in a block]).
  std::vector<const jit::Value*> lists = lists_mutated_inside(n);
  std::vector<Binding> before;
  for (const jit::Value* l : lists) before.push_back(binding_of(f, l));
  for (size_t i = 0; i < 2; ++i) {
    Block* b = node->add_block();
    lift_into(b, *n->blocks().at(i), f, n);
    for (size_t j = 0; j < lists.size(); ++j) {
      b->add_output(value_of(f, lists[j], n));
      f.env[lists[j]] = before[j];
    }
  }
  for (size_t i = 0; i < n->outputs().size(); ++i)
    f.env[n->output(i)] = Binding{node->output(i), {}};
  for (const jit::Value* l : lists)
    f.env[l] = Binding{node->add_output(convert_type(l->type()), name_hint(l)), {}};
}

void Lifter::lift_loop(const jit::Node* n, Frame& f) {
  std::vector<Value*> ins = inputs_of(n, f);
  // Lists appended to in the body are carried values (Note [Lists mutated in a block]).
  std::vector<const jit::Value*> lists = lists_mutated_inside(n);
  for (const jit::Value* l : lists) ins.push_back(value_of(f, l, n));
  Node* node = append("prim.Loop", ins, f, n);
  for (const jit::Value* o : n->outputs()) node->add_output(convert_type(o->type()), name_hint(o));
  const jit::Block& body = *n->blocks().at(0);
  Block* b = node->add_block();
  for (const jit::Value* in : body.inputs())
    f.env[in] = Binding{b->add_input(convert_type(in->type()), name_hint(in)), {}};
  for (const jit::Value* l : lists)
    f.env[l] = Binding{b->add_input(convert_type(l->type()), name_hint(l)), {}};
  lift_into(b, body, f, n);
  for (const jit::Value* l : lists) b->add_output(value_of(f, l, n));
  for (size_t i = 0; i < n->outputs().size(); ++i)
    f.env[n->output(i)] = Binding{node->output(i), {}};
  for (const jit::Value* l : lists)
    f.env[l] = Binding{node->add_output(convert_type(l->type()), name_hint(l)), {}};
}

bool Lifter::is_list_mutation(const jit::Node* n) {
  if (n->inputs().empty() || !n->input(0)->type()->cast<c10::ListType>()) return false;
  std::string k = kind_str(n);
  return k == "aten::append" || k == "aten::extend" || k == "aten::_set_item" ||
         k == "aten::add_";  // l += m
}

// True when v is defined inside one of owner's blocks (at any depth).
bool Lifter::defined_inside(const jit::Value* v, const jit::Node* owner) {
  for (const jit::Node* p = v->node(); p;) {
    const jit::Block* b = p->owningBlock();
    if (!b) return false;
    p = b->owningNode();
    if (p == owner) return true;
  }
  return false;
}

// The lists defined outside `owner` that are appended to inside it, in order of first mutation.
std::vector<const jit::Value*> Lifter::lists_mutated_inside(const jit::Node* owner) {
  std::vector<const jit::Value*> out;
  std::function<void(const jit::Block*)> walk = [&](const jit::Block* b) {
    for (const jit::Node* m : b->nodes()) {
      if (is_list_mutation(m) && !defined_inside(m->input(0), owner) &&
          std::find(out.begin(), out.end(), m->input(0)) == out.end())
        out.push_back(m->input(0));
      for (const jit::Block* sub : m->blocks()) walk(sub);
    }
  };
  for (const jit::Block* b : owner->blocks()) walk(b);
  return out;
}

// l.append(x) / l.extend(other) / l += other: l is rebound to the new list l + [x] / l + other.
void Lifter::lift_list_mutation(const jit::Node* n, Frame& f) {
  const jit::Value* l = n->input(0);
  // l += m returns l itself: its result is one more name of the new list
  bool returns_self = kind_str(n) == "aten::add_";
  std::string why = list_alias_problem(l);
  if (why.empty() && returns_self) why = list_alias_problem(n->output());
  if (why.empty() && !returns_self && n->outputs().size() == 1 && n->output()->hasUses())
    why = "the result of the mutation is used";
  if (!why.empty())
    unsupported(
        n, "a list is mutated but " + why, f,
        "build the list without mutating it (e.g. a list comprehension), or trace the model");
  Value* cur = value_of(f, l, n);
  Type type = convert_type(l->type());
  if (kind_str(n) == "aten::_set_item") return lift_list_set_item(n, cur, type, f);
  Value* tail = value_of(f, n->input(1), n);
  if (kind_str(n) == "aten::append") {
    Node* lc = append("prim.ListConstruct", {tail}, f, n);
    tail = lc->add_output(type);
  }
  Node* add = append("operator.add", {cur, tail}, f, n);
  f.env[l] = Binding{add->add_output(type, name_hint(l)), {}};
  if (returns_self) f.env[n->output()] = f.env[l];
}

// l[idx] = v (aten::_set_item.t) on a fresh list whose length is known while lifting (built by
// a ListConstruct, a constant list, or list()/copy() of one; swin's `shift_size[0] = 0` on a
// copy of an attribute) with a constant idx: l is rebound to the list rebuilt item by item,
// [l[0], v, l[2]], which is exactly what the assignment leaves. An index out of range raises
// in Python: refused here. Other lengths or indices: refused (exit 4).
void Lifter::lift_list_set_item(const jit::Node* n, Value* cur, const Type& type, Frame& f) {
  std::optional<int64_t> len = known_list_length(cur);
  const AttrValue* idx_c = value_of(f, n->input(1), n)->constant();
  const int64_t* idx = idx_c ? std::get_if<int64_t>(idx_c) : nullptr;
  if (!len || !idx)
    unsupported(n,
                "a list item is assigned (l[i] = v) on a list whose length or index is not known "
                "while converting",
                f, "build the list without mutating it, or trace the model");
  int64_t k = *idx < 0 ? *idx + *len : *idx;
  if (k < 0 || k >= *len)
    unsupported(n, "a list item assignment is out of range (it raises IndexError)", f,
                "fix the index in the model");
  Value* v = value_of(f, n->input(2), n);
  Type elem = type.elems.empty() ? Type::of(Type::Kind::Any) : type.elems[0];
  std::vector<Value*> items;
  for (int64_t j = 0; j < *len; ++j) {
    if (j == k) {
      items.push_back(v);
      continue;
    }
    Value* jv = add_constant(j, Type::of(Type::Kind::Int), f, n);
    Node* get = append("operator.getitem", {cur, jv}, f, n);
    items.push_back(get->add_output(elem));
  }
  Node* lc = append("prim.ListConstruct", items, f, n);
  f.env[n->input(0)] = Binding{lc->add_output(type, name_hint(n->input(0))), {}};
}

// The length of a list value when it is known while lifting: a ListConstruct, a constant list,
// list(x) of one of those, or an if's result that has the same known length in both branches.
std::optional<int64_t> Lifter::known_list_length(const Value* v) {
  if (const AttrValue* c = v->constant()) {
    if (const auto* a = std::get_if<std::vector<int64_t>>(c))
      return static_cast<int64_t>(a->size());
    if (const auto* a = std::get_if<std::vector<double>>(c)) return static_cast<int64_t>(a->size());
    if (const auto* a = std::get_if<std::vector<std::string>>(c))
      return static_cast<int64_t>(a->size());
    return std::nullopt;
  }
  const Node* p = v->node();
  if (!p) return std::nullopt;
  if (p->is("prim.ListConstruct")) return static_cast<int64_t>(p->num_inputs());
  if (p->is("list") && p->num_inputs() == 1) return known_list_length(p->input(0));
  if (p->is("prim.If") && p->blocks().size() == 2) {
    std::optional<int64_t> len;
    for (const auto& b : p->blocks()) {
      if (v->offset() >= b->outputs().size()) return std::nullopt;
      auto l = known_list_length(b->outputs()[v->offset()]);
      if (!l || (len && *len != *l)) return std::nullopt;
      len = l;
    }
    return len;
  }
  return std::nullopt;
}

// Why rebinding `l` would not be faithful ("" when it is): l must be a fresh list of this
// method that nothing else can see (no alias in a tuple, another list, a callee, a block result).
std::string Lifter::list_alias_problem(const jit::Value* l) {
  std::string pk = kind_str(l->node());
  static const std::set<std::string> fresh = {"prim::ListConstruct", "aten::list", "aten::copy",
                                              "aten::add", "aten::slice"};
  // the result of l += m is l: where l came from was checked on l
  if (!fresh.count(pk) && !(pk == "aten::add_" && is_list_mutation(l->node())))
    return "it is not a new list made in this method (it comes from " + pk + ")";
  for (const jit::Use& u : l->uses()) {
    const jit::Node* user = u.user;
    if (is_list_mutation(user) && u.offset == 0) continue;
    auto k = user->kind();
    if (k == c10::prim::Return) {
      if (user->owningBlock()->owningNode() == nullptr) continue;  // the method's own result
      return "it is also a result of a branch or loop body";
    }
    if (k == c10::prim::ListConstruct || k == c10::prim::TupleConstruct || k == c10::prim::Loop ||
        k == c10::prim::CallMethod || k == c10::prim::CallFunction ||
        k == c10::prim::unchecked_cast || k == c10::prim::SetAttr ||
        k == c10::prim::DictConstruct || is_list_mutation(user))
      return "it is also stored or passed on (" + kind_str(user) + ")";
  }
  return "";
}

}  // namespace tt::ts
