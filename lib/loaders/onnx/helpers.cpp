// File-level helpers of the ONNX importer (declared in importer.h).
#include "loaders/onnx/importer.h"

#if TT_HAVE_ONNX

#include <cctype>
#include <fstream>
#include <sstream>

namespace tt::onnx_import {

[[noreturn]] void bad(const std::string& msg) { throw Error(ExitCode::BadInput, msg); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad("cannot open the file — check the path and its permissions");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string dirname_of(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? "." : (s == 0 ? "/" : path.substr(0, s));
}

std::optional<at::ScalarType> scalar_type(int32_t t) {
  switch (t) {
    case ox::TensorProto::FLOAT:
      return at::kFloat;
    case ox::TensorProto::DOUBLE:
      return at::kDouble;
    case ox::TensorProto::FLOAT16:
      return at::kHalf;
    case ox::TensorProto::BFLOAT16:
      return at::kBFloat16;
    case ox::TensorProto::INT64:
      return at::kLong;
    case ox::TensorProto::INT32:
      return at::kInt;
    case ox::TensorProto::INT16:
      return at::kShort;
    case ox::TensorProto::INT8:
      return at::kChar;
    case ox::TensorProto::UINT8:
      return at::kByte;
    case ox::TensorProto::BOOL:
      return at::kBool;
    default:
      return std::nullopt;
  }
}

DType dtype_of(int32_t t) {
  auto s = scalar_type(t);
  return s ? dtype_from_scalar_type(static_cast<int64_t>(*s)) : DType::Unknown;
}

// State_dict-like name: dots kept, anything else that is not [A-Za-z0-9_] becomes '_'.
std::string dotted_name(const std::string& raw) {
  std::string out;
  for (char c : raw)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
  // No empty segments ("a..b", leading/trailing dots).
  std::string clean;
  std::stringstream ss(out);
  std::string seg;
  while (std::getline(ss, seg, '.')) {
    if (seg.empty()) continue;
    if (!clean.empty()) clean += '.';
    clean += seg;
  }
  return clean.empty() ? "w" : clean;
}

// are dropped so the emitter derives one from the op or module.
std::string value_hint(const std::string& raw) {
  if (raw.find('/') != std::string::npos || raw.find("::") != std::string::npos) return "";
  return sanitize_name(raw);
}

}  // namespace tt::onnx_import

#endif  // TT_HAVE_ONNX
