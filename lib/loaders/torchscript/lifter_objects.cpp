// The TorchScript lifter (lifter.h): TorchScript objects and attribute writes (Note [Objects
// while lifting], Note [Module attributes written in forward]).
//
// Note [Objects while lifting]
// A scripted model may make an instance of a TorchScript class in its graph (torchvision's
// ImageList: prim::CreateObject, then its __init__ as prim::CallMethod, whose prim::SetAttr
// nodes fill the fields) and read the fields back with prim::GetAttr. Such an object has no
// IR value: the lifter keeps it as a field map (ObjectState, one per prim::CreateObject lifted),
// bound to the JIT value like a module reference, and passed on the same way (method arguments
// and results, tuples: a tuple holding an object is a tuple of bindings). A field write sets the
// map's entry; a field read binds the entry's value, so the read sees the last write in program
// order, as Python would. Methods of the class are inlined with the object as `self`. This is
// exact only while every write is known at lift time, so:
// - a write from another block than the one the object was made in (inside an `if` or a loop
//   the lifter keeps) is refused: which write the later reads see is decided at run time;
// - an object that becomes a value (returned by forward, stored in a list or dict, an `if`
//   result, a loop-carried value, an argument of an op) is refused: the IR has no object type
//   and the generated code would need the class.
// Nothing of the object is left in the IR: the generated code uses the fields' values directly.
//
// Note [Module attributes written in forward]
// A method may also write an attribute of a module (`self._has_warned = True`, a cache
// `if self.scales is None: self.scales = ...`, AnchorGenerator's `self.cell_anchors = [...]`).
// The write survives the call. The lifter handles it in one of three ways:
// - the attribute is only read to decide whether to warn (every read feeds, directly or through
//   `not`, the condition of an `if` whose branches only warn or write that attribute): warnings
//   are not part of the generated code, the write is dropped and the reads stay constants;
// - the write is in straight-line code (no `if`/loop the lifter keeps) and forward reads the
//   attribute of that module only after it: every call writes it before reading it, so the value
//   kept from an earlier call is never seen. Later reads in the same call bind the written value;
// - otherwise (a read before the write, a write inside a branch or loop) the attribute is state
//   kept between calls (Note [Module state] in lib/exec/alias.h): every read of it is a
//   prim.StateGet whose input is the value the loaded module holds (a weight read for a tensor,
//   so NAME.pth carries it; a constant or a list of those otherwise), every write a
//   prim.StateSet, in program order. Which case applies is known only at the write, so every
//   read of an attribute some method writes is lifted as a prim.StateGet, and those of
//   attributes forward never writes as state are replaced by their initial value once forward is
//   lifted (drop_unwritten_state): the graph is then what a constant read gives.
// A TorchScript object as state is flattened into slots (Note [Objects as module state]).
// Refused: a module as state, and an attribute written both in straight-line code before any
// read and as state (the bound write would have to become a prim.StateSet after the fact).
// Attributes that any method writes are never folded into constants while preparing a graph
// (Note [Scripted method graphs]); the set is computed once from every method of every module
// type.
//
// Note [Objects as module state]
// A module attribute that holds a TorchScript object and is state (MultiScaleRoIAlign caches
// `self.map_levels`, an Optional[LevelMapper], on its first call) has no IR value to keep: the
// IR has no object type. It is flattened instead into one state slot per field, named
// `<attr>_<field>` (recursively `<attr>_<field>_<subfield>` for a field that is an object), plus,
// when the attribute's type is Optional, a presence slot `<attr>_is_none` (a bool, true while it
// holds None). Each slot is a module attribute of its own, with prim.StateGet / prim.StateSet as
// for any state (Note [Module state] in lib/exec/alias.h), so the interpreter, both emitters and
// the .tir need nothing new; the generated code reads `self.box_roi_pool.map_levels_k_min`.
// - a read of the attribute reads every slot where the read is, in program order, and binds an
//   object (Note [Objects while lifting]) whose fields are those reads; `is None` of it is the
//   presence read (no presence slot: never None). Reads nothing uses are dropped at the end
//   (drop_unused_slot_reads): a read has no effect, and `if self.a is None` then reads one slot.
// - a write of an object writes every slot (its fields as the lifter has them at the write),
//   and the presence slot False; a write of None writes the presence slot only (the fields are
//   not seen while it is None).
// - the initial values are the loaded module's (None for every field while it holds None).
// Python shares the object between the attribute and the locals that hold it, so a field write
// to an object read from state or written to it would change the state too: refused, as is a
// slot name the module already has, or that two attributes would share.
// Which slots forward writes is decided per slot, as for any state: slots never written (the
// fields while only None is ever written) read their initial values.
#include "loaders/torchscript/lifter.h"

#include <torch/csrc/jit/api/function_impl.h>

#include <algorithm>
#include <functional>

namespace tt::ts {

std::string Lifter::type_key(const c10::TypePtr& t) {
  auto ct = t->cast<c10::ClassType>();
  return ct && ct->name() ? ct->name()->qualifiedName() : t->repr_str();
}

// A read of an attribute that only decides whether to warn: its uses are the conditions of
// `if`s (directly or through `not`) whose branches only warn, hold constants or write the same
// attribute.
bool Lifter::warn_only_read(const jit::Node* get_attr) {
  const std::string name = get_attr->s(c10::attr::name);
  std::function<bool(const jit::Value*)> only_guards = [&](const jit::Value* v) {
    for (const jit::Use& u : v->uses()) {
      const jit::Node* user = u.user;
      if (user->kind() == c10::aten::__not__) {
        if (!only_guards(user->output())) return false;
        continue;
      }
      if (user->kind() != c10::prim::If || u.offset != 0 || !user->outputs().empty()) return false;
      for (const jit::Block* b : user->blocks())
        for (const jit::Node* m : b->nodes()) {
          auto k = m->kind();
          bool same_write = k == c10::prim::SetAttr && m->s(c10::attr::name) == name;
          if (k != c10::aten::warn && k != c10::prim::Constant && !same_write) return false;
        }
    }
    return true;
  };
  return only_guards(get_attr->output());
}

// written_attrs_ and warn_only_attrs_ from every method of every module type of the model.
void Lifter::find_attr_writes() {
  std::map<std::pair<std::string, std::string>, bool> reads_warn_only;
  std::function<void(const jit::Block*)> walk = [&](const jit::Block* b) {
    for (const jit::Node* n : b->nodes()) {
      for (const jit::Block* sub : n->blocks()) walk(sub);
      if (n->kind() != c10::prim::SetAttr && n->kind() != c10::prim::GetAttr) continue;
      auto ct = n->input(0)->type()->cast<c10::ClassType>();
      if (!ct || !ct->is_module()) continue;
      std::pair<std::string, std::string> attr{type_key(ct), n->s(c10::attr::name)};
      if (n->kind() == c10::prim::SetAttr) {
        written_attrs_.insert(attr);
        reads_warn_only.emplace(attr, true);
      } else {
        auto [it, fresh] = reads_warn_only.emplace(attr, true);
        it->second = it->second && warn_only_read(n);
      }
    }
  };
  std::set<std::string> seen;
  for (const jit::Module& m : root_.modules()) {
    if (!seen.insert(type_key(m.type())).second) continue;
    for (const jit::Method& method : m.get_methods()) walk(method.graph()->block());
  }
  for (const auto& attr : written_attrs_)
    if (reads_warn_only.at(attr)) warn_only_attrs_.insert(attr);
}

void Lifter::lift_create_object(const jit::Node* n, Frame& f) {
  auto obj = std::make_shared<ObjectState>();
  obj->type = n->output()->type()->expect<c10::ClassType>();
  obj->home = cur_;
  f.env[n->output()] = Binding{nullptr, {}, obj, nullptr};
}

void Lifter::lift_set_attr(const jit::Node* n, Frame& f) {
  const Binding& target = binding_of(f, n->input(0));
  std::string name = n->s(c10::attr::name);
  if (target.object) {
    auto refuse = [&](const std::string& what, const std::string& fix) {
      unsupported(n,
                  "field '" + name + "' of a " + type_key(target.object->type) + " object " + what,
                  f, fix);
    };
    if (target.object->in_state)
      refuse(
          "kept as module state is written: Python would change the state too (Note [Objects "
          "as module state])",
          "make a new object and assign it to the attribute");
    if (target.object->stored)
      refuse(
          "kept in the model is written: the value persists to the next call, which the "
          "generated code cannot reproduce",
          "keep the value in a local variable");
    if (target.object->home != cur_)
      refuse(
          "is written inside an `if` or a loop: which value later reads see is decided at run "
          "time",
          "compute the value first and write the field in straight-line code");
    target.object->fields[name] = binding_of(f, n->input(1));
    return;
  }
  if (!target.module)
    unsupported(n, "attribute write on something that is neither a module nor an object", f,
                "write the attribute of a module or of a TorchScript object");
  const ModuleRef& owner = *target.module;
  std::string full = join_path(owner.path, name);
  if (warn_only_attrs_.count({type_key(owner.module.type()), name})) return;
  auto key = std::make_pair(static_cast<const void*>(owner.module._ivalue().get()), name);
  bool state = cur_ || module_reads_.count(key) || state_writes_.count(key);
  if (!state) {
    module_writes_[key] = binding_of(f, n->input(1));
    return;
  }
  if (module_writes_.count(key))
    unsupported(n,
                "the module attribute '" + full +
                    "' is written in straight-line code before any read and again inside an "
                    "`if` or a loop",
                f, "write it in one place, or read it before the first write");
  const Binding& v = binding_of(f, n->input(1));
  if (c10::TypePtr declared = owner.module.type()->findAttribute(name);
      declared && object_class(declared)) {
    write_object_state(owner, name, name, declared, v, f, n);
    return;
  }
  if (!v.is_value() || module_reads_objects_.count(key))
    unsupported(n,
                "the module attribute '" + full +
                    "' holds a TorchScript object or module and keeps it between calls: objects "
                    "cannot be state of the generated code",
                f, "keep tensors, numbers, strings or lists of them in the attribute");
  Node* set = append("prim.StateSet", {v.value}, f, n);
  set->attrs().set("module", owner.path);
  set->attrs().set("name", name);
  state_writes_.insert(key);
}

// A read of a module attribute that some method writes: a prim.StateGet of the value just bound
// (Note [Module attributes written in forward]).
void Lifter::lift_state_get(const jit::Node* n, Frame& f) {
  auto it = f.env.find(n->input(0));
  const jit::Value* out = n->output();
  if (it == f.env.end() || !it->second.module) return;
  const ModuleRef& owner = *it->second.module;
  std::string name = n->s(c10::attr::name);
  if (!written_attrs_.count({type_key(owner.module.type()), name}) ||
      warn_only_attrs_.count({type_key(owner.module.type()), name}))
    return;
  auto key = std::make_pair(static_cast<const void*>(owner.module._ivalue().get()), name);
  Binding& b = f.env[out];
  if (!b.is_value()) {
    module_reads_objects_.insert(key);
    return;
  }
  Node* get = append("prim.StateGet", {b.value}, f, n);
  get->attrs().set("module", owner.path);
  get->attrs().set("name", name);
  // Named after the attribute only if it stays (drop_unwritten_state): a name taken now would
  // shift the names of later values of a graph whose reads all go.
  b.value = get->add_output(convert_type(out->type()), "__state_read");
  state_reads_[key].emplace_back(get, name_hint(out));
}

// The reads of attributes forward never writes as state become their initial values (Note
// [Module attributes written in forward]); returns each dropped read's replacement.
std::map<const Value*, Value*> Lifter::drop_unwritten_state() {
  std::map<const Value*, Value*> out;
  std::vector<std::pair<Node*, std::string>> kept;
  for (auto& [key, reads] : state_reads_) {
    if (state_writes_.count(key)) {
      kept.insert(kept.end(), reads.begin(), reads.end());
      continue;
    }
    for (auto& [get, name] : reads) {
      Value* init = get->input(0);
      get->output(0)->replace_all_uses_with(init);
      out[get->output(0)] = init;
      get->destroy();
    }
  }
  // Named in the order the reads were made: the map's keys start with a module's address, and
  // two reads of one name ("scales" of two roi pools) get their suffixes in naming order, which
  // must not depend on where the allocator put the modules.
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.first->output(0)->serial() < b.first->output(0)->serial();
  });
  for (auto& [get, name] : kept) get->output(0)->set_name(name);
  return out;
}

// The class of an object-typed attribute or field (Optional or not); nullptr for anything else.
c10::ClassTypePtr Lifter::object_class(const c10::TypePtr& t) {
  c10::TypePtr e = t;
  if (auto o = t->cast<c10::OptionalType>()) e = o->getElementType();
  auto ct = e->cast<c10::ClassType>();
  return ct && !ct->is_module() ? ct : nullptr;
}

// A read of a module attribute that holds an object and that some method writes (Note [Objects
// as module state]); false for any other attribute.
bool Lifter::lift_object_state_get(const jit::Node* n, Frame& f) {
  auto it = f.env.find(n->input(0));
  if (it == f.env.end() || !it->second.module) return false;
  ModuleRef owner = *it->second.module;
  std::string name = n->s(c10::attr::name);
  std::pair<std::string, std::string> attr{type_key(owner.module.type()), name};
  c10::TypePtr declared = owner.module.type()->findAttribute(name);
  if (!declared || !object_class(declared) || !written_attrs_.count(attr) ||
      warn_only_attrs_.count(attr))
    return false;
  f.env[n->output()] =
      read_object_state(owner, name, name, declared, owner.module.attr(name), f, n);
  return true;
}

// A prim.StateGet (with its output) or prim.StateSet of one slot of an object kept as state.
Node* Lifter::state_node(const char* op, Value* in, const ModuleRef& owner, const std::string& slot,
                         const std::string& attr, Frame& f, const jit::Node* n) {
  auto key = std::make_pair(static_cast<const void*>(owner.module._ivalue().get()), slot);
  auto [it, fresh] = slot_attrs_.emplace(key, attr);
  if ((fresh && owner.module.hasattr(slot)) || it->second != attr)
    unsupported(n,
                "the module attribute '" + join_path(owner.path, attr) +
                    "' holds an object kept between calls, whose state slot '" + slot +
                    "' would be " +
                    (it->second != attr ? "that of '" + it->second + "' too"
                                        : "an attribute the module already has"),
                f, "rename the attribute");
  slot_paths_.insert(join_path(owner.path, slot));
  Node* s = append(op, {in}, f, n);
  s->attrs().set("module", owner.path);
  s->attrs().set("name", slot);
  return s;
}

// The object an object-typed state attribute (or a field of one, `slot` being its slot prefix)
// holds: a binding whose fields are reads of the slots (Note [Objects as module state]).
Binding Lifter::read_object_state(const ModuleRef& owner, const std::string& slot,
                                  const std::string& attr, const c10::TypePtr& type,
                                  const IValue& init, Frame& f, const jit::Node* n) {
  c10::ClassTypePtr cls = object_class(type);
  auto obj = std::make_shared<ObjectState>();
  obj->type = cls;
  obj->home = cur_;
  obj->in_state = true;
  auto read = [&](const std::string& s, Value* initial, Type t) {
    Node* get = state_node("prim.StateGet", initial, owner, s, attr, f, n);
    Value* v = get->add_output(std::move(t), "__state_read");
    state_reads_[{owner.module._ivalue().get(), s}].emplace_back(get, s);
    return v;
  };
  if (type->cast<c10::OptionalType>())
    obj->is_none =
        read(slot + "_is_none", add_constant(init.isNone(), Type::of(Type::Kind::Bool), f, n),
             Type::of(Type::Kind::Bool));
  for (size_t i = 0; i < cls->numAttributes(); ++i) {
    const std::string& field = cls->getAttributeName(i);
    const c10::TypePtr& ft = cls->getAttribute(i);
    IValue fi = init.isObject() ? init.toObjectRef().getSlot(i) : IValue();
    std::string fslot = slot + "_" + field;
    if (object_class(ft)) {
      obj->fields[field] = read_object_state(owner, fslot, attr + "." + field, ft, fi, f, n);
      continue;
    }
    obj->fields[field] = Binding{read(fslot, constant_value(fi, ft, f, n), convert_type(ft)), {}};
  }
  return Binding{nullptr, {}, obj, nullptr};
}

// A write of an object-typed state attribute (or a field of one): every slot.
void Lifter::write_object_state(const ModuleRef& owner, const std::string& slot,
                                const std::string& attr, const c10::TypePtr& type, const Binding& v,
                                Frame& f, const jit::Node* n) {
  c10::ClassTypePtr cls = object_class(type);
  bool optional = type->cast<c10::OptionalType>() != nullptr;
  auto write = [&](const std::string& s, Value* val) {
    state_node("prim.StateSet", val, owner, s, attr, f, n);
    state_writes_.insert({owner.module._ivalue().get(), s});
  };
  auto presence = [&](bool is_none) {
    write(slot + "_is_none", add_constant(is_none, Type::of(Type::Kind::Bool), f, n));
  };
  if (optional && v.is_value() && v.value->type().kind == Type::Kind::None) return presence(true);
  if (!v.object || v.object->type != cls)
    unsupported(n,
                "the module attribute '" + join_path(owner.path, attr) + "' keeps a " +
                    type_key(cls) +
                    " object between calls and is written with something the lifter cannot "
                    "flatten into its state slots (Note [Objects as module state])",
                f, "assign a new object of that class, or None");
  ObjectState& obj = *v.object;
  for (size_t i = 0; i < cls->numAttributes(); ++i) {
    const std::string& field = cls->getAttributeName(i);
    const c10::TypePtr& ft = cls->getAttribute(i);
    auto it = obj.fields.find(field);
    Binding fb;
    if (it != obj.fields.end())
      fb = it->second;
    else if (obj.stored)
      fb = stored_attr(obj.stored->getSlot(i), ft, f, n);
    else
      unsupported(n,
                  "field '" + field + "' of the " + type_key(cls) + " object written to '" +
                      join_path(owner.path, attr) + "' was never written",
                  f, "write every field in the class's __init__");
    if (object_class(ft)) {
      write_object_state(owner, slot + "_" + field, attr + "." + field, ft, fb, f, n);
      continue;
    }
    if (!fb.is_value())
      unsupported(n,
                  "field '" + field + "' of the object written to '" + join_path(owner.path, attr) +
                      "' holds a module or a tuple of objects",
                  f, "keep tensors, numbers, strings or lists of them in the field");
    write(slot + "_" + field, fb.value);
  }
  if (optional) presence(false);
  obj.in_state = true;
}

// Reads of object slots (Note [Objects as module state]) whose value nothing uses.
bool Lifter::drop_unused_slot_reads() {
  bool dropped = false;
  if (slot_paths_.empty()) return false;  // no object slots: no walk over a deep model's graph
  for (Node* n : graph_->all_nodes())
    if (n->is("prim.StateGet") && !n->output(0)->has_uses() && slot_paths_.count(state_path(*n))) {
      n->destroy();
      dropped = true;
    }
  return dropped;
}

// A field of an object, or an attribute of a module that forward wrote (Note [Module attributes
// written in forward]); false for a plain module attribute read (recorded as read).
bool Lifter::lift_object_get_attr(const jit::Node* n, Frame& f) {
  const Binding& b = binding_of(f, n->input(0));
  std::string name = n->s(c10::attr::name);
  if (b.object) {
    auto it = b.object->fields.find(name);
    if (it == b.object->fields.end() && b.object->stored) {
      Binding v = stored_attr(b.object->stored->getAttr(name), n->output()->type(), f, n);
      f.env[n->output()] = v;
      return true;
    }
    if (it == b.object->fields.end())
      unsupported(n,
                  "field '" + name + "' of a " + type_key(b.object->type) +
                      " object is read before it is written",
                  f, "write the field in the class's __init__");
    f.env[n->output()] = it->second;
    return true;
  }
  if (!b.module) return false;
  auto key = std::make_pair(static_cast<const void*>(b.module->module._ivalue().get()), name);
  auto w = module_writes_.find(key);
  if (w != module_writes_.end()) {
    f.env[n->output()] = w->second;
    return true;
  }
  module_reads_.insert(key);
  return false;
}

// An attribute value of an object or module kept in the model: an object is a stored
// ObjectState, anything else a constant.
Binding Lifter::stored_attr(const IValue& v, const c10::TypePtr& type, Frame& f,
                            const jit::Node* n) {
  if (v.isObject() && !v.toObjectRef().type()->is_module()) {
    auto obj = std::make_shared<ObjectState>();
    obj->type = v.toObjectRef().type();
    obj->stored = v.toObject();
    return Binding{nullptr, {}, obj, nullptr};
  }
  return Binding{constant_value(v, type, f, n), {}};
}

// A method of an object's class, inlined with the object as self.
void Lifter::lift_object_call(const jit::Node* n, const std::shared_ptr<ObjectState>& obj,
                              Frame& f) {
  std::string method = n->s(c10::attr::name);
  jit::Function* fn = obj->type->findMethod(method);
  if (!fn || !fn->isGraphFunction())
    unsupported(n, "class " + type_key(obj->type) + " has no TorchScript method " + method, f,
                "re-export the model");
  std::shared_ptr<jit::Graph> g = prepared(jit::toGraphFunction(*fn).graph(), f.self.module, false);
  Frame sub;
  sub.self = f.self;
  sub.scope = f.scope;
  lift_inlined(n, g, sub, f);
}

// Note [with statements]
// TorchScript compiles `with obj:` to prim::Enter(obj) before the body and prim::Exit(obj) after
// it; they call the object's __enter__ and __exit__(None, None, None), methods compiled into the
// archive like any class's. `with torch.no_grad():` is the common one: its __enter__ keeps
// torch.is_grad_enabled() in a field and calls torch.set_grad_enabled(False), its __exit__ sets
// the kept mode back. Both calls are inlined like other object methods (Note [Objects while
// lifting]), so the IR holds the torch.set_grad_enabled effects in program order and the
// generated Python reads `prev = torch.is_grad_enabled()`, `torch.set_grad_enabled(False)`, ...,
// `torch.set_grad_enabled(prev)`. One difference remains, on the error path only: when the body
// raises, the caller of the TorchScript model gets its own mode back, while the generated Python
// leaves the mode the block set (writing the block as `with torch.no_grad():` would close it).
void Lifter::lift_with(const jit::Node* n, Frame& f) {
  bool enter = n->kind() == c10::prim::Enter;
  const Binding& b = binding_of(f, n->input(0));
  if (!b.object)
    unsupported(n, "a `with` statement on a value that is not a TorchScript object", f,
                "move the `with` out of the scripted code");
  std::shared_ptr<ObjectState> obj = b.object;
  jit::Function* fn = obj->type->findMethod(enter ? "__enter__" : "__exit__");
  if (!fn || !fn->isGraphFunction())
    unsupported(n,
                "class " + type_key(obj->type) + " has no TorchScript method " +
                    (enter ? "__enter__" : "__exit__"),
                f, "re-export the model");
  std::shared_ptr<jit::Graph> g = prepared(jit::toGraphFunction(*fn).graph(), f.self.module, false);
  Frame sub;
  sub.self = f.self;
  sub.scope = f.scope;
  // __exit__(self, exc_type, exc_value, traceback): no exception, so None for the three.
  for (size_t i = n->inputs().size(); i < g->inputs().size(); ++i)
    sub.env[g->inputs()[i]] =
        Binding{add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n), {}};
  lift_inlined(n, g, sub, f);
}

// A tuple that holds a module or an object (ImageList and the targets, returned by a
// transform's forward) is a tuple of bindings.
bool Lifter::lift_tuple_of_refs(const jit::Node* n, Frame& f) {
  auto items = std::make_shared<std::vector<Binding>>();
  bool refs = false;
  for (const jit::Value* v : n->inputs()) {
    items->push_back(binding_of(f, v));
    refs |= !items->back().is_value();
  }
  if (!refs) return false;
  f.env[n->output()] = Binding{nullptr, {}, nullptr, items};
  return true;
}

// prim::TupleUnpack / prim::TupleIndex of a tuple of bindings.
bool Lifter::lift_unpack_refs(const jit::Node* n, Frame& f) {
  const Binding& b = binding_of(f, n->input(0));
  if (!b.tuple) return false;
  auto items = b.tuple;  // f.env may rehash below
  if (n->kind() == c10::prim::TupleUnpack) {
    for (size_t i = 0; i < n->outputs().size(); ++i) f.env[n->output(i)] = items->at(i);
    return true;
  }
  auto index = jit::toIValue(n->input(1));
  if (!index || !index->isInt())
    unsupported(n, "a tuple holding an object is indexed with a computed index", f,
                "index it with a constant");
  int64_t i = index->toInt();
  if (i < 0) i += static_cast<int64_t>(items->size());
  f.env[n->output()] = items->at(static_cast<size_t>(i));
  return true;
}

}  // namespace tt::ts
