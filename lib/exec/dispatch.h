// Calling an ATen op by name through the c10 dispatcher (boxed), picking the overload whose
// schema fits the inputs. Shared by the interpreter and the fold-constants pass.
//
// Note [Picking an ATen overload]
// `name` is either a qualified ATen op ("aten::add.Tensor", "aten::special_erfcx.default",
// "aten::relu" = the default overload, "aten::add" when unsure = every overload) or an IR op
// ("torch.add", "Tensor.view", "int"): its op table row lists the ATen overloads in order of
// preference; an IR op the table does not know ("Tensor.foo", "torch.foo", "F.foo") tries every
// overload of aten::foo. The first overload whose schema fits wins:
//   - inputs are the schema's arguments in order (kwarg-only ones included, as the IR stores
//     them); missing trailing arguments take their defaults;
//   - a value fits an argument when its kind matches (int for int/ScalarType/Layout/
//     MemoryFormat, int or float for float, number for Scalar, None for Optional, list of the
//     element kind, an int for int[N]);
//   - overloads that write to an argument (in-place, out=) are never chosen.
// A few ops that TorchScript implements outside the dispatcher (int/float arithmetic such as
// aten::add.int or aten::floordiv.int, aten::Int/Float/Bool, aten::size(Tensor) -> int[],
// aten::dim, aten::len) are evaluated here directly with Python semantics.
#pragma once

#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <vector>

namespace tt {

// Returns the op's outputs, or nullopt when no overload fits the inputs (or the op is unknown).
// Errors raised by the kernel itself (c10::Error, or std::runtime_error for a division by zero
// in int arithmetic) propagate to the caller, which knows the node to blame.
// In-place overloads (mutable schemas: aten::fill_.Tensor, aten::copy_) run only with
// allow_mutation: the interpreter runs them as the generated Python does (a traced slice
// assignment mutates a fresh tensor through a view), while constant folding must never mutate
// the tensors it folds.
std::optional<std::vector<c10::IValue>> call_aten(const std::string& qualified_overload_or_ir_op,
                                                  std::vector<c10::IValue> inputs,
                                                  bool allow_mutation = false);

// The schema text of the overload call_aten would pick ("aten::add.Tensor(Tensor self, ...)"),
// or "" when none fits; for messages and tests.
std::string resolve_aten_schema(const std::string& qualified_overload_or_ir_op,
                                const std::vector<c10::IValue>& inputs);

// Note [TorchScript builtins through LibTorch's registry]
// About 780 operators exist only in TorchScript's own operator registry, not in the c10
// dispatcher: the builtins of lists, dicts, strings, numbers and Optionals (aten::add.str,
// aten::mul.left_t, aten::slice.t, prim::max.int, aten::str, aten::__derive_index, ...). The
// interpreter runs them through that registry, so it computes exactly what TorchScript computes
// (str(0.1) is "0.10000000000000001" there, round(2.5) is 2.0). The registry is reached through
// the JIT headers, which only lib/loaders may include: the loaders install a BuiltinRunner here
// (install_jit_builtins, lib/loaders/jit_builtins.h; load_model, parse_tir and the unit tests'
// main call it), and call_aten asks it for any candidate the dispatcher does not have, before
// the few hand-written evaluations left in dispatch.cpp (those that differ on purpose, and
// those for inputs the registry's types reject, such as an untyped empty list).
// The runner gets the qualified base ("aten::add"), the overload ("str"; "" = the default one;
// "*" = any overload whose schema fits the inputs) and the inputs; it returns the outputs, or
// nullopt when no overload fits. A mutating overload (aten::append.t) runs only with
// allow_mutation, and then changes the list or dict it was given, as TorchScript does.
// Operators that are made from a jit::Node (hasOperation() is false: prim::TupleUnpack,
// fusion groups, ...) are never run: the lifter turns the ones a saved model can hold into IR
// structure (Note [Lifting TorchScript]).
using BuiltinRunner = std::optional<std::vector<c10::IValue>> (*)(
    const std::string& base, const std::string& overload, const std::vector<c10::IValue>& inputs,
    bool allow_mutation);
void set_builtin_runner(BuiltinRunner runner);
BuiltinRunner builtin_runner();

}  // namespace tt
