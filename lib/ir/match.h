// Matchers on IR nodes that need nothing but the IR and the op table (OpenVINO-style predicates:
// calls_aten, const_int, producer_is, ...). Nothing here changes the graph. The passes get them
// through passes/pass_util.h, which adds the ones that need execution facts (side effects).
//
// Note [Recognising ops]
// Passes recognise function and method ops by the ATen op they lower to, not by their Python
// spelling: `calls_aten(n, "aten::dropout")` is true for F.dropout, for whatever name the op table
// gives aten::dropout, and for a fallback "aten::dropout.default". The op table's `aten` list is
// the source; for an op the table does not know, "Tensor.x" / "torch.x" / "F.x" count as
// "aten::x". Module ops ("nn.Dropout") never match calls_aten: they carry weights and attributes
// and are matched by name.
#pragma once

#include "ir/ir.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tt {

// "aten::add.Tensor" -> "aten::add"; "aten::add" -> "aten::add".
std::string aten_base(std::string_view qualified);
// The ATen base names ("aten::dropout") an IR op lowers to; empty for module and prim ops.
const std::vector<std::string>& aten_bases(const std::string& op);
bool calls_aten(const Node* n, std::string_view base);
bool is_module_op(const Node* n);

// Constants.
std::optional<int64_t> const_int(const Value* v);
std::optional<double> const_float(const Value* v);  // int constants are read as float too
std::optional<bool> const_bool(const Value* v);
bool const_is_none(const Value* v);
// A dtype constant: DType attr or an int typed ScalarType (c10::ScalarType code).
std::optional<DType> const_dtype(const Value* v);

// The producer of v when it is a real node (not a block parameter) with op `op`.
Node* producer_is(const Value* v, const char* op);

}  // namespace tt
