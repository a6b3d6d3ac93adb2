// The TorchScript lifter (lifter.h): weights, values, constants and the node dispatch.
#include "loaders/torchscript/lifter.h"

#include "loaders/jit_builtins.h"
#include "passes/pass.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

namespace tt::ts {

std::unique_ptr<Graph> Lifter::run() {
  graph_ = std::make_unique<Graph>();
  collect_weights(root_, "");
  find_attr_writes();
  auto method = root_.find_method("forward");
  if (!method)
    throw Error(ExitCode::Unsupported,
                "the TorchScript module has no forward method — export a module whose forward "
                "computes the model");
  std::shared_ptr<jit::Graph> g = prepared(method->graph(), root_, false);
  Frame f;
  f.self = {root_, ""};
  f.env[g->inputs().at(0)] = Binding{nullptr, f.self};
  for (size_t i = 1; i < g->inputs().size(); ++i) {
    const jit::Value* in = g->inputs()[i];
    f.env[in] = Binding{graph_->add_input(convert_type(in->type()), name_hint(in)), {}};
  }
  lift_block(*g->block(), f);
  read_input_defaults(method->function().getSchema());
  for (const jit::Value* out : g->outputs()) graph_->add_output(value_of(f, out, nullptr));
  std::map<const Value*, Value*> unstated = drop_unwritten_state();
  // A prepared copy of a scripted forward renumbers the values without a name of their own:
  // only named ones are the archive's.
  bool own_graph = g == method->graph();
  std::vector<std::pair<std::string, std::string>> sources;  // before the sweep frees values
  for (const jit::Node* n : g->block()->nodes())
    for (const jit::Value* o : n->outputs()) {
      auto it = f.env.find(o);
      if (it == f.env.end() || !it->second.value) continue;
      auto u = unstated.find(it->second.value);  // a state read that became its initial value
      const Value* v = u == unstated.end() ? it->second.value : u->second;
      if (o->type()->cast<c10::TensorType>() && (own_graph || o->hasDebugName()))
        sources.emplace_back(v->name(), o->debugName());
    }
  bool slot_reads_dropped = drop_unused_slot_reads();  // Note [Objects as module state]
  sweep_dead_prims();
  // A node with blocks anywhere lies in (or is) a top-level node with blocks.
  bool scripted = false;
  for (const Node* n = graph_->block()->front(); n && !scripted; n = n->next())
    scripted = !n->blocks().empty();
  if (message_args_dropped_ || scripted || slot_reads_dropped) {
    // What only a dropped message read may be an If result too (`if mask is not None:
    // mask_dtype = mask.dtype`, read by a raise's f-string): dead-code elimination drops it.
    // So does a scripted callee's result its caller drops (torchaudio's EmformerAttention
    // computes tanh(output_mems), which Emformer without memory never reads): the generated
    // code would keep it as an unused local.
    Diagnostics quiet;
    PassContext ctx(quiet);
    run_dce(*graph_, ctx);
    // Slot reads only dead code used (`map_levels_is_none` of a dropped `not`).
    if (drop_unused_slot_reads()) run_dce(*graph_, ctx);
  }
  if (source_values_)
    for (auto& s : sources)
      if (graph_->find_value(s.first)) source_values_->push_back(std::move(s));
  return std::move(graph_);
}

// State_dict order: each module's parameters, then its buffers, then its children.
void Lifter::collect_weights(const jit::Module& m, const std::string& prefix) {
  for (const auto& p : m.named_parameters(/*recurse=*/false))
    add_weight(join_path(prefix, p.name), p.value, true);
  for (const auto& b : m.named_buffers(/*recurse=*/false))
    add_weight(join_path(prefix, b.name), b.value, false);
  for (const auto& c : m.named_children()) {
    // A quantized module's packed weights and scale (Note [Quantized modules]); its children
    // (nnq.Linear's _packed_params holder, QFunctional's observer) hold no state of their own.
    if (auto q = quantized_state(c.value, &m, c.name)) {
      std::string path = join_path(prefix, c.name);
      for (const auto& p : c.value.named_parameters(false))
        add_weight(join_path(path, p.name), p.value, true);
      for (const auto& b : c.value.named_buffers(false))
        add_weight(join_path(path, b.name), b.value, false);
      for (const auto& [name, t] : *q) add_weight(join_path(path, name), t, false);
      continue;
    }
    collect_weights(c.value, join_path(prefix, c.name));
  }
}

// A module's parameters/buffers, recursively, by relative name in state_dict order.
void Lifter::collect_names(const jit::Module& m, const std::string& prefix,
                           std::vector<std::pair<std::string, bool>>& out) {
  for (const auto& p : m.named_parameters(false)) out.emplace_back(join_path(prefix, p.name), true);
  for (const auto& b : m.named_buffers(false)) out.emplace_back(join_path(prefix, b.name), false);
  for (const auto& c : m.named_children()) collect_names(c.value, join_path(prefix, c.name), out);
}

void Lifter::add_weight(const std::string& name, const at::Tensor& t, bool is_param) {
  // Detached and contiguous; the storage is shared with the module but reference-counted, so it
  // outlives the jit::Module.
  graph_->weights().set(name, Weight{t.detach().contiguous(), is_param});
  state_dict_names_.insert(name);
}

std::string Lifter::name_hint(const jit::Value* v) {
  return v->hasDebugName() ? sanitize_name(v->debugName()) : "";
}

Value* Lifter::value_of(Frame& f, const jit::Value* v, const jit::Node* user, IntRole role) {
  auto it = f.env.find(v);
  if (it == f.env.end())
    throw Error(ExitCode::Internal, "value %" + v->debugName() + " used before it is defined");
  if (!it->second.value && !it->second.module)
    unsupported(
        user,
        "a TorchScript object (or a tuple holding one) is used as a value: returned, stored "
        "in a list or dict, an `if` result, a loop-carried value or an op's argument",
        f, "use its fields instead of the object (Note [Objects while lifting])");
  if (!it->second.value)
    unsupported(user, "a module object is used as a value", f,
                "only calls of submodules and reads of their tensors are supported");
  Value* val = it->second.value;
  if (role == IntRole::Plain) return val;
  return typed_int(val, role, f, user);
}

// An int constant re-typed as ScalarType/Layout/MemoryFormat for the argument it feeds.
Value* Lifter::typed_int(Value* val, IntRole role, Frame& f, const jit::Node* user) {
  const AttrValue* c = val->constant();
  if (!c) int_roles_.insert(val);  // Note [Forward defaults] in ir.h: read_input_defaults
  if (!c || !std::holds_alternative<int64_t>(*c) || val->type().kind != Type::Kind::Int) return val;
  // Per block: a constant made inside one branch is not visible in the other.
  auto key = std::make_tuple(val, static_cast<int>(role), cur_);
  auto it = typed_consts_.find(key);
  if (it != typed_consts_.end()) return it->second;
  int64_t i = std::get<int64_t>(*c);
  Value* out = nullptr;
  switch (role) {
    case IntRole::ScalarType:
      out = add_constant(dtype_from_scalar_type(i), Type::of(Type::Kind::ScalarType), f, user);
      break;
    case IntRole::Layout:
      out = add_constant(i, Type::of(Type::Kind::Layout), f, user);
      break;
    case IntRole::MemoryFormat:
      out = add_constant(i, Type::of(Type::Kind::MemoryFormat), f, user);
      break;
    case IntRole::Plain:
      return val;
  }
  typed_consts_[key] = out;
  return out;
}

namespace {

// A forward argument's default as the IR holds it (Note [Forward defaults] in ir.h), if it can.
std::optional<AttrValue> default_attr(const IValue& iv, const Type& t) {
  if (iv.isNone()) return AttrValue{NoneAttr{}};
  if (iv.isBool()) return AttrValue{iv.toBool()};
  if (iv.isInt()) {
    bool as_float = contained_type(t).kind == Type::Kind::Float;
    return as_float ? AttrValue{static_cast<double>(iv.toInt())} : AttrValue{iv.toInt()};
  }
  if (iv.isDouble()) return AttrValue{iv.toDouble()};
  if (iv.isComplexDouble()) {
    c10::complex<double> z = iv.toComplexDouble();
    return AttrValue{std::complex<double>(z.real(), z.imag())};
  }
  if (iv.isString()) return AttrValue{iv.toStringRef()};
  if (iv.isDevice()) return AttrValue{DeviceAttr{iv.toDevice().str()}};
  if (iv.isIntList()) return AttrValue{iv.toIntVector()};
  if (iv.isDoubleList()) return AttrValue{iv.toDoubleVector()};
  // Lists of strs, and tuples of ints, floats or strs (held as lists of their items).
  std::vector<IValue> items;
  if (iv.isList()) {
    for (const IValue& e : iv.toListRef()) items.push_back(e);
    if (items.empty() || !items[0].isString()) return std::nullopt;
  } else if (iv.isTuple()) {
    const auto& elems = iv.toTupleRef().elements();
    items.assign(elems.begin(), elems.end());
    if (items.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  auto all = [&](bool (IValue::*is)() const) {
    return std::all_of(items.begin(), items.end(), [&](const IValue& e) { return (e.*is)(); });
  };
  if (all(&IValue::isInt)) {
    std::vector<int64_t> out;
    for (const IValue& e : items) out.push_back(e.toInt());
    return AttrValue{out};
  }
  if (all(&IValue::isDouble)) {
    std::vector<double> out;
    for (const IValue& e : items) out.push_back(e.toDouble());
    return AttrValue{out};
  }
  if (all(&IValue::isString)) {
    std::vector<std::string> out;
    for (const IValue& e : items) out.push_back(e.toStringRef());
    return AttrValue{out};
  }
  return std::nullopt;
}

}  // namespace

void Lifter::read_input_defaults(const c10::FunctionSchema& schema) {
  const auto& args = schema.arguments();  // self first
  const auto& inputs = graph_->inputs();
  if (args.size() != inputs.size() + 1) return;  // not the graph's signature: keep none
  // From the last argument back: Python only allows defaults on a trailing run, so one that
  // cannot be kept ends the run (the arguments before it are then required too).
  // TorchScript holds a dtype, layout or memory format as an int (`dtype: torch.dtype =
  // torch.float64` is `int dtype=7`), which Python does not take for one (and `x.dtype == 7` is
  // False there): an int argument the model uses as one, or beside one, gets no default.
  auto dtype_like = [&](const Value* in) {
    if (int_roles_.count(in)) return true;
    for (const Use& u : in->uses()) {
      const Node* n = u.user;
      for (const auto* vs : {&n->inputs(), &n->outputs()})
        for (const Value* v : *vs) {
          Type::Kind k = v ? v->type().kind : Type::Kind::Any;
          if (k == Type::Kind::ScalarType || k == Type::Kind::Layout ||
              k == Type::Kind::MemoryFormat)
            return true;
        }
    }
    return false;
  };
  for (size_t i = inputs.size(); i-- > 0;) {
    const c10::Argument& a = args[i + 1];
    if (!a.default_value()) return;
    std::optional<AttrValue> v = default_attr(*a.default_value(), inputs[i]->type());
    std::string why = "cannot be written in NAME.py";
    if (v && std::holds_alternative<int64_t>(*v) && dtype_like(inputs[i])) {
      v.reset();
      why =
          "is an int to TorchScript, but the model uses the argument as a dtype, layout or "
          "memory format, which NAME.py would not take an int for";
    }
    if (!v || !default_fits(inputs[i]->type(), *v)) {
      std::ostringstream text;
      text << *a.default_value();
      diags_.warn(
          "forward-default",
          "the default " + text.str() + " of forward argument '" + a.name() + "' " + why +
              (i && args[i].default_value() ? " (nor those of the arguments before it)" : "") +
              ": pass it explicitly when calling the converted model");
      return;
    }
    graph_->set_input_default(inputs[i], std::move(*v));
  }
}

Node* Lifter::append(const std::string& op, const std::vector<Value*>& ins, Frame& f,
                     const jit::Node* src) {
  Node* n = graph_->create(op, ins, 0);
  n->set_scope(f.scope);
  if (src) n->set_loc(node_loc(src));
  (cur_ ? cur_ : graph_->block())->append(n);
  return n;
}

// A node for `src` whose outputs are bound to src's outputs.
Node* Lifter::emit(const std::string& op, const std::vector<Value*>& ins, const jit::Node* src,
                   Frame& f) {
  Node* n = append(op, ins, f, src);
  for (const jit::Value* o : src->outputs())
    f.env[o] = Binding{n->add_output(convert_type(o->type()), name_hint(o)), {}};
  return n;
}

Value* Lifter::add_constant(AttrValue v, Type t, Frame& f, const jit::Node* src) {
  Node* n = append("prim.Constant", {}, f, src);
  n->attrs().set("value", std::move(v));
  return n->add_output(std::move(t));
}

Value* Lifter::constant_value(const IValue& iv, const c10::TypePtr& type, Frame& f,
                              const jit::Node* src) {
  if (iv.isNone()) return add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, src);
  if (iv.isBool()) return add_constant(iv.toBool(), Type::of(Type::Kind::Bool), f, src);
  if (iv.isInt()) return add_constant(iv.toInt(), Type::of(Type::Kind::Int), f, src);
  if (iv.isDouble()) return add_constant(iv.toDouble(), Type::of(Type::Kind::Float), f, src);
  if (iv.isComplexDouble()) {  // Note [Complex scalars]
    c10::complex<double> z = iv.toComplexDouble();
    return add_constant(std::complex<double>(z.real(), z.imag()), Type::of(Type::Kind::Complex), f,
                        src);
  }
  if (iv.isString()) return add_constant(iv.toStringRef(), Type::of(Type::Kind::Str), f, src);
  if (iv.isDevice())
    return add_constant(DeviceAttr{iv.toDevice().str()}, Type::of(Type::Kind::Device), f, src);
  if (iv.isIntList())
    return add_constant(iv.toIntVector(), Type::list(Type::of(Type::Kind::Int)), f, src);
  if (iv.isDoubleList())
    return add_constant(iv.toDoubleVector(), Type::list(Type::of(Type::Kind::Float)), f, src);
  if (iv.isBoolList()) {
    std::vector<int64_t> bits;
    for (bool b : iv.toBoolList()) bits.push_back(b ? 1 : 0);
    return add_constant(bits, Type::list(Type::of(Type::Kind::Bool)), f, src);
  }
  if (iv.isEnum()) {  // a member is its value, its type the class (Note [Enum types])
    Type t = convert_type(iv.toEnumHolder()->type());
    const IValue& v = iv.toEnumHolder()->value();
    if (t.is_enum()) {
      if (v.isInt()) return add_constant(v.toInt(), t, f, src);
      if (v.isDouble()) return add_constant(v.toDouble(), t, f, src);
      if (v.isString()) return add_constant(v.toStringRef(), t, f, src);
    }
  }
  if (iv.isTensor()) return tensor_constant(iv.toTensor(), f, src, "a tensor constant");
  if (iv.isTensorList()) {
    // A list of tensors kept as a plain attribute (SSD's DefaultBoxes._wh_pairs): a new list of
    // the tensor constants, as the attribute's list is never changed (Note [Container mutation
    // while lifting]).
    std::vector<Value*> items;
    for (const at::Tensor& t : iv.toTensorVector())
      items.push_back(tensor_constant(t, f, src, "a tensor in a list constant"));
    Node* n = append("prim.ListConstruct", items, f, src);
    return n->add_output(Type::list(Type::tensor()));
  }
  if (iv.isList()) {
    auto list = iv.toListRef();
    if (std::all_of(list.begin(), list.end(), [](const IValue& e) { return e.isString(); })) {
      std::vector<std::string> strs;
      for (const IValue& e : list) strs.push_back(e.toStringRef());
      return add_constant(strs, Type::list(Type::of(Type::Kind::Str)), f, src);
    }
  }
  if (iv.isGenericDict()) {
    // A dict the JIT's constant propagation made (`losses = {}` in torchvision's detectors): a
    // new dict of the constant items, in order.
    auto dt = type ? type->cast<c10::DictType>() : nullptr;
    std::vector<Value*> items;
    for (const auto& kv : iv.toGenericDict()) {
      items.push_back(constant_value(kv.key(), dt ? dt->getKeyType() : nullptr, f, src));
      items.push_back(constant_value(kv.value(), dt ? dt->getValueType() : nullptr, f, src));
    }
    Node* n = append("prim.DictConstruct", items, f, src);
    return n->add_output(type ? convert_type(type) : Type{});
  }
  if (iv.isTuple()) {
    std::vector<Value*> elems;
    auto tt = type ? type->cast<c10::TupleType>() : nullptr;
    const auto& items = iv.toTupleRef().elements();
    for (size_t i = 0; i < items.size(); ++i)
      elems.push_back(constant_value(
          items[i], tt && i < tt->elements().size() ? tt->elements()[i] : nullptr, f, src));
    Node* n = append("prim.TupleConstruct", elems, f, src);
    std::vector<Type> types;
    for (Value* e : elems) types.push_back(e->type());
    Type out = Type::tuple(types);
    if (tt && tt->name()) {  // a NamedTuple constant keeps its class (Note [NamedTuple types])
      Type named = convert_type(type);
      out = Type::named_tuple(named.name, named.fields, types);
    }
    return n->add_output(out);
  }
  unsupported(
      src, "a constant of type " + (type ? type->repr_str() : iv.tagKind()), f,
      "only None, bool, int, float, str, device, enums, lists, tuples and tensors are supported");
}

// Tensors of up to 16 elements are inline constants; larger ones become buffers "_constants.cN"
// (one per distinct tensor), with a warning: the original state_dict has no such key.
//
// Note [One buffer per constant tensor]
// A tensor is known by its TensorImpl: the one the model holds (a module attribute, a
// prim::Constant of a graph and its prepared copies), not that of `raw.detach()`, which is new at
// every call (a list attribute read twice, like AnchorGenerator.cell_anchors read by
// set_cell_anchors and as module state, gave a second set of buffers that NAME.py never read).
// The map keeps the tensor alive, so its address is not reused by another tensor while lifting.
Value* Lifter::tensor_constant(const at::Tensor& raw, Frame& f, const jit::Node* src,
                               const std::string& what) {
  at::Tensor t = raw.detach();
  Type type =
      Type::tensor(dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())), t.sizes().vec());
  if (t.numel() <= 16) return add_constant(t.clone().contiguous(), type, f, src);
  const void* key = raw.unsafeGetTensorImpl();
  std::string name;
  auto it = constant_buffers_.find(key);
  if (it != constant_buffers_.end()) {
    name = it->second.second;
  } else {
    name = graph_->weights().unique_name("_constants.c" + std::to_string(constant_buffers_.size()));
    graph_->weights().set(name, Weight{t.clone().contiguous(), false});
    constant_buffers_[key] = {raw, name};
    diags_.warn("tensor-constant",
                what + " of shape " + shape_str(t) + " became the buffer '" + name +
                    "', whose values only the written .pth holds (NAME.py creates it empty, as "
                    "every weight): the original model's state_dict has no such key, so load the "
                    "written .pth first and the original's checkpoints after it with strict=False",
                "", f.scope, src ? node_loc(src) : "");
  }
  Node* n = append("prim.GetAttr", {}, f, src);
  n->set_weight("value", name);
  return n->add_output(type);
}

void Lifter::unsupported(const jit::Node* n, const std::string& what, const Frame& f,
                         const std::string& fix) const {
  std::string where, loc;
  if (n) {
    loc = node_loc(n);
    // Some nodes (prim::DictConstruct, ...) carry no source range: take their first user's.
    for (size_t i = 0; loc.empty() && i < n->outputs().size(); ++i)
      for (const jit::Use& u : n->outputs()[i]->uses())
        if (loc.empty()) loc = node_loc(u.user);
    // Nor does prim::SetAttr: take the written value's producer's, or the enclosing if's/loop's.
    for (size_t i = n->inputs().size(); loc.empty() && i > 0; --i)
      loc = node_loc(n->input(i - 1)->node());
    for (const jit::Node* o = n->owningBlock()->owningNode(); loc.empty() && o;
         o = o->owningBlock()->owningNode())
      loc = node_loc(o);
    if (!loc.empty()) where += " at " + loc;
  }
  if (!f.scope.empty()) where += " in module '" + f.scope + "'";
  std::string op = n ? kind_str(n) + ": " : "";
  throw Error(ExitCode::Unsupported, op + what + where + " — " + fix).at({"", f.scope, loc});
}

void Lifter::lift_block(const jit::Block& b, Frame& f) {
  for (const jit::Node* n : b.nodes()) lift_node(n, f);
}

// Lifts the JIT block `jb` into the IR block `b` (a branch or a loop body) and sets its outputs.
void Lifter::lift_into(Block* b, const jit::Block& jb, Frame& f, const jit::Node* owner) {
  Block* saved = cur_;
  cur_ = b;
  lift_block(jb, f);
  for (const jit::Value* out : jb.outputs()) b->add_output(value_of(f, out, owner));
  cur_ = saved;
}

const Binding& Lifter::binding_of(Frame& f, const jit::Value* v) {
  auto it = f.env.find(v);
  if (it == f.env.end())
    throw Error(ExitCode::Internal, "value %" + v->debugName() + " used before it is defined");
  return it->second;
}

// isinstance(x, T) that TorchScript left for run time (nn.LSTM's `isinstance(orig_input,
// PackedSequence)`): decided from x's static type when that decides it, as a bool constant. An
// Optional[E] whose E is always a T (and None never) is `x is not None`; one whose E is never a
// T (and None always) is `x is None`. Other run-time tests (of an Any or a Union, which the IR
// has no type for) are refused.
void Lifter::lift_isinstance(const jit::Node* n, Frame& f) {
  c10::TypePtr in = n->input()->type();
  // The Any result of torch.dequantize(t) holds t's type (Note [Builtins the lifter answers]).
  if (auto it = known_types_.find(n->input()); it != known_types_.end()) in = it->second;
  bool open = in->kind() == c10::TypeKind::AnyType || in->kind() == c10::TypeKind::UnionType ||
              in->kind() == c10::TypeKind::OptionalType;
  bool always = false, maybe = false;
  for (const c10::TypePtr& t : n->tys(c10::attr::types)) {
    if (in->isSubtypeOf(*t))
      always = true;
    else if (open || t->isSubtypeOf(*in))
      maybe = true;
  }
  if (!always && maybe) {
    if (const auto opt = in->cast<c10::OptionalType>(); opt && binding_of(f, n->input()).value) {
      const c10::TypePtr& elem = opt->getElementType();
      bool elem_always = false, elem_maybe = false, none_always = false;
      for (const c10::TypePtr& t : n->tys(c10::attr::types)) {
        elem_always |= elem->isSubtypeOf(*t);
        elem_maybe |= t->isSubtypeOf(*elem) || elem->kind() == c10::TypeKind::AnyType ||
                      elem->kind() == c10::TypeKind::UnionType;
        none_always |= c10::NoneType::get()->isSubtypeOf(*t);
      }
      if (elem_always != none_always && (elem_always || !elem_maybe)) {
        Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
        emit(elem_always ? "operator.is_not" : "operator.is_", {inputs_of(n, f)[0], none}, n, f);
        return;
      }
    }
    unsupported(n, "isinstance of a " + in->repr_str() + " decided only at run time", f,
                "give the value a type that decides it");
  }
  f.env[n->output()] = Binding{constant_value(IValue(always), n->output()->type(), f, n), {}};
}

void Lifter::lift_raise(const jit::Node* n, Frame& f) {
  // prim::RaiseException(str msg, str? cls): the message only (an f-string's text when it was
  // formatted, see aten::format below).
  Value* msg = value_of(f, n->input(0), n);
  append("prim.RaiseException", {msg}, f, n);
}

// Note [Generators while lifting]
// `g = torch.Generator(device=d, seed=s)` in a forward (aten::Generator) is a new generator per
// call: torch.Generator(d), then g.manual_seed(s) when s is given (Python's constructor has no
// seed). When its arguments are constants, TorchScript's constant propagation has already run it
// while compiling: the saved code holds a Generator constant, ONE object the module keeps from
// call to call (it also folded g.initial_seed() and g.seed() of it to the numbers they gave then).
// A new generator per call draws what that object draws only when each call seeds it before
// anything else uses it, so the constant's first use must be g.manual_seed(n) in the graph's own
// block (not a branch or loop); otherwise (a draw first: the second call continues the first
// one's numbers) it is refused.
// TorchScript's graph executor also treats aten::Generator and aten::initial_seed as pure: its
// common-subexpression elimination, run when a graph first executes (after inlining called
// methods), makes two torch.Generator(device=x.device) one object, and answers a second
// g.initial_seed() with the first one's number even after g.manual_seed(n) or g.seed() changed
// it (checked on torch 2.6). So a model with more than one generator (constant or made), or more
// than one initial_seed(), is refused rather than guessed at; one generator and one initial_seed()
// leave that elimination nothing to merge. (Random draws are nondeterministic there and never
// merged; a draw whose result is unused was already dropped when the model was scripted.)
void Lifter::lift_generator(const jit::Node* n, Frame& f) {
  if (++generators_ > 1)
    unsupported(n,
                "a second torch.Generator in the model (TorchScript's optimizer may merge "
                "generators made alike into one object)",
                f, "use one torch.Generator in the model");
  Value* device = nullptr;
  Value* seed = nullptr;
  if (n->kind() == c10::prim::Constant) {
    at::Generator gen = jit::toIValue(n->output())->toGenerator();
    const jit::Node* first = nullptr;
    for (const jit::Use& u : n->output()->uses())
      if (!first || u.user->isBefore(first)) first = u.user;
    if (!first) return;  // unused
    if (first->kind() != c10::aten::manual_seed || first->owningBlock() != n->owningBlock())
      unsupported(n,
                  "a torch.Generator constant used before it is seeded on every call (TorchScript "
                  "keeps one generator from call to call)",
                  f, "call g.manual_seed(n) right after torch.Generator() in the forward");
    device = add_constant(DeviceAttr{gen.device().str()}, Type::of(Type::Kind::Device), f, n);
  } else {
    std::vector<Value*> ins = inputs_of(n, f);
    if (ins.size() != 2) unsupported(n, "aten::Generator with other arguments", f, "");
    device = ins[0];
    if (ins[1]->type().kind != Type::Kind::None) seed = ins[1];
    if (seed && seed->type().kind != Type::Kind::Int)
      unsupported(n, "torch.Generator(seed=s) of an Optional[int] seed", f,
                  "pass an int seed, or call g.manual_seed(n)");
  }
  if (device->type().kind == Type::Kind::Device)
    if (const AttrValue* c = device->constant())
      if (const auto* d = std::get_if<DeviceAttr>(c); d && d->name != "cpu")
        unsupported(n, "a torch.Generator on device " + d->name, f, "use a CPU generator");
  Value* none = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
  std::string hint = name_hint(n->output());
  if (hint.empty()) hint = "generator";  // a constant has no name
  Value* g = append("torch.Generator", {device, none}, f, n)
                 ->add_output(Type::of(Type::Kind::Generator), hint);
  if (seed)
    g = append("Generator.manual_seed", {g, seed}, f, n)
            ->add_output(Type::of(Type::Kind::Generator), hint);
  f.env[n->output()] = Binding{g, {}};
}

void Lifter::lift_node(const jit::Node* n, Frame& f) {
  using namespace c10;
  const auto k = n->kind();
  if (k == prim::Constant) {
    // A function value (of a call kept by the preparation): only prim::CallFunction reads it.
    if (n->output()->type()->cast<c10::FunctionType>()) return;
    auto iv = jit::toIValue(n->output());
    if (!iv) unsupported(n, "a constant without a value", f, "re-export the model");
    if (iv->isGenerator()) return lift_generator(n, f);
    f.env[n->output()] = Binding{constant_value(*iv, n->output()->type(), f, n), {}};
    return;
  }
  if (k == prim::GetAttr) return lift_get_attr(n, f);
  if (k == prim::SetAttr) return lift_set_attr(n, f);
  if (k == prim::CreateObject) return lift_create_object(n, f);
  if (k == prim::If) return lift_if(n, f);
  if (k == prim::Loop) return lift_loop(n, f);
  if (k == prim::CallFunction) return lift_call_function(n, f);
  // Note [torch.jit.fork while lifting] (lifter_modules.cpp)
  if (k == prim::fork) return lift_fork(n, f);
  if ((k == aten::wait || kind_str(n) == "prim::awaitable_nowait" ||
       kind_str(n) == "prim::awaitable_wait") &&
      n->inputs().size() == 1 && n->outputs().size() == 1) {
    f.env[n->output()] = binding_of(f, n->input(0));
    return;
  }
  if (k == prim::RaiseException) return lift_raise(n, f);
  if (k == prim::Uninitialized) return void(emit("prim.Uninitialized", {}, n, f));
  if (k == prim::unchecked_cast) {
    f.env[n->output()] = binding_of(f, n->input(0));
    return;
  }
  if (k == prim::isinstance) return lift_isinstance(n, f);
  if (kind_str(n) == "aten::Generator") return lift_generator(n, f);
  if (kind_str(n) == "aten::initial_seed" &&
      ++initial_seeds_ > 1)  // Note [Generators while lifting]
    unsupported(n,
                "a second g.initial_seed() in the model (TorchScript's optimizer answers it with "
                "the first one's number, even after the seed changed)",
                f, "call g.initial_seed() once");
  if (k == aten::warn) return;  // a warning has no result
  if (k == prim::Print) return void(append("prim.Print", inputs_of(n, f), f, n));
  if (k == prim::Enter || k == prim::Exit) return lift_with(n, f);
  if (k == aten::format) {
    // An exception message keeps the format string as its text; any other use (nn.MultiheadAttention
    // keeps the reason why its fast path is not taken) formats for real: "...".format(args).
    bool only_raise =
        std::all_of(n->output()->uses().begin(), n->output()->uses().end(),
                    [](const jit::Use& u) { return u.user->kind() == prim::RaiseException; });
    if (only_raise) {
      f.env[n->output()] = binding_of(f, n->input(0));
      message_args_dropped_ |= n->inputs().size() > 1;
      return;
    }
    require_exact_text(n, f);  // Note [Text of numbers]
    emit("str.format", inputs_of(n, f), n, f);
    return;
  }
  if ((k == aten::__is__ || k == aten::__isnot__) && n->inputs().size() == 2) {
    // `obj is None` of a TorchScript object or a module (Note [Objects while lifting]): such a
    // binding is never None, so the answer is known while lifting.
    for (size_t i = 0; i < 2; ++i) {
      const Binding& b = binding_of(f, n->input(i));
      bool none_other = n->input(1 - i)->type()->kind() == c10::TypeKind::NoneType;
      if (b.object && b.object->is_none && none_other) {
        // An Optional object kept as module state (Note [Objects as module state]).
        Value* r = b.object->is_none;
        if (k == aten::__isnot__)
          r = append("operator.not_", {r}, f, n)
                  ->add_output(Type::of(Type::Kind::Bool), name_hint(n->output()));
        f.env[n->output()] = Binding{r, {}};
        return;
      }
      bool never_none = b.object || b.module;
      if (!never_none && b.value) {
        Type::Kind kind = b.value->type().kind;
        never_none = kind == Type::Kind::List || kind == Type::Kind::Tensor ||
                     kind == Type::Kind::Int || kind == Type::Kind::Float ||
                     kind == Type::Kind::Bool || kind == Type::Kind::Str;
      }
      if (never_none && n->input(1 - i)->type()->kind() == c10::TypeKind::NoneType) {
        Value* c = add_constant(k == aten::__isnot__, Type::of(Type::Kind::Bool), f, n);
        f.env[n->output()] = Binding{c, {}};
        return;
      }
    }
  }
  if (k == prim::CallMethod) return lift_call(n, f);
  if (lift_answered_builtin(n, f)) return;
  if (const char* op = container_mutation_op(n)) return lift_container_mutation(n, op, f);
  if ((k == aten::list || k == aten::copy) && n->inputs().size() == 1 &&
      n->input(0)->type()->cast<c10::ListType>()) {
    // list(l) / l.copy() as list(l): a list even when l is x.size() (a torch.Size in Python).
    return void(emit("list", inputs_of(n, f), n, f));
  }
  if (k == prim::dtype || k == prim::device || kind_str(n) == "prim::is_nested" ||
      k == prim::is_cuda || kind_str(n) == "prim::requires_grad" ||
      (kind_str(n) == "prim::type" && n->inputs().size() == 1 &&
       n->input(0)->type()->kind() == c10::TypeKind::DeviceObjType)) {
    // x.dtype / x.device / x.is_nested (tensor attributes; nn.LSTM and nn.MultiheadAttention read them)
    static const std::map<std::string, std::pair<const char*, Type::Kind>> attrs = {
        {"prim::dtype", {"Tensor.dtype", Type::Kind::ScalarType}},
        {"prim::device", {"Tensor.device", Type::Kind::Device}},
        {"prim::is_nested", {"Tensor.is_nested", Type::Kind::Bool}},
        {"prim::is_cuda", {"Tensor.is_cuda", Type::Kind::Bool}},
        {"prim::requires_grad", {"Tensor.requires_grad", Type::Kind::Bool}},
        {"prim::type", {"Device.type", Type::Kind::Str}}};
    const auto& a = attrs.at(kind_str(n));
    Node* d = append(a.first, {value_of(f, n->input(0), n)}, f, n);
    f.env[n->output()] = Binding{d->add_output(Type::of(a.second), name_hint(n->output())), {}};
    return;
  }
  if (kind_str(n) == "prim::tolist") {
    // x.tolist(): the dim and element type inputs only repeat what TorchScript checks of x.
    return void(emit("Tensor.tolist", {value_of(f, n->input(0), n)}, n, f));
  }
  if (k == prim::ListConstruct) return void(emit("prim.ListConstruct", inputs_of(n, f), n, f));
  if (k == prim::TupleConstruct) {
    if (lift_tuple_of_refs(n, f)) return;
    return void(emit("prim.TupleConstruct", inputs_of(n, f), n, f));
  }
  if ((k == prim::TupleUnpack || k == prim::TupleIndex) && lift_unpack_refs(n, f)) return;
  // A dict of results (torchvision's segmentation models return {"out": ..., "aux": ...}).
  if (k == prim::DictConstruct) return void(emit("prim.DictConstruct", inputs_of(n, f), n, f));
  if (k == prim::NumToTensor) return void(emit("prim.NumToTensor", inputs_of(n, f), n, f));
  if (k == prim::ListUnpack || k == prim::TupleUnpack) return lift_unpack(n, f);
  if (k == prim::TupleIndex) return lift_tuple_index(n, f);
  // prim ops with a schema (prim::max.int, prim::min.self_int) are builtins like aten's
  bool prim_builtin = k.is_prim() && n->maybeSchema() &&
                      find_jit_only_operator(qualified_overload(*n->maybeSchema()));
  if (!n->blocks().empty() || (k.is_prim() && !prim_builtin)) {
    unsupported(
        n, "this TorchScript construct is not supported", f,
        "rewrite that part of the model, or trace it with torch.jit.trace(model.eval(), example)");
  }
  lift_op(n, f);
}

// Note [Builtins the lifter answers]
// TorchScript builtins whose answer the lifter knows or writes otherwise (each refused where it
// cannot be exact):
//   torch.overrides.has_torch_function(args)  always False in TorchScript (register_prim_ops.cpp
//                                  pushes false: no __torch_function__ in a scripted model), so
//                                  the constant False, also where Python would say True;
//   hash(n) of an int              n itself (std::hash of an int64); Python's hash differs for -1
//                                  and beyond 2**61, so the lifter uses n. Of floats and strings
//                                  it is C++'s std::hash, which has no Python spelling: refused;
//   sorted(l) of a generic list    the sorted row, where Python orders the items alike (Note
//                                  [Orders Python shares], lifter_control.cpp); refused otherwise.
//   torch.einsum(a, [0, 1], b, [1, 2], [0, 2])  (aten::einsum.sublist, a vararg) torch.einsum of
//                                  the equation TorchScript builds from the lists (vararg_functions
//                                  .cpp: 0-25 are 'A'-'Z', 26-51 'a'-'z', "->" before an output
//                                  list), when every list is a constant; refused otherwise.
//   "%d of %s" % (n, s)            (aten::percentFormat, a vararg) Python's `%`, when the format
//                                  is a constant whose specifiers are %d, %i (of ints), %s (of
//                                  ints and strings) and %%: there TorchScript's text (vararg_
//                                  functions.cpp) is Python's. %f, %e, %c, widths, flags and
//                                  other argument types are refused (C++'s float text differs).
//   id(a) == id(b), id(a) != id(b)  (prim::id takes a TorchScript object, a module or None) the
//                                  constant answer: the lifter knows which object each binding
//                                  is (Note [Objects while lifting]). TorchScript's id is the
//                                  object's address (0 for None), Python's another number, so an
//                                  id used any other way (returned, printed, compared with <,
//                                  hashed, a dict key, arithmetic) is refused, as are ids of
//                                  objects kept as module state (each read binds anew).
//                                  TorchScript folds id(None) to the constant 0, which stands
//                                  for None's id here; a submodule two attributes share in eager
//                                  is two objects once scripted (checked): the answer is
//                                  TorchScript's.
//   torch.dequantize(t) of a tuple (aten::dequantize.any, an Any result) the tuple rebuilt with
//                                  each Tensor item dequantized (aten::dequantize.self: a float
//                                  tensor stays the same tensor) and the other items kept as they
//                                  are (the same list, not a copy), as register_prim_ops.cpp's
//                                  dequantize does; the result's type is t's, so isinstance of it
//                                  is known. Refused: an item that is a tensor or not only at
//                                  run time (Optional[Tensor], Any), and a value typed Any (an
//                                  item of a List[Any]: TorchScript dequantizes a List[Tensor]'s
//                                  items and raises for other values, a lone tensor too). A
//                                  List[Tensor] passed to a parameter typed Any is not .any once
//                                  the call is inlined: TorchScript itself then runs
//                                  aten::dequantize.tensors on it (checked), as the lifter does.
bool Lifter::lift_answered_builtin(const jit::Node* n, Frame& f) {
  const std::string k = kind_str(n);
  if (k == "aten::has_torch_function" && n->outputs().size() == 1) {
    f.env[n->output()] = Binding{add_constant(false, Type::of(Type::Kind::Bool), f, n), {}};
    return true;
  }
  if (k == "aten::hash" && n->inputs().size() == 1) {
    if (n->input(0)->type()->kind() != c10::TypeKind::IntType)
      unsupported(n,
                  "hash() of a " + n->input(0)->type()->repr_str() +
                      " (TorchScript's is C++'s std::hash, Python's differs)",
                  f, "hash an int, or compute the key in the model's own code");
    f.env[n->output()] = binding_of(f, n->input(0));
    return true;
  }
  if (k == "aten::percentFormat" && n->inputs().size() == 2) return lift_percent_format(n, f);
  if (k == "prim::id" && n->inputs().size() == 1) return lift_object_id(n, f);
  if ((k == "aten::eq" || k == "aten::ne") && n->inputs().size() == 2 &&
      (object_ids_.count(n->input(0)) || object_ids_.count(n->input(1)))) {
    std::optional<const void*> a = object_id(n->input(0)), b = object_id(n->input(1));
    if (!a || !b)
      unsupported(n, "an id() compared with a number", f,
                  "compare two ids only: id(a) == id(b) or id(a) != id(b)");
    f.env[n->output()] = Binding{
        add_constant(k == "aten::eq" ? *a == *b : *a != *b, Type::of(Type::Kind::Bool), f, n), {}};
    return true;
  }
  if (k == "aten::dequantize" && n->maybeSchema() && n->maybeSchema()->overload_name() == "any")
    return lift_dequantize_any(n, f);
  if (k == "aten::einsum" && n->maybeSchema() && n->maybeSchema()->overload_name() == "sublist")
    return lift_einsum_sublist(n, f);
  if (k == "aten::sorted" && n->maybeSchema() && n->maybeSchema()->overload_name() == "any") {
    auto lt = n->input(0)->type()->cast<c10::ListType>();
    if (lt && !python_orders_alike(lt->getElementType()))
      unsupported(n,
                  "sorted() of a " + n->input(0)->type()->repr_str() +
                      " orders differently in TorchScript and Python (NaN floats, tensors)",
                  f, "sort a tensor instead (torch.sort)");
  }
  return false;
}

// What the id `v` stands for: the output of a prim::id lifted, or the constant 0 that TorchScript
// folds id(None) to (nullptr); nullopt for any other value.
std::optional<const void*> Lifter::object_id(const jit::Value* v) const {
  if (auto it = object_ids_.find(v); it != object_ids_.end()) return it->second;
  std::optional<IValue> c =
      v->node()->kind() == c10::prim::Constant ? jit::toIValue(v) : std::nullopt;
  if (c && c->isInt() && c->toInt() == 0) return nullptr;
  return std::nullopt;
}

bool Lifter::lift_object_id(const jit::Node* n, Frame& f) {
  const std::string fix = "compare two ids only: id(a) == id(b) or id(a) != id(b)";
  auto an_id = [&](const jit::Value* v) {
    return v->node()->kind() == n->kind() || object_id(v).has_value();
  };
  for (const jit::Use& u : n->output()->uses()) {
    const std::string uk = u.user->kind().toQualString();
    bool compared = (uk == "aten::eq" || uk == "aten::ne") && u.user->inputs().size() == 2 &&
                    an_id(u.user->input(0)) && an_id(u.user->input(1));
    if (!compared)
      unsupported(n,
                  "id() whose value is used by " + uk +
                      " (TorchScript's id is an address, Python's another number)",
                  f, fix);
  }
  const Binding& b = binding_of(f, n->input(0));
  const void* key = nullptr;
  if (b.object && b.object->in_state)
    unsupported(n, "id() of a TorchScript object kept as module state", f, fix);
  if (b.object)
    key = b.object->stored ? static_cast<const void*>(b.object->stored.get()) : b.object.get();
  else if (b.module)
    key = b.module->module._ivalue().get();
  else if (!b.value || !b.value->constant() ||
           !std::holds_alternative<NoneAttr>(*b.value->constant()))
    unsupported(n, "id() of a value the lifter cannot identify", f, fix);
  object_ids_[n->output()] = key;  // nullptr: None (TorchScript's id(None) is 0)
  return true;
}

bool Lifter::lift_dequantize_any(const jit::Node* n, Frame& f) {
  const c10::TypePtr& in = n->input(0)->type();
  auto tt = in->cast<c10::TupleType>();
  if (!tt)
    unsupported(n,
                "torch.dequantize of a value typed " + in->repr_str() +
                    " (what TorchScript does depends on what it holds at run time)",
                f, "give the value its type: a tuple, or dequantize each tensor");
  Value* tuple = value_of(f, n->input(0), n);
  Node* p = tuple->node();
  const auto& elems = tt->elements();
  bool built = p->is("prim.TupleConstruct") && p->num_inputs() == elems.size();
  std::vector<Value*> items;
  for (size_t i = 0; i < elems.size(); ++i) {
    const c10::TypePtr& t = elems[i];
    bool tensor = t->kind() == c10::TypeKind::TensorType;
    if (!tensor && c10::TensorType::get()->isSubtypeOf(*t))
      unsupported(n,
                  "torch.dequantize of a tuple whose item " + std::to_string(i) + " is a " +
                      t->repr_str() + " (a tensor or not only at run time)",
                  f, "give the item the type Tensor");
    Value* item = built ? p->input(i) : nullptr;
    if (!item) {
      Value* index = add_constant(static_cast<int64_t>(i), Type::of(Type::Kind::Int), f, n);
      item = append("prim.TupleIndex", {tuple, index}, f, n)->add_output(convert_type(t), "item");
    }
    if (tensor)
      item = append("aten::dequantize.self", {item}, f, n)->add_output(convert_type(t), "dq");
    items.push_back(item);
  }
  Value* out = append("prim.TupleConstruct", items, f, n)
                   ->add_output(convert_type(in), name_hint(n->output()));
  f.env[n->output()] = Binding{out, {}};
  known_types_[n->output()] = in;
  return true;
}

bool Lifter::lift_percent_format(const jit::Node* n, Frame& f) {
  auto refuse = [&](const std::string& why) {
    unsupported(n, "\"...\" % args " + why, f,
                "use %d and %s of ints and strings only, or \"...{}\".format(args) of them");
  };
  // Only a message's text: Python's may differ there (Note [Text of numbers], lifter_ops.cpp).
  if (only_in_messages(n->output())) {
    emit("operator.mod", inputs_of(n, f), n, f);
    return true;
  }
  std::optional<IValue> fmt = jit::toIValue(n->input(0));
  if (!fmt || !fmt->isString()) refuse("with a format known only at run time");
  const jit::Value* args = n->input(1);
  std::vector<c10::TypePtr> types;
  if (auto tt = args->type()->cast<c10::TupleType>())
    types = tt->elements().vec();
  else
    types = {args->type()};
  const std::string& text = fmt->toStringRef();
  size_t used = 0;
  for (size_t i = text.find('%'); i != std::string::npos; i = text.find('%', i + 2)) {
    if (i + 1 >= text.size()) refuse("with an incomplete specifier (TorchScript raises)");
    char key = text[i + 1];
    if (key == '%') continue;
    if (used >= types.size()) refuse("with too few arguments (TorchScript raises)");
    c10::TypeKind t = types[used++]->kind();
    bool same = t == c10::TypeKind::IntType || (key == 's' && t == c10::TypeKind::StringType);
    if ((key != 'd' && key != 'i' && key != 's') || !same)
      refuse(std::string("with %") + key + " of a " + types[used - 1]->repr_str() +
             " (TorchScript's text differs from Python's)");
  }
  if (used != types.size()) refuse("with too many arguments (TorchScript raises)");
  emit("operator.mod", inputs_of(n, f), n, f);
  return true;
}

bool Lifter::lift_einsum_sublist(const jit::Node* n, Frame& f) {
  const size_t num = n->inputs().size();
  std::string eq;
  // A constant, or a list of constants built for this call only (nothing can change it).
  auto constant_ints = [](const jit::Value* v) -> std::optional<std::vector<int64_t>> {
    if (std::optional<IValue> l = jit::toIValue(v); l && l->isIntList()) return l->toIntVector();
    if (v->node()->kind() != c10::prim::ListConstruct || v->uses().size() != 1) return {};
    std::vector<int64_t> out;
    for (const jit::Value* e : v->node()->inputs()) {
      std::optional<IValue> c = jit::toIValue(e);
      if (!c || !c->isInt()) return {};
      out.push_back(c->toInt());
    }
    return out;
  };
  auto subscripts = [&](size_t i) {
    std::optional<std::vector<int64_t>> l = constant_ints(n->input(i));
    if (!l)
      unsupported(n, "torch.einsum with a subscript list known only at run time", f,
                  "write the equation: torch.einsum(\"ij,jk->ik\", a, b)");
    for (int64_t s : *l) {
      if (s < 0 || s >= 52)
        unsupported(n, "an einsum subscript outside [0, 52) (TorchScript raises)", f,
                    "use subscripts 0 to 51");
      eq += static_cast<char>(s < 26 ? 'A' + s : 'a' + (s - 26));
    }
  };
  for (size_t i = 1; i < num; i += 2) {
    subscripts(i);
    if (i + 2 < num) eq += ',';
  }
  if (num % 2 == 1) {
    eq += "->";
    subscripts(num - 1);
  }
  std::vector<Value*> operands;
  for (size_t i = 0; i < (num % 2 == 1 ? num - 1 : num); i += 2) {
    if (n->input(i)->type()->kind() != c10::TypeKind::TensorType)
      unsupported(n, "an einsum operand that is not a tensor (TorchScript raises)", f,
                  "pass tensors");
    operands.push_back(value_of(f, n->input(i), n));
  }
  if (operands.empty())
    unsupported(n, "torch.einsum without operands (TorchScript raises)", f, "pass operands");
  Value* equation = add_constant(eq, Type::of(Type::Kind::Str), f, n);
  Value* list = append("prim.ListConstruct", operands, f, n)
                    ->add_output(convert_type(c10::ListType::ofTensors()), "operands");
  Value* path = add_constant(NoneAttr{}, Type::of(Type::Kind::None), f, n);
  emit("torch.einsum", {equation, list, path}, n, f);
  return true;
}

std::vector<Value*> Lifter::inputs_of(const jit::Node* n, Frame& f) {
  std::vector<Value*> ins;
  for (const jit::Value* v : n->inputs()) ins.push_back(value_of(f, v, n));
  return ins;
}

void Lifter::lift_get_attr(const jit::Node* n, Frame& f) {
  if (lift_object_get_attr(n, f) || lift_object_state_get(n, f)) return;
  lift_attr_value(n, f);
  lift_state_get(n, f);
}

// A module attribute's value as the loaded module has it: a weight read, a constant or a module.
void Lifter::lift_attr_value(const jit::Node* n, Frame& f) {
  auto it = f.env.find(n->input(0));
  if (it == f.env.end() || !it->second.module)
    unsupported(n, "attribute read on something that is not a module", f,
                "only module attributes can be read");
  const ModuleRef& owner = *it->second.module;
  std::string name = n->s(c10::attr::name);
  std::string full = join_path(owner.path, name);
  const jit::Value* out = n->output();
  if (auto ct = out->type()->cast<c10::ClassType>()) {
    if (!ct->is_module()) {
      f.env[out] = stored_attr(owner.module.attr(name), out->type(), f, n);
      return;
    }
    f.env[out] = Binding{nullptr, ModuleRef{jit::Module(owner.module.attr(name).toObject()), full}};
    return;
  }
  IValue iv = owner.module.attr(name);
  if (iv.isTensor()) {
    if (state_dict_names_.count(full)) {
      Node* g = emit("prim.GetAttr", {}, n, f);
      g->set_weight("value", full);
      return;
    }
    f.env[out] =
        Binding{tensor_constant(iv.toTensor(), f, n, "the tensor attribute '" + full + "'"), {}};
    return;
  }
  if (iv.isTensorList()) {
    // A list of the module's own parameters (nn.LSTM's _flat_weights): a list of weight reads.
    std::map<const void*, std::string> own;
    for (const auto& p : owner.module.named_parameters(/*recurse=*/false))
      own[p.value.unsafeGetTensorImpl()] = join_path(owner.path, p.name);
    std::vector<at::Tensor> ts = iv.toTensorVector();
    if (std::none_of(ts.begin(), ts.end(), [&](const at::Tensor& t) {
          return own.count(t.unsafeGetTensorImpl()) != 0;
        })) {
      // None of them is state (AnchorGenerator.cell_anchors): a list of tensor constants.
      f.env[out] = Binding{constant_value(iv, out->type(), f, n), {}};
      return;
    }
    std::vector<Value*> items;
    for (const at::Tensor& t : ts) {
      auto w = own.find(t.unsafeGetTensorImpl());
      if (w == own.end() || !state_dict_names_.count(w->second))
        unsupported(
            n, "attribute '" + full + "' is a list of tensors that are not the module's parameters",
            f, "keep the tensors as parameters or buffers");
      Node* g = append("prim.GetAttr", {}, f, n);
      g->set_weight("value", w->second);
      items.push_back(g->add_output(Type::tensor(
          dtype_from_scalar_type(static_cast<int64_t>(t.scalar_type())), t.sizes().vec())));
    }
    Node* l = append("prim.ListConstruct", items, f, n);
    f.env[out] = Binding{l->add_output(convert_type(out->type()), name_hint(out)), {}};
    return;
  }
  f.env[out] = Binding{constant_value(iv, out->type(), f, n), {}};
}

void Lifter::lift_unpack(const jit::Node* n, Frame& f) {
  Value* in = value_of(f, n->input(), n);
  const char* build =
      n->kind() == c10::prim::TupleUnpack ? "prim.TupleConstruct" : "prim.ListConstruct";
  Node* p = in->node();
  if (p->is(build) && p->num_inputs() == n->outputs().size()) {
    // Unpacking what was just packed (the tracer does this at every module boundary).
    for (size_t i = 0; i < n->outputs().size(); ++i) f.env[n->output(i)] = Binding{p->input(i), {}};
    return;
  }
  emit(n->kind() == c10::prim::TupleUnpack ? "prim.TupleUnpack" : "prim.ListUnpack", {in}, n, f);
}

void Lifter::lift_tuple_index(const jit::Node* n, Frame& f) {
  Value* tuple = value_of(f, n->input(0), n);
  Value* index = value_of(f, n->input(1), n);
  const AttrValue* c = index->constant();
  Node* p = tuple->node();
  if (c && std::holds_alternative<int64_t>(*c) && p->is("prim.TupleConstruct")) {
    int64_t i = std::get<int64_t>(*c);
    if (i < 0) i += static_cast<int64_t>(p->num_inputs());
    if (i >= 0 && i < static_cast<int64_t>(p->num_inputs())) {
      f.env[n->output()] = Binding{p->input(static_cast<size_t>(i)), {}};
      return;
    }
  }
  emit("prim.TupleIndex", {tuple, index}, n, f);
}

}  // namespace tt::ts
