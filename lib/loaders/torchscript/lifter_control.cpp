// The TorchScript lifter (lifter.h): control flow and list/dict mutation (Note [Lifting control
// flow], Note [Container mutation while lifting]).
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
// prim.RaiseException(msg) (an effect), prim::Print prim.Print(args...) (an effect too: the
// Python emitter writes print(...), the interpreter runs it as nothing, since its text is no
// result), prim::Uninitialized prim.Uninitialized, and
// prim::unchecked_cast disappears (the IR is not typed strictly enough to need it).
// An If that only refines an object (`assert m is not None` of an Optional[object]: one branch
// raises, the other returns the object's unchecked_cast) cannot have the object as a result (the
// IR has no object values, Note [Objects while lifting]): it is lifted as `if not cond: raise`
// followed by the other branch's nodes in the enclosing block, which is the same program since
// the raise ends it (lift_asserted_object).
//
// Note [Container mutation while lifting]
// TorchScript lists and dicts are mutable objects; so are they in the IR (Note [Container
// mutation], lib/exec/alias.h). `l.append(x)`, `l[i] = v`, `d[k] = v`, `l.pop()`, ... become one
// node each (list.append, operator.setitem, dict.pop, ...) in program order, and every later read
// of the container, under any name (a tuple item, a callee's argument, a dict value, a block
// result), uses the same IR value, so it sees the write as Python does. No rebinding, no extra
// If results or Loop-carried values: a branch or loop body mutates the object made outside it.
// An op that returns its container (append, l[i] = v, l += m) binds that result to the
// container itself. A list or dict that is a constant of the model (a module attribute) is not
// changed: the generated code would change a literal. F.interpolate's own TorchScript body
// appends to a list; its calls are lifted as the F.interpolate op instead of being inlined
// (lift_interpolate).
#include "loaders/torchscript/lifter.h"

#include <algorithm>
#include <map>
#include <string>

namespace tt::ts {

// A block that only raises (and builds its message, Lifter::is_raise_guard).
static bool only_raises(const jit::Block* b) {
  bool raises = false;
  for (const jit::Node* m : b->nodes()) {
    if (m->kind() == c10::prim::RaiseException)
      raises = true;
    else if (!m->blocks().empty() || m->hasSideEffects())
      return false;
  }
  return raises;
}

// An If with an object result whose other branch raises (Note [Lifting control flow]).
bool Lifter::lift_asserted_object(const jit::Node* n, Value* cond, Frame& f) {
  bool objects = std::any_of(n->outputs().begin(), n->outputs().end(), [](const jit::Value* o) {
    return object_class(o->type()) != nullptr;
  });
  int raising = only_raises(n->blocks()[0]) ? 0 : only_raises(n->blocks()[1]) ? 1 : -1;
  if (!objects || raising < 0) return false;
  Node* node = append("prim.If", {cond}, f, n);
  for (int i = 0; i < 2; ++i) {
    Block* b = node->add_block();
    if (i != raising) continue;
    Block* saved = cur_;
    cur_ = b;
    lift_block(*n->blocks()[i], f);
    cur_ = saved;
  }
  const jit::Block* kept = n->blocks()[1 - raising];
  lift_block(*kept, f);
  for (size_t i = 0; i < n->outputs().size(); ++i)
    f.env[n->output(i)] = binding_of(f, kept->outputs()[i]);
  return true;
}

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
  if (lift_asserted_object(n, cond, f)) return;
  Node* node = append("prim.If", {cond}, f, n);
  for (const jit::Value* o : n->outputs()) node->add_output(convert_type(o->type()), name_hint(o));
  for (size_t i = 0; i < 2; ++i) lift_into(node->add_block(), *n->blocks().at(i), f, n);
  for (size_t i = 0; i < n->outputs().size(); ++i)
    f.env[n->output(i)] = Binding{node->output(i), {}};
}

void Lifter::lift_loop(const jit::Node* n, Frame& f) {
  std::vector<Value*> ins = inputs_of(n, f);
  Node* node = append("prim.Loop", ins, f, n);
  for (const jit::Value* o : n->outputs()) node->add_output(convert_type(o->type()), name_hint(o));
  const jit::Block& body = *n->blocks().at(0);
  Block* b = node->add_block();
  for (const jit::Value* in : body.inputs())
    f.env[in] = Binding{b->add_input(convert_type(in->type()), name_hint(in)), {}};
  lift_into(b, body, f, n);
  for (size_t i = 0; i < n->outputs().size(); ++i)
    f.env[n->output(i)] = Binding{node->output(i), {}};
}

// The IR op of a TorchScript list/dict mutation (Note [Container mutation while lifting]); ""
// for one that has no exact Python spelling (refused), nullptr when `n` is none. "dict.popitem"
// has no row: lift_popitem writes it with other ops (Note [d.popitem() while lifting]).
const char* Lifter::container_mutation_op(const jit::Node* n) {
  if (n->inputs().empty()) return nullptr;
  bool list = n->input(0)->type()->cast<c10::ListType>() != nullptr;
  bool dict = n->input(0)->type()->cast<c10::DictType>() != nullptr;
  if (!list && !dict) return nullptr;
  struct Ops {
    const char* list;
    const char* dict;
  };
  static const std::map<std::string, Ops> ops = {
      {"aten::append", {"list.append", nullptr}},
      {"aten::extend", {"list.extend", nullptr}},
      {"aten::add_", {"list.extend", nullptr}},  // l += m
      {"aten::insert", {"list.insert", nullptr}},
      {"aten::pop", {"list.pop", "dict.pop"}},
      {"aten::remove", {"list.remove", nullptr}},
      {"aten::clear", {"list.clear", "dict.clear"}},
      {"aten::reverse", {"list.reverse", nullptr}},
      {"aten::sort", {"list.sort", nullptr}},
      {"aten::mul_", {"operator.imul", nullptr}},  // l *= n
      {"aten::_set_item", {"operator.setitem", "operator.setitem"}},
      {"aten::Delete", {"operator.delitem", "operator.delitem"}},
      {"aten::popitem", {nullptr, "dict.popitem"}},  // lowered: see lift_popitem
      {"aten::setdefault", {nullptr, "dict.setdefault"}},
      {"aten::update", {nullptr, "dict.update"}},
  };
  auto it = ops.find(kind_str(n));
  if (it == ops.end()) return nullptr;
  const char* op = list ? it->second.list : it->second.dict;
  return op ? op : "";
}

void Lifter::lift_container_mutation(const jit::Node* n, const char* op, Frame& f) {
  if (!*op)  // a method of the other container kind: TorchScript's own builtins do not have one
    unsupported(n, "no Python spelling of this method on a " + n->input(0)->type()->repr_str(), f,
                "report it as a tinytrace bug with the model");
  std::vector<Value*> ins = inputs_of(n, f);
  if (ins.at(0)->constant())
    unsupported(n,
                "a list or dict that is a constant of the model (a module attribute) is changed "
                "in place",
                f, "copy it first (l = list(self.l)) or make the change outside the model");
  if (std::string(op) == "dict.popitem") return lift_popitem(n, ins.at(0), f);
  if (std::string(op) == "list.sort") {
    const c10::TypePtr& elem = n->input(0)->type()->castRaw<c10::ListType>()->getElementType();
    if (elem->kind() == c10::TypeKind::FloatType || elem->kind() == c10::TypeKind::TensorType)
      return lift_sort_as_sorted(n, ins, f);
    if (!python_orders_alike(elem))
      unsupported(n,
                  "l.sort() of a " + n->input(0)->type()->repr_str() +
                      " orders differently in TorchScript and Python (NaN floats, tensors)",
                  f, "sort a tensor instead (torch.sort)");
  }
  Node* node = append(op, ins, f, n);
  // append, l[i] = v, l += m and l *= n return the list itself: one more name of the same object.
  std::string k = kind_str(n);
  bool returns_self =
      n->input(0)->type()->cast<c10::ListType>() &&
      (k == "aten::append" || k == "aten::add_" || k == "aten::_set_item" || k == "aten::mul_");
  for (const jit::Value* o : n->outputs())
    f.env[o] = returns_self ? Binding{ins[0], {}}
                            : Binding{node->add_output(convert_type(o->type()), name_hint(o)), {}};
}

// Note [Orders Python shares]
// TorchScript's l.sort() and sorted(l) order with `<` of its IValues (register_prim_ops.cpp,
// std::sort), Python's with `<` of its objects (a stable sort). They agree on ints, bools and
// strings, and on tuples of them (both compare tuples item by item), where equal items cannot be
// told apart. Floats differ (NaN, and -0.0 == 0.0 kept in another order), tensors do not compare
// alike at all: those lists are refused.
bool python_orders_alike(const c10::TypePtr& elem) {
  switch (elem->kind()) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::BoolType:
    case c10::TypeKind::StringType:
      return true;
    case c10::TypeKind::TupleType:
      return std::all_of(elem->containedTypes().begin(), elem->containedTypes().end(),
                         [](const c10::TypePtr& t) { return python_orders_alike(t); });
    default:
      return false;
  }
}

// l.sort() of floats or tensors (Note [Orders Python shares]): TorchScript's l.sort() and
// sorted(l) run std::sort with the same comparison when reverse is False (`a < b`; sort's extra
// `a == b` / same-tensor test answers false where `<` does too), so on the same items they give
// the same order, NaN and -0.0 included. Written in TorchScript's own sorted, which Python's
// torch.ops runs exactly (Note [TorchScript builtins without a row], lifter_ops.cpp):
// `s = torch.ops.aten.sorted.float(l); l.clear(); l.extend(s)` (the same list object, holding the
// same tensors). With reverse=True the comparison is `!(a < b)` (NaN both ways): refused.
void Lifter::lift_sort_as_sorted(const jit::Node* n, const std::vector<Value*>& ins, Frame& f) {
  const AttrValue* rev = ins.size() > 1 ? ins[1]->constant() : nullptr;
  bool forward =
      ins.size() == 1 || (rev && std::holds_alternative<bool>(*rev) && !std::get<bool>(*rev));
  if (!forward)
    unsupported(n,
                "l.sort(reverse=True) of a " + n->input(0)->type()->repr_str() +
                    " orders NaN (and equal tensors) in TorchScript's own way, which Python "
                    "cannot write",
                f, "sort with reverse=False and reverse the list (l.reverse())");
  bool floats = n->input(0)->type()->containedTypes().at(0)->kind() == c10::TypeKind::FloatType;
  Node* s = append(floats ? "aten::sorted.float" : "aten::sorted.Tensor", {ins[0]}, f, n);
  Value* in_order = s->add_output(ins[0]->type(), "in_order");
  append("list.clear", {ins[0]}, f, n);
  append("list.extend", {ins[0], in_order}, f, n);
}

// Note [d.popitem() while lifting]
// TorchScript's d.popitem() removes the dict's *first* item (its dicts keep insertion order and
// aten::popitem erases begin()), Python's the last. So it is written as what it does:
// `k = list(d.keys())[0]; v = d.pop(k)`, the result the tuple (k, v). On an empty dict both
// raise (TorchScript's "dictionary is empty", Python's IndexError), so no call that succeeds in
// one fails in the other.
void Lifter::lift_popitem(const jit::Node* n, Value* dict, Frame& f) {
  auto dt = n->input(0)->type()->expect<c10::DictType>();
  Type key = convert_type(dt->getKeyType());
  Node* keys = append("dict.keys", {dict}, f, n);
  Value* key_list = keys->add_output(Type::list(key), "keys");
  Value* zero = add_constant(int64_t{0}, Type::of(Type::Kind::Int), f, n);
  Value* k = append("operator.getitem", {key_list, zero}, f, n)->add_output(key, "k");
  Value* v = append("dict.pop", {dict, k}, f, n)->add_output(convert_type(dt->getValueType()), "v");
  Node* item = append("prim.TupleConstruct", {k, v}, f, n);
  f.env[n->output()] =
      Binding{item->add_output(convert_type(n->output()->type()), name_hint(n->output())), {}};
}

}  // namespace tt::ts
