// Internal helpers shared by the .tir printer and parser (not part of the public IR API).
#pragma once

#include "ir/ir.h"

#include <string>

namespace tt {

// Characters of a bare (unquoted) name in .tir: value names, weight names, module paths.
inline bool tir_is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}
bool tir_is_bare_name(const std::string& s);
// `s` itself when it is a bare name, else a quoted string literal.
std::string tir_name_or_quoted(const std::string& s);
// Shortest text that strtof reads back as exactly `v` ("0.1", "1.0", "inf", "nan").
std::string tir_format_f32(float v);
// Flat element list "[a<sep>b<sep>...]" of a tensor (row-major); floats round-trip exactly.
// Throws Error(Unsupported) for complex and quantized tensors.
std::string tir_tensor_values(const at::Tensor& t, const std::string& sep);
// The .tir type of a weight tensor ("f32[64,3,7,7]"; "Tensor" when undefined).
Type tir_tensor_type(const at::Tensor& t);

}  // namespace tt
