// The Python-source toolkit (pysrc.h).
#include "emitters/pysrc.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace tt::pysrc {

// ---------------------------------------------------------------------------------------------
// lexical checks

bool is_keyword(const std::string& s) {
  static const std::set<std::string> kw = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return kw.count(s) != 0;
}

bool is_name(const std::string& s) {
  if (s.empty()) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

bool is_identifier(const std::string& s) { return is_name(s) && !is_keyword(s); }

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// ---------------------------------------------------------------------------------------------
// literals

std::string py_str(const std::string& s, bool octal) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, octal ? "\\%03o" : "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

// Templated so float32 values print with float32's shortest digits.
template <typename T>
std::string float_repr(T value) {
  if (std::isnan(value)) return "float(\"nan\")";
  if (std::isinf(value)) return value > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string s(buf, res.ptr);
  std::string sign;
  if (!s.empty() && s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  int exp = std::atoi(s.c_str() + e + 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      std::string int_part = digits.substr(0, std::min<size_t>(digits.size(), exp + 1));
      while (int_part.size() < static_cast<size_t>(exp + 1)) int_part += '0';
      std::string frac =
          digits.size() > static_cast<size_t>(exp + 1) ? digits.substr(exp + 1) : "0";
      out = int_part + "." + frac;
    } else {
      out = "0." + std::string(-exp - 1, '0') + digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  }
  return sign + out;
}

}  // namespace

std::string py_float(double v) { return float_repr(v); }
std::string py_float(float v) { return float_repr(v); }

std::vector<std::string> int_items(const std::vector<int64_t>& v) {
  std::vector<std::string> items;
  items.reserve(v.size());
  for (int64_t x : v) items.push_back(std::to_string(x));
  return items;
}

std::vector<std::string> float_items(const std::vector<double>& v) {
  std::vector<std::string> items;
  items.reserve(v.size());
  for (double x : v) items.push_back(py_float(x));
  return items;
}

std::string py_list(const std::vector<std::string>& items) { return "[" + join(items, ", ") + "]"; }

std::string py_tuple(const std::vector<std::string>& items) {
  return items.size() == 1 ? "(" + items[0] + ",)" : "(" + join(items, ", ") + ")";
}

// ---------------------------------------------------------------------------------------------
// strings

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    parts.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return parts;
}

std::string camel_case(const std::string& s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// expressions

std::string receiver(const Expr& e) { return e.atomic() ? e.text : "(" + e.text + ")"; }

std::string not_expr(const Expr& e) { return "not " + receiver(e); }

namespace {

Prec binary_prec(const std::string& op) {
  static const std::map<std::string, Prec> precs = {
      {"**", Prec::Power},   {"*", Prec::Mul},          {"/", Prec::Mul},
      {"//", Prec::Mul},     {"%", Prec::Mul},          {"@", Prec::Mul},
      {"+", Prec::Add},      {"-", Prec::Add},          {"<<", Prec::Shift},
      {">>", Prec::Shift},   {"&", Prec::BitAnd},       {"^", Prec::BitXor},
      {"|", Prec::BitOr},    {"<", Prec::Compare},      {"<=", Prec::Compare},
      {">", Prec::Compare},  {">=", Prec::Compare},     {"==", Prec::Compare},
      {"!=", Prec::Compare}, {"in", Prec::Compare},     {"not in", Prec::Compare},
      {"is", Prec::Compare}, {"is not", Prec::Compare}, {"and", Prec::And},
      {"or", Prec::Or}};
  auto it = precs.find(op);
  if (it == precs.end()) throw std::invalid_argument("not a Python binary operator: " + op);
  return it->second;
}

// `e` where an operand binding at least as tightly as `need` is written bare.
std::string operand(const Expr& e, Prec need) {
  return e.prec >= need ? e.text : "(" + e.text + ")";
}

Prec tighter(Prec p) { return static_cast<Prec>(static_cast<int>(p) + 1); }

}  // namespace

Expr binary_expr(const Expr& a, const std::string& op, const Expr& b) {
  Prec p = binary_prec(op);
  Prec lhs = p, rhs = tighter(p);  // left-associative
  if (p == Prec::Power) {
    lhs = Prec::Atom;  // right-associative, and tighter than a unary minus on its left
    rhs = Prec::Unary;
  } else if (p == Prec::Compare) {
    lhs = rhs = tighter(p);  // a < b < c would chain
  }
  return Expr(operand(a, lhs) + " " + op + " " + operand(b, rhs), p);
}

Expr unary_expr(const std::string& op, const Expr& a) {
  return Expr(op + operand(a, Prec::Power), Prec::Unary);
}

std::string attr_path(const std::string& base, const std::vector<std::string>& comps,
                      bool (*plain)(const std::string&)) {
  std::string e = base;
  for (const auto& c : comps) e = plain(c) ? e + "." + c : "getattr(" + e + ", " + py_str(c) + ")";
  return e;
}

std::string dotted_attr(const std::string& base, const std::string& dotted) {
  if (dotted.empty()) return base;
  return attr_path(base, split(dotted, '.'));
}

std::string assign_attr(const std::string& owner, const std::string& name, const std::string& rhs) {
  if (is_identifier(name)) return owner + "." + name + " = " + rhs;
  return "setattr(" + owner + ", " + py_str(name) + ", " + rhs + ")";
}

std::string parallel_assign(const std::vector<std::string>& lhs,
                            const std::vector<std::string>& rhs) {
  std::vector<std::string> l, r;
  for (size_t i = 0; i < lhs.size(); ++i)
    if (!lhs[i].empty() && lhs[i] != rhs[i]) {
      l.push_back(lhs[i]);
      r.push_back(rhs[i]);
    }
  if (l.empty()) return "";
  return join(l, ", ") + " = " + join(r, ", ");
}

// ---------------------------------------------------------------------------------------------
// names

bool NameAllocator::reserved(const std::string& s) const {
  return is_keyword(s) || (reserved_ && reserved_(s));
}

bool NameAllocator::usable(const std::string& s) const { return is_identifier(s) && !reserved(s); }

// Names are never given back, so the first free suffix of a base only grows: the search starts
// after the last suffix handed out for it (linear in the names made, not quadratic in how often
// one base repeats; the result is the first free one all the same).
std::string NameAllocator::fresh(const std::string& base) {
  if (taken_.insert(base).second) return base;
  int& next = next_suffix_[base];
  for (int i = std::max(next, 1);; ++i) {
    std::string c = base + "_" + std::to_string(i);
    if (taken_.insert(c).second) {
      next = i + 1;
      return c;
    }
  }
}

std::string NameAllocator::clean(const std::string& hint) const {
  std::string h;
  for (char c : hint) h += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  while (!h.empty() && h.front() == '_') h.erase(0, 1);
  while (!h.empty() && h.back() == '_') h.pop_back();
  if (h.empty()) h = "value";
  if (std::isdigit(static_cast<unsigned char>(h[0]))) h = "value_" + h;
  if (reserved(h)) h += "_";
  return h;
}

}  // namespace tt::pysrc
