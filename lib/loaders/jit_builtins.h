// TorchScript's own operator registry for the interpreter and the tests (Note [TorchScript
// builtins through LibTorch's registry], lib/exec/dispatch.h).
#pragma once

#include <string>
#include <vector>

namespace tt {

// Installs the registry runner into lib/exec (set_builtin_runner); idempotent. load_model,
// parse_tir and the unit tests' main call it, so every entry point (TorchScript, .pt2, ONNX,
// .tir through `tinytrace opt`) runs the builtins the same way.
void install_jit_builtins();

// One registered operator that the c10 dispatcher does not have (a TorchScript builtin).
struct JitBuiltin {
  std::string schema;  // "aten::add.str(str a, str b) -> str"
  std::string name;    // "aten::add.str" ("aten::len" for a default overload)
  bool has_type_vars;  // a generic schema (List[t], Dict(t, tVal), t)
  bool vararg;         // aten::format(str self, ...)
  bool node_created;   // its operation is made from a jit::Node (hasOperation() is false)
  bool mutates;        // writes an argument (aten::append.t)
  // Python's torch.ops runs it exactly (Note [TorchScript builtins without a row],
  // lib/loaders/torchscript/lifter_ops.cpp).
  bool torch_ops_exact;
};
// Every such operator, sorted by schema text (for the coverage test and the lifter's fallback).
const std::vector<JitBuiltin>& jit_only_operators();
// The one named `name` ("aten::eq.float_list"; "aten::len" for a default overload); nullptr
// when `name` is no TorchScript-only operator.
const JitBuiltin* find_jit_only_operator(const std::string& name);

}  // namespace tt
