// The IR interpreter: prim ops, control flow and dispatch to module lowerings / ATen.
#include "exec/interpreter.h"

#include "exec/dispatch.h"
#include "exec/seeded_rng.h"
#include "ir/module_lowering.h"
#include "ir/op_table.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <ATen/core/enum_type.h>
#include <c10/core/GradMode.h>

#include <chrono>
#include <map>
#include <mutex>

namespace tt {

namespace {

// A member of an Enum type as TorchScript holds it (Note [Enum types] in ir/ir.h): its class is
// made once per type text, so members compare as TorchScript's eq.enum compares them (class name
// and value) and prim::EnumName / EnumValue of LibTorch's registry read them.
c10::IValue enum_member(const AttrValue& v, const Type& type) {
  static std::mutex mu;
  static std::map<std::string, c10::EnumTypePtr> classes;
  std::vector<EnumMember> members = enum_members(type);
  c10::EnumTypePtr cls;
  {
    std::lock_guard<std::mutex> lock(mu);
    c10::EnumTypePtr& c = classes[type.str()];
    if (!c) {
      std::vector<c10::EnumNameValue> names_values;
      for (const EnumMember& m : members)
        names_values.emplace_back(m.name, attr_to_ivalue(m.value, Type{}));
      c10::TypePtr value = type.elems.empty() || type.elems[0].kind == Type::Kind::Int
                               ? c10::TypePtr(c10::IntType::get())
                           : type.elems[0].kind == Type::Kind::Float
                               ? c10::TypePtr(c10::FloatType::get())
                               : c10::TypePtr(c10::StringType::get());
      c = c10::EnumType::create(c10::QualifiedName(type.name), value, std::move(names_values), {});
    }
    cls = c;
  }
  for (const EnumMember& m : members)
    if (attr_equal(m.value, v))
      return c10::IValue(
          c10::make_intrusive<c10::ivalue::EnumHolder>(cls, m.name, attr_to_ivalue(v, Type{})));
  throw Error(ExitCode::Unsupported,
              "the constant " + attr_str(v) + " is no member of " + type.str());
}

}  // namespace

c10::IValue attr_to_ivalue(const AttrValue& v, const Type& type) {
  if (type.is_enum()) return enum_member(v, type);
  struct V {
    const Type& type;
    c10::IValue operator()(const NoneAttr&) const { return c10::IValue(); }
    c10::IValue operator()(bool b) const { return b; }
    c10::IValue operator()(int64_t i) const {
      // ScalarType / Layout / MemoryFormat constants are ints in an IValue too; the dispatcher
      // reads them by schema type.
      if (type.kind == Type::Kind::Float) return static_cast<double>(i);
      return i;
    }
    c10::IValue operator()(double d) const { return d; }
    c10::IValue operator()(const std::string& s) const { return s; }
    c10::IValue operator()(const std::vector<int64_t>& l) const {
      if (type.kind == Type::Kind::List && !type.elems.empty() &&
          type.elems[0].kind == Type::Kind::Float)
        return c10::List<double>(std::vector<double>(l.begin(), l.end()));
      if (type.kind == Type::Kind::List && !type.elems.empty() &&
          type.elems[0].kind == Type::Kind::Bool) {
        c10::List<bool> out;
        for (int64_t x : l) out.push_back(x != 0);
        return out;
      }
      return c10::List<int64_t>(l);
    }
    c10::IValue operator()(const std::vector<double>& l) const { return c10::List<double>(l); }
    c10::IValue operator()(const std::vector<std::string>& l) const {
      return c10::List<std::string>(l);
    }
    c10::IValue operator()(DType d) const { return dtype_to_scalar_type(d); }
    c10::IValue operator()(const DeviceAttr& d) const { return c10::Device(d.name); }
    c10::IValue operator()(const at::Tensor& t) const { return t; }
    c10::IValue operator()(const std::complex<double>& z) const {
      return c10::complex<double>(z.real(), z.imag());
    }
  };
  return std::visit(V{type}, v);
}

c10::IValue default_to_ivalue(const AttrValue& v, const Type& type) {
  if (std::holds_alternative<NoneAttr>(v)) return c10::IValue();
  const Type& t = contained_type(type);
  if (t.kind != Type::Kind::Tuple) return attr_to_ivalue(v, t);
  std::vector<c10::IValue> items;
  for (size_t i = 0; i < t.elems.size(); ++i) {
    const Type& e = t.elems[i];
    std::visit(
        [&](const auto& l) {
          using L = std::decay_t<decltype(l)>;
          if constexpr (std::is_same_v<L, std::vector<int64_t>> ||
                        std::is_same_v<L, std::vector<double>> ||
                        std::is_same_v<L, std::vector<std::string>>)
            if (i < l.size()) items.push_back(attr_to_ivalue(AttrValue{l[i]}, e));
        },
        v);
  }
  return c10::ivalue::Tuple::create(std::move(items));
}

namespace {

// A list IValue of the right element kind for ListConstruct.
c10::IValue make_list(const Type& type, const std::vector<c10::IValue>& items) {
  Type::Kind elem =
      type.kind == Type::Kind::List && !type.elems.empty() ? type.elems[0].kind : Type::Kind::Any;
  if (elem == Type::Kind::Any && !items.empty()) {
    // Untyped: decide from the values.
    const auto& f = items.front();
    if (f.isInt())
      elem = Type::Kind::Int;
    else if (f.isDouble())
      elem = Type::Kind::Float;
    else if (f.isBool())
      elem = Type::Kind::Bool;
    else if (f.isTensor())
      elem = Type::Kind::Tensor;
    else if (f.isString())
      elem = Type::Kind::Str;
    else if (f.isComplexDouble())
      elem = Type::Kind::Complex;
  }
  switch (elem) {
    case Type::Kind::Int: {
      c10::List<int64_t> l;
      for (const auto& i : items) l.push_back(i.toInt());
      return l;
    }
    case Type::Kind::Float: {
      c10::List<double> l;
      for (const auto& i : items)
        l.push_back(i.isInt() ? static_cast<double>(i.toInt()) : i.toDouble());
      return l;
    }
    case Type::Kind::Bool: {
      c10::List<bool> l;
      for (const auto& i : items) l.push_back(i.toBool());
      return l;
    }
    case Type::Kind::Tensor: {
      c10::List<at::Tensor> l;
      for (const auto& i : items) l.push_back(i.toTensor());
      return l;
    }
    case Type::Kind::Complex: {  // complex[] (sum(l) takes only that)
      c10::List<c10::complex<double>> l;
      for (const auto& i : items) l.push_back(i.toComplexDouble());
      return l;
    }
    case Type::Kind::Str: {  // typed like TorchScript's str[] (l.sort() takes only that)
      c10::List<std::string> l;
      for (const auto& i : items) l.push_back(i.toStringRef());
      return l;
    }
    case Type::Kind::Optional: {
      c10::List<c10::optional<at::Tensor>> l;
      for (const auto& i : items)
        l.push_back(i.isNone() ? c10::optional<at::Tensor>()
                               : c10::optional<at::Tensor>(i.toTensor()));
      return l;
    }
    default: {
      c10::impl::GenericList l(c10::AnyType::get());
      for (const auto& i : items) l.push_back(i);
      return l;
    }
  }
}

// F.interpolate's row keeps the Python argument order (input, size, scale_factor, mode,
// align_corners[, antialias]), not an ATen one: dispatch to the upsample kernel of the mode.
c10::IValue interpolate(const std::vector<c10::IValue>& in) {
  at::Tensor x = in.at(0).toTensor();
  size_t r = static_cast<size_t>(x.dim() - 2);
  auto arg = [&](size_t i) -> c10::IValue { return i < in.size() ? in[i] : c10::IValue(); };
  std::vector<int64_t> size_v;
  if (!arg(1).isNone()) {
    size_v = arg(1).isInt() ? std::vector<int64_t>(r, arg(1).toInt()) : arg(1).toIntVector();
    if (size_v.size() == 1) size_v.assign(r, size_v[0]);
  }
  std::vector<double> scale_v;
  if (!arg(2).isNone()) {
    const c10::IValue& s = arg(2);
    if (s.isDouble() || s.isInt())
      scale_v.assign(r, s.isInt() ? double(s.toInt()) : s.toDouble());
    else
      scale_v = s.toDoubleVector();
    if (scale_v.size() == 1) scale_v.assign(r, scale_v[0]);
  }
  c10::optional<at::IntArrayRef> size;
  if (!size_v.empty()) size = size_v;
  c10::optional<at::ArrayRef<double>> scales;
  if (!scale_v.empty()) scales = scale_v;
  std::string mode = arg(3).isNone() ? "nearest" : arg(3).toStringRef();
  bool align = arg(4).isNone() ? false : arg(4).toBool();
  if (arg(5).isBool() && arg(5).toBool()) {  // antialias
    if (mode == "bilinear" && r == 2) return at::_upsample_bilinear2d_aa(x, size, align, scales);
    if (mode == "bicubic" && r == 2) return at::_upsample_bicubic2d_aa(x, size, align, scales);
    throw Error(ExitCode::Unsupported, "F.interpolate(antialias=True) with mode '" + mode +
                                           "' is not supported by the interpreter");
  }
  if (mode == "nearest") {
    if (r == 1) return at::upsample_nearest1d(x, size, scales);
    if (r == 2) return at::upsample_nearest2d(x, size, scales);
    if (r == 3) return at::upsample_nearest3d(x, size, scales);
  }
  if (mode == "nearest-exact") {
    if (r == 1) return at::_upsample_nearest_exact1d(x, size, scales);
    if (r == 2) return at::_upsample_nearest_exact2d(x, size, scales);
    if (r == 3) return at::_upsample_nearest_exact3d(x, size, scales);
  }
  if (mode == "linear" && r == 1) return at::upsample_linear1d(x, size, align, scales);
  if (mode == "bilinear" && r == 2) return at::upsample_bilinear2d(x, size, align, scales);
  if (mode == "bicubic" && r == 2) return at::upsample_bicubic2d(x, size, align, scales);
  if (mode == "trilinear" && r == 3) return at::upsample_trilinear3d(x, size, align, scales);
  if (mode == "area")
    return r == 1   ? at::adaptive_avg_pool1d(x, size_v)
           : r == 2 ? at::adaptive_avg_pool2d(x, size_v)
                    : at::adaptive_avg_pool3d(x, size_v);
  throw Error(ExitCode::Unsupported, "F.interpolate mode '" + mode + "' on a " +
                                         std::to_string(x.dim()) +
                                         "-d input is not supported by the interpreter");
}

}  // namespace

const c10::IValue& Interpreter::get(const Value* v) const {
  auto it = env_.find(v);
  TT_ASSERT(it != env_.end(), "interpreter: %" + v->name() + " used before it was computed");
  return it->second;
}

void Interpreter::set(const Value* v, c10::IValue iv) {
  if (on_value) on_value(v, iv);
  env_[v] = std::move(iv);
}

// Note [Freeing values after their last use]
// A value leaves env_ right after the node of its block that uses it last (a use inside a nested
// block counts as one by the node that owns that block, so a value a loop body reads lives until
// the loop is done), and a nested block's outputs leave it once their If/Loop took them. Keeping
// every value until the end of the run made --verify of a detector at 800x1000 hold every
// activation of its backbone at once (gigabytes, for a model of 130 MB). The outputs of the
// block (the return node's uses) stay: run_block reads them last. What a value is computed from
// does not change, only how long env_ holds it.
const std::unordered_map<const Node*, std::vector<const Value*>>& Interpreter::dead_after(
    const Block& b) {
  auto [it, fresh] = dead_after_.try_emplace(&b);
  if (!fresh) return it->second;
  std::unordered_map<const Node*, size_t> pos;
  for (Node* n = b.front(); n; n = n->next()) pos.emplace(n, pos.size() + 1);  // 0: b's inputs
  auto consider = [&](const Value* v, const Node* def) {
    const Node* last = def;
    for (const Use& u : v->uses()) {
      const Node* a = u.user;  // the user, or the node of b that holds it
      while (a && a->owning_block() != &b)
        a = a->owning_block() ? a->owning_block()->owning_node() : nullptr;
      if (!a || a == b.return_node()) return;  // an output of b (or a use outside it): kept
      if (!last || pos.at(a) > pos.at(last)) last = a;
    }
    it->second[last].push_back(v);
  };
  for (const Value* v : b.inputs()) consider(v, nullptr);
  for (Node* n = b.front(); n; n = n->next())
    for (const Value* v : n->outputs()) consider(v, n);
  return it->second;
}

std::vector<c10::IValue> Interpreter::run(const std::vector<c10::IValue>& inputs) {
  env_.clear();
  dead_after_.clear();  // the graph may have changed since the last run
  if (inputs.size() != g_.inputs().size())
    throw Error(ExitCode::Usage, "the model takes " + std::to_string(g_.inputs().size()) +
                                     " input(s) but " + std::to_string(inputs.size()) +
                                     " were given — give one --input-shape per input");
  // Autograd off, as the TorchScript reference runs (jit_runner: InferenceMode), so that
  // torch.is_grad_enabled() reads the same in both (nn.TransformerEncoder picks its fast path by
  // it); torch.set_grad_enabled in the graph (Note [with statements]) changes the mode for the
  // rest of the run only: the caller's comes back however the run ends.
  c10::AutoGradMode grad_mode(false);
  SeededGlobalRng rng;  // Note [Random draws under --verify] in exec/seeded_rng.h
  std::vector<c10::IValue> outs;
  run_block(*g_.block(), inputs, outs);
  env_.clear();
  return outs;
}

void Interpreter::run_block(const Block& b, const std::vector<c10::IValue>& inputs,
                            std::vector<c10::IValue>& outputs) {
  for (size_t i = 0; i < b.inputs().size(); ++i) set(b.inputs()[i], inputs.at(i));
  const auto& dead = dead_after(b);  // Note [Freeing values after their last use]
  auto free_after = [&](const Node* n) {
    auto d = dead.find(n);
    if (d != dead.end())
      for (const Value* v : d->second) env_.erase(v);
  };
  free_after(nullptr);  // unused block inputs
  ++depth_;
  for (Node* n = b.front(); n; n = n->next()) {
    if (on_node && depth_ == 1) {
      auto t0 = std::chrono::steady_clock::now();
      run_node(*n);
      auto t1 = std::chrono::steady_clock::now();
      on_node(*n, std::chrono::duration<double, std::milli>(t1 - t0).count());
    } else {
      run_node(*n);
    }
    free_after(n);
  }
  --depth_;
  outputs.clear();
  for (Value* v : b.outputs()) outputs.push_back(get(v));
  if (b.owning_node())  // a branch or loop body: its own values are done once taken
    for (Value* v : b.outputs())
      if (v->node()->owning_block() == &b) env_.erase(v);
}

void Interpreter::run_node(const Node& n) {
  const std::string& op = n.op();
  std::vector<c10::IValue> in;
  in.reserve(n.num_inputs());
  for (Value* v : n.inputs()) in.push_back(get(v));

  auto set_outputs = [&](std::vector<c10::IValue> outs) {
    if (outs.size() != n.num_outputs())
      throw Error(ExitCode::Internal, "interpreter: " + describe(n) + " produced " +
                                          std::to_string(outs.size()) + " value(s), expected " +
                                          std::to_string(n.num_outputs()))
          .at(location_of(n));
    for (size_t i = 0; i < outs.size(); ++i) set(n.output(i), std::move(outs[i]));
  };

  if (op == "prim.Constant") {
    set(n.output(), attr_to_ivalue(n.attrs().at("value"), n.output()->type()));
    return;
  }
  if (op == "prim.GetAttr") {
    const Weight* w = weights().find(n.weight("value"));
    if (!w)
      throw Error(ExitCode::Internal, "interpreter: " + describe(n) + " reads weight '" +
                                          n.weight("value") + "' that the model does not have")
          .at(location_of(n));
    set(n.output(), w->tensor);
    return;
  }
  if (op == "prim.StateGet" || op == "prim.StateSet") {  // Note [Module state] in exec/alias.h
    std::string key = state_path(n);
    if (op == "prim.StateSet") {
      state_[key] = in.at(0);
      return;
    }
    // The first read keeps the initial value, so that an in-place change of it (a list's append,
    // a buffer's add_) is seen by the next call, as on the Python attribute.
    set(n.output(), state_.emplace(key, in.at(0)).first->second);
    return;
  }
  if (op == "prim.ListConstruct") {
    set(n.output(), make_list(n.output()->type(), in));
    return;
  }
  if (op == "prim.TupleConstruct") {
    set(n.output(), c10::ivalue::Tuple::create(std::move(in)));
    return;
  }
  if (op == "prim.DictConstruct") {
    // Typed like TorchScript's own Dict[str, Tensor] so that --verify compares like with like.
    const Type& t = n.output()->type();
    auto jit_type = [](const Type& e) -> c10::TypePtr {
      switch (e.kind) {
        case Type::Kind::Str:
          return c10::StringType::get();
        case Type::Kind::Int:
          return c10::IntType::get();
        case Type::Kind::Tensor:
          return c10::TensorType::get();
        case Type::Kind::Float:
          return c10::FloatType::get();
        case Type::Kind::Bool:
          return c10::BoolType::get();
        case Type::Kind::Complex:
          return c10::ComplexType::get();
        default:
          return c10::AnyType::get();
      }
    };
    c10::impl::GenericDict d(t.elems.size() == 2 ? jit_type(t.elems[0]) : c10::StringType::get(),
                             t.elems.size() == 2 ? jit_type(t.elems[1]) : c10::AnyType::get());
    for (size_t i = 0; i + 1 < in.size(); i += 2) d.insert_or_assign(in[i], in[i + 1]);
    set(n.output(), d);
    return;
  }
  if (op == "prim.TupleUnpack") {
    const auto& elems = in.at(0).toTupleRef().elements();
    set_outputs(std::vector<c10::IValue>(elems.begin(), elems.end()));
    return;
  }
  if (op == "prim.ListUnpack") {
    auto list = in.at(0).toListRef();
    set_outputs(std::vector<c10::IValue>(list.begin(), list.end()));
    return;
  }
  if (op == "prim.TupleIndex") {
    const auto& elems = in.at(0).toTupleRef().elements();
    int64_t i = in.at(1).toInt();
    if (i < 0) i += static_cast<int64_t>(elems.size());
    set(n.output(), elems.at(static_cast<size_t>(i)));
    return;
  }
  if (op == "prim.NumToTensor") {
    const auto& s = in.at(0);
    set(n.output(), s.isInt()      ? at::scalar_tensor(s.toInt(), at::kLong)
                    : s.isDouble() ? at::scalar_tensor(s.toDouble(), at::kDouble)
                                   : at::scalar_tensor(s.toBool(), at::kBool));
    return;
  }
  if (op == "prim.Uninitialized") {  // stands for a value a raising branch never produces
    set(n.output(), c10::IValue());
    return;
  }
  // The model's own print(...): its text is no result, and tinytrace's stdout is the CLI's
  // (scripts read it), so running the model prints nothing.
  if (op == "prim.Print") return;
  if (op == "prim.RaiseException") {  // the model's own `raise` (scripted models)
    std::string msg = !in.empty() && in[0].isString() ? in[0].toStringRef() : "";
    throw Error(ExitCode::Unsupported,
                "the model raised an exception at " + describe(n) + ": " + msg)
        .at(location_of(n));
  }
  if (op == "prim.If") {
    bool cond = in.at(0).isTensor() ? in.at(0).toTensor().item<bool>() : in.at(0).toBool();
    std::vector<c10::IValue> outs;
    run_block(*n.block(cond ? 0 : 1), {}, outs);
    set_outputs(std::move(outs));
    return;
  }
  if (op == "prim.Loop") {
    // TorchScript semantics: inputs (max_trip_count, initial_condition, carried...);
    // body block inputs (i, carried...), outputs (condition, carried...).
    int64_t max_trips = in.at(0).isNone() ? std::numeric_limits<int64_t>::max() : in.at(0).toInt();
    bool cond = in.at(1).isTensor() ? in.at(1).toTensor().item<bool>() : in.at(1).toBool();
    std::vector<c10::IValue> carried(in.begin() + 2, in.end());
    const Block& body = *n.block(0);
    for (int64_t i = 0; i < max_trips && cond; ++i) {
      std::vector<c10::IValue> block_in{i};
      block_in.insert(block_in.end(), carried.begin(), carried.end());
      std::vector<c10::IValue> outs;
      run_block(body, block_in, outs);
      cond = outs.at(0).isTensor() ? outs.at(0).toTensor().item<bool>() : outs.at(0).toBool();
      carried.assign(outs.begin() + 1, outs.end());
    }
    set_outputs(std::move(carried));
    return;
  }

  // Gives on_failure a chance to produce the outputs; false when it declines.
  auto fallback = [&]() {
    if (!on_failure) return false;
    std::vector<c10::IValue> again;
    for (Value* v : n.inputs()) again.push_back(get(v));
    auto outs = on_failure(n, again);
    if (!outs) return false;
    set_outputs(std::move(*outs));
    return true;
  };
  if (intercept) {
    if (auto outs = intercept(n, in)) {
      set_outputs(std::move(*outs));
      return;
    }
  }
  try {
    if (!n.module().empty() || has_module_lowering(op)) {
      auto it = lowered_.find(&n);
      if (it == lowered_.end()) it = lowered_.emplace(&n, lower_module_or_throw(n)).first;
      try {
        set_outputs(run_lowered_module(*it->second, weights(), in));
      } catch (Error& e) {
        throw e.at(location_of(n));  // a node of the lowering is the module node's place
      }
      return;
    }
    if (op == "F.interpolate") {
      set(n.output(), interpolate(in));
      return;
    }
    auto outs = call_aten(op, std::move(in), /*allow_mutation=*/true);
    if (!outs)
      throw Error(ExitCode::Unsupported,
                  "the interpreter cannot run " + describe(n) + " (no ATen lowering for this op)")
          .at(location_of(n));
    // l.append(x) and l[i] = v return the list they changed; the node has no result for it
    // (Note [Container mutation] in exec/alias.h).
    if (op_has(n, kWritesContainer) && outs->size() > n.num_outputs())
      outs->resize(n.num_outputs());
    set_outputs(std::move(*outs));
  } catch (Error& e) {
    if (fallback()) return;
    if (e.where().empty()) e.at(location_of(n));
    throw;
  } catch (const std::exception& e) {
    if (fallback()) return;
    if (!wrap_errors) throw;
    std::string msg = e.what();
    auto nl = msg.find('\n');
    if (nl != std::string::npos) msg = msg.substr(0, nl);
    throw Error(ExitCode::Unsupported, "running " + describe(n) + " failed: " + msg)
        .at(location_of(n));
  }
}

}  // namespace tt
