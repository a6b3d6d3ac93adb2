// Parsing of --input-shape specs.
#include "ir/input_spec.h"

#include "support/diag.h"

#include <cctype>

namespace tt {
namespace {

struct DTypeSpelling {
  const char* name;
  DType d;
};
// Accepted dtype spellings: PyTorch's names and the .tir short names.
const DTypeSpelling kSpellings[] = {
    {"float32", DType::F32},     {"float", DType::F32},    {"f32", DType::F32},
    {"float64", DType::F64},     {"double", DType::F64},   {"f64", DType::F64},
    {"float16", DType::F16},     {"half", DType::F16},     {"f16", DType::F16},
    {"bfloat16", DType::BF16},   {"bf16", DType::BF16},    {"int64", DType::I64},
    {"long", DType::I64},        {"i64", DType::I64},      {"int32", DType::I32},
    {"int", DType::I32},         {"i32", DType::I32},      {"int16", DType::I16},
    {"i16", DType::I16},         {"int8", DType::I8},      {"i8", DType::I8},
    {"uint8", DType::U8},        {"u8", DType::U8},        {"bool", DType::Bool},
    {"complex64", DType::C64},   {"cfloat", DType::C64},   {"c64", DType::C64},
    {"complex128", DType::C128}, {"cdouble", DType::C128}, {"c128", DType::C128},
};

const char* torch_name(DType d) {
  // dtype_python gives "torch.float32"; the spec form drops the module.
  const char* p = dtype_python(d);
  return p + 6;
}

}  // namespace

std::string InputSpec::str() const {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ":" + torch_name(dtype);
}

InputSpec parse_input_spec(const std::string& spec) {
  const std::string form =
      "expected comma-separated sizes with an optional dtype, e.g. 1,3,224,224 or 1,128:int64";
  InputSpec out;
  std::string dims = spec;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    dims = spec.substr(0, colon);
    std::string dt = spec.substr(colon + 1);
    bool found = false;
    for (const auto& s : kSpellings)
      if (dt == s.name) {
        out.dtype = s.d;
        found = true;
      }
    if (!found)
      throw Error(ExitCode::Usage,
                  "invalid --input-shape '" + spec + "': unknown dtype '" + dt +
                      "' — use float32, float64, float16, int64, int32, uint8, bool, complex64 or "
                      "complex128");
  }
  if (dims.empty())
    throw Error(ExitCode::Usage, "invalid --input-shape '" + spec + "': no sizes — " + form);
  size_t pos = 0;
  while (pos <= dims.size()) {
    auto comma = dims.find(',', pos);
    std::string tok =
        dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    // Trim blanks so "1, 3" works as a user would expect.
    while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.front()))) tok.erase(0, 1);
    while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.pop_back();
    bool digits = !tok.empty() && tok.size() <= 12;
    for (char c : tok) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (!digits)
      throw Error(ExitCode::Usage,
                  "invalid --input-shape '" + spec + "': '" + tok + "' is not a size — " + form);
    out.shape.push_back(std::stoll(tok));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace tt
