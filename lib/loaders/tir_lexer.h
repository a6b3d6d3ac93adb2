// The lexer of the .tir parser (lib/loaders/tir_parser.cpp): errors with line:col, whitespace and
// comments, identifiers, string literals, names and numbers. Private to lib/loaders/; the parser
// derives from it.
#pragma once

#include "ir/tir_text.h"
#include "support/diag.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>

namespace tt::tir {

// A scalar as written in the text; converted once the element type is known, so f32 values
// go through strtof (no double rounding) and f64 values through strtod.
struct Scalar {
  enum Kind { Int, Float, Bool } kind;
  std::string text;  // Int/Float: the literal ("-1", "0.5", "inf")
  bool b = false;    // Bool
  size_t pos;
};

inline bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
inline bool is_op_char(char c) { return tir_is_name_char(c) || c == ':'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

inline constexpr const char* kValueHint =
    "attribute values are none, true, false, 3, 0.5, \"text\", [1,2], [0.5,1.0], [\"a\"], a dtype "
    "(f32), device(\"cpu\") or tensor<f32[2]>[1.0,2.0]";
inline constexpr const char* kElemHint =
    "tensor values are a flat list of numbers, inf, nan, true or false: [1.0, -2.5]";

class Lexer {
 protected:
  Lexer(const std::string& text, const std::string& file) : src_(text), file_(file) {}

  // ------------------------------------------------------------------------------------------
  // errors and lexing

  [[noreturn]] void fail(size_t pos, const std::string& what, const std::string& hint) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error(ExitCode::BadInput, file_ + ":" + std::to_string(line) + ":" + std::to_string(col) +
                                        ": " + what + " — " + hint);
  }

  // A short description of what is at `pos`, for "expected X, found Y".
  std::string found(size_t pos) {
    if (pos >= src_.size()) return "end of input";
    size_t e = pos;
    while (e < src_.size() && e - pos < 24 && (is_op_char(src_[e]) || src_[e] == '%')) ++e;
    if (e == pos) e = pos + 1;
    std::string s = src_.substr(pos, e - pos);
    if (s == "\n") return "end of line";
    return "'" + s + "'";
  }

  void skip_ws() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  char peek() {
    skip_ws();
    return pos_ < src_.size() ? src_[pos_] : '\0';
  }
  // The character right at the cursor, without skipping whitespace.
  char here() const { return pos_ < src_.size() ? src_[pos_] : '\0'; }

  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  // Note [Parser messages on the hot path]
  // The context and hint of expect() and friends are only read when the input is wrong, but the
  // parser calls them a few times per node: they are string_views (a literal costs nothing), and
  // a context that is built from the node ("after " + op) is a function called only on failure
  // (expect_lazy, which takes it last). On a 1M-node graph these were millions of short-lived
  // heap strings (issue #22).
  void expect(char c, std::string_view context, std::string_view hint) {
    if (eat(c)) return;
    fail(pos_,
         std::string("expected '") + c + "' " + std::string(context) + ", found " + found(pos_),
         std::string(hint));
  }

  template <typename Context>
  void expect_lazy(char c, std::string_view hint, Context&& context) {
    if (!eat(c)) expect(c, context(), hint);
  }

  template <typename Pred>
  std::string read_while(Pred pred) {
    size_t b = pos_;
    while (pos_ < src_.size() && pred(src_[pos_])) ++pos_;
    return src_.substr(b, pos_ - b);
  }

  // An identifier (keywords, attribute names, type names); "" when there is none.
  std::string ident() {
    skip_ws();
    if (!is_ident_start(here())) return "";
    return read_while(is_ident_char);
  }

  bool peek_ident(const char* kw) {
    skip_ws();
    size_t n = std::char_traits<char>::length(kw);
    return src_.compare(pos_, n, kw) == 0 &&
           (pos_ + n >= src_.size() || !is_ident_char(src_[pos_ + n]));
  }

  void expect_ident(const char* kw, std::string_view context, std::string_view hint) {
    if (peek_ident(kw)) {
      pos_ += std::char_traits<char>::length(kw);
      return;
    }
    fail(pos_,
         std::string("expected '") + kw + "' " + std::string(context) + ", found " + found(pos_),
         std::string(hint));
  }

  std::string string_lit() {
    skip_ws();
    size_t start = pos_;
    if (here() != '"')
      fail(pos_, "expected a string, found " + found(pos_), "strings are written in double quotes");
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n')
        fail(start, "unterminated string", "close the string with '\"' on the same line");
      char c = src_[pos_++];
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= src_.size()) fail(start, "unterminated string", "close the string with '\"'");
      char e = src_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'x': {
          auto hex = [](char h) -> int {
            if (h >= '0' && h <= '9') return h - '0';
            if (h >= 'a' && h <= 'f') return h - 'a' + 10;
            if (h >= 'A' && h <= 'F') return h - 'A' + 10;
            return -1;
          };
          int hi = pos_ < src_.size() ? hex(src_[pos_]) : -1;
          int lo = pos_ + 1 < src_.size() ? hex(src_[pos_ + 1]) : -1;
          if (hi < 0 || lo < 0)
            fail(pos_ - 2, "bad \\x escape in string", "write \\x followed by two hex digits");
          out += static_cast<char>(hi * 16 + lo);
          pos_ += 2;
          break;
        }
        default:
          fail(pos_ - 2, std::string("unknown escape '\\") + e + "' in string",
               "the escapes are \\\" \\\\ \\n \\t \\r and \\xNN");
      }
    }
    return out;
  }

  // A bare name (weight names, module paths: [A-Za-z0-9_.]+) or a quoted string.
  std::string name_or_string(std::string_view what) {
    skip_ws();
    if (here() == '"') return string_lit();
    std::string s = read_while(tir_is_name_char);
    if (s.empty())
      fail(pos_, "expected " + std::string(what) + ", found " + found(pos_),
           "write a dotted name (layer1.0.conv) or a quoted string");
    return s;
  }

  // '%' followed directly by a value name; the context is `context` followed by `subject`.
  std::string value_name(std::string_view context, std::string_view subject = {}) {
    skip_ws();
    if (here() != '%')
      fail(pos_,
           "expected a value (%name) " + std::string(context) + std::string(subject) + ", found " +
               found(pos_),
           "values are written %name");
    ++pos_;
    std::string s = read_while(tir_is_name_char);
    if (s.empty())
      fail(pos_, "expected a value name after '%'", "value names use letters, digits, '_' and '.'");
    return s;
  }

  // A numeric literal: [+-] digits [. digits] [e [+-] digits], or [+-]inf / nan.
  Scalar number(const char* hint = kValueHint) {
    skip_ws();
    size_t start = pos_;
    std::string text;
    if (here() == '-' || here() == '+') text += src_[pos_++];
    if (is_ident_start(here())) {
      std::string w = read_while(is_ident_char);
      if (w != "inf" && w != "nan")
        fail(start, "expected a number, found '" + text + w + "'", hint);
      return {Scalar::Float, text + w, false, start};
    }
    bool is_float = false;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (is_digit(c)) {
        text += c;
      } else if (c == '.') {
        is_float = true;
        text += c;
      } else if (c == 'e' || c == 'E') {
        is_float = true;
        text += c;
        if (pos_ + 1 < src_.size() && (src_[pos_ + 1] == '-' || src_[pos_ + 1] == '+'))
          text += src_[++pos_];
      } else {
        break;
      }
      ++pos_;
    }
    if (text.empty() || text == "-" || text == "+")
      fail(start, "expected a number, found " + found(start), hint);
    return {is_float ? Scalar::Float : Scalar::Int, text, false, start};
  }

  int64_t to_int(const Scalar& s) {
    if (s.kind != Scalar::Int)
      fail(s.pos,
           "expected an integer, found '" +
               (s.kind == Scalar::Bool ? std::string(s.b ? "true" : "false") : s.text) + "'",
           "write a whole number without '.' or exponent");
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.text.c_str(), &end, 10);
    if (errno == ERANGE || *end != '\0')
      fail(s.pos, "integer '" + s.text + "' is out of range", "integers are 64-bit signed");
    return static_cast<int64_t>(v);
  }

  double to_double(const Scalar& s) {
    if (s.kind == Scalar::Bool) fail(s.pos, "expected a number, found a bool", kValueHint);
    char* end = nullptr;
    double v = std::strtod(s.text.c_str(), &end);
    if (*end != '\0')
      fail(s.pos, "malformed number '" + s.text + "'", "write numbers like 3, -0.5 or 1e-05");
    return v;
  }

  float to_float(const Scalar& s) {
    if (s.kind == Scalar::Bool) fail(s.pos, "expected a number, found a bool", kValueHint);
    char* end = nullptr;
    float v = std::strtof(s.text.c_str(), &end);
    if (*end != '\0')
      fail(s.pos, "malformed number '" + s.text + "'", "write numbers like 3, -0.5 or 1e-05");
    return v;
  }

  // A tensor element: number, inf/nan, true/false.
  Scalar element() {
    skip_ws();
    if (peek_ident("true") || peek_ident("false")) {
      size_t p = pos_;
      bool b = ident() == "true";
      return {Scalar::Bool, "", b, p};
    }
    return number(kElemHint);
  }

  const std::string& src_;
  std::string file_;
  size_t pos_ = 0;
};

}  // namespace tt::tir
