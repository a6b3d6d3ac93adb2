// The interpreter's runner for TorchScript builtins (Note [TorchScript builtins through
// LibTorch's registry], lib/exec/dispatch.h).
#include "loaders/jit_builtins.h"

#include "exec/dispatch.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/jit_type.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

namespace tt {
namespace {

using c10::IValue;
namespace jit = torch::jit;

bool in_dispatcher(const c10::FunctionSchema& s) {
  return c10::Dispatcher::singleton()
      .findOp(c10::OperatorName(s.name(), s.overload_name()))
      .has_value();
}

// Whether `v` can be passed where `formal` is expected, binding the schema's type variables in
// `env` (List[t], Dict(t, tVal), t). Exact types, no conversion: the IR keeps TorchScript's
// types, so the overload found is the one TorchScript chose. Two allowances for what the IR
// does not keep: an int stands for a ScalarType/Layout/MemoryFormat, and an empty list built
// without an element type fits any list.
bool fits(const IValue& v, c10::TypePtr formal, c10::TypeEnv& env) {
  using K = c10::TypeKind;
  if (formal->kind() == K::OptionalType) {
    if (v.isNone()) return true;
    formal = formal->castRaw<c10::OptionalType>()->getElementType();
  }
  switch (formal->kind()) {
    case K::ScalarTypeType:
    case K::LayoutType:
    case K::MemoryFormatType:
      return v.isInt();
    case K::AnyType:
      return true;
    default:
      break;
  }
  if (v.isList() && v.toListRef().empty() && formal->kind() == K::ListType) return true;
  c10::TypePtr actual = v.type();
  if (formal->hasFreeVariables()) {
    if (!c10::matchTypeVariables(formal, actual, env).success()) return false;
    formal = c10::tryEvalTypeVariables(formal, env);
    if (formal->hasFreeVariables()) return false;
  }
  return actual->isSubtypeOf(*formal);
}

// The operators TorchScript's interpreter implements itself; their registered operation only
// raises ("warn is implemented directly in the interpreter").
bool interpreter_only(const c10::FunctionSchema& s) { return s.name() == "aten::warn"; }

std::optional<std::vector<IValue>> run_builtin(const std::string& base, const std::string& overload,
                                               const std::vector<IValue>& in, bool allow_mutation) {
  c10::Symbol sym;
  try {
    sym = c10::Symbol::fromQualString(base);
  } catch (const std::exception&) {
    return std::nullopt;  // not a qualified name
  }
  for (const auto& op : jit::getAllOperatorsFor(sym)) {
    const c10::FunctionSchema& s = op->schema();
    if (overload != "*" && s.overload_name() != overload) continue;
    if (op->isC10Op() || !op->hasOperation() || interpreter_only(s)) continue;
    if (s.is_mutable() && !allow_mutation) continue;
    const auto& args = s.arguments();
    if (in.size() > args.size() && !s.is_vararg()) continue;
    jit::Stack st;
    c10::TypeEnv env;
    bool ok = true;
    for (size_t i = 0; ok && i < std::max(args.size(), in.size()); ++i) {
      if (i < in.size()) {
        ok = i >= args.size() || fits(in[i], args[i].type(), env);
        if (ok) st.push_back(in[i]);
      } else if (args[i].default_value()) {
        st.push_back(*args[i].default_value());
      } else {
        ok = false;
      }
    }
    if (!ok) continue;
    if (s.is_vararg()) st.push_back(static_cast<int64_t>(in.size()));
    op->getOperation()(st);
    return std::vector<IValue>(std::make_move_iterator(st.begin()),
                               std::make_move_iterator(st.end()));
  }
  return std::nullopt;
}

// Note [TorchScript builtins without a row] (lib/loaders/torchscript/lifter_ops.cpp).
bool python_passable(const c10::TypePtr& t) {
  using K = c10::TypeKind;
  if (t->hasFreeVariables()) return false;
  switch (t->kind()) {
    case K::IntType:
    case K::FloatType:
    case K::ComplexType:  // a Python complex (Note [Complex scalars] in lib/ir/ir.h)
    case K::BoolType:
    case K::NumberType:
    case K::StringType:
    case K::TensorType:
    case K::DeviceObjType:
    case K::ScalarTypeType:
    case K::LayoutType:
    case K::MemoryFormatType:
    case K::NoneType:
      return true;
    case K::OptionalType:
      return python_passable(t->castRaw<c10::OptionalType>()->getElementType());
    case K::ListType:
      return python_passable(t->castRaw<c10::ListType>()->getElementType());
    case K::TupleType:
      for (const auto& e : t->containedTypes())
        if (!python_passable(e)) return false;
      return true;
    default:
      return false;
  }
}

bool torch_ops_exact(const jit::Operator& op) {
  const c10::FunctionSchema& s = op.schema();
  const std::string ns = s.name().substr(0, s.name().find("::"));
  if (ns != "aten" && ns != "prim") return false;
  if (s.is_vararg() || s.is_varret() || s.is_mutable() || s.returns().empty()) return false;
  if (!op.hasOperation() || interpreter_only(s)) return false;
  if (op.aliasAnalysisKind() == c10::AliasAnalysisKind::CONSERVATIVE) return false;  // effects
  for (const auto& a : s.arguments())
    if (!python_passable(a.type())) return false;
  for (const auto& r : s.returns())
    if (!python_passable(r.type())) return false;
  return true;
}

}  // namespace

void install_jit_builtins() { set_builtin_runner(&run_builtin); }

const std::vector<JitBuiltin>& jit_only_operators() {
  static const std::vector<JitBuiltin> all = [] {
    std::vector<JitBuiltin> out;
    for (const auto& op : jit::getAllOperators()) {
      const c10::FunctionSchema& s = op->schema();
      if (op->isC10Op() || in_dispatcher(s)) continue;
      JitBuiltin b;
      std::ostringstream os;
      os << s;
      b.schema = os.str();
      b.name = s.name() + (s.overload_name().empty() ? "" : "." + s.overload_name());
      b.has_type_vars = false;
      for (const auto& a : s.arguments()) b.has_type_vars |= a.type()->hasFreeVariables();
      for (const auto& r : s.returns()) b.has_type_vars |= r.type()->hasFreeVariables();
      b.vararg = s.is_vararg();
      b.node_created = !op->hasOperation();
      b.mutates = s.is_mutable();
      b.torch_ops_exact = torch_ops_exact(*op);
      out.push_back(std::move(b));
    }
    std::sort(out.begin(), out.end(),
              [](const JitBuiltin& a, const JitBuiltin& b) { return a.schema < b.schema; });
    return out;
  }();
  return all;
}

const JitBuiltin* find_jit_only_operator(const std::string& name) {
  static const std::map<std::string, const JitBuiltin*> by_name = [] {
    std::map<std::string, const JitBuiltin*> m;
    for (const JitBuiltin& b : jit_only_operators()) m.emplace(b.name, &b);
    return m;
  }();
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

}  // namespace tt
