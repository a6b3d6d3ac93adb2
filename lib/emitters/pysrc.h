// The Python-source toolkit: the lexical pieces every emitter of Python (or TorchScript) source
// needs, so that they quote, format numbers and allocate names one way (issue #13, item 3).
//
// - lexical checks: keywords, identifiers;
// - literals: string quoting (py_str), Python's repr() of floats (py_float), lists and tuples;
// - strings: split / join;
// - expressions: an expression text with its precedence (Expr), attribute paths, parallel
//   assignment;
// - names: NameAllocator, unique local names given a set of reserved words.
//
// Everything here is pure text: no IR, no tensors.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tt::pysrc {

// ---------------------------------------------------------------------------------------------
// lexical checks

// A Python 3 keyword ("None", "lambda", "yield", ...; not the soft keywords match/case/type).
bool is_keyword(const std::string& s);

// The shape of an ASCII identifier, [A-Za-z_][A-Za-z0-9_]*, keywords included ("class" is a
// name, "0" and "a.b" are not).
bool is_name(const std::string& s);

// A name that can be written as an identifier: is_name and not a keyword.
bool is_identifier(const std::string& s);

// Non-empty and only the digits 0-9.
bool all_digits(const std::string& s);

// ---------------------------------------------------------------------------------------------
// literals

// A double-quoted Python string literal: backslash, the quote, \n, \r and \t escaped; the other
// control characters (and DEL) as \xNN, or with `octal` as \ooo (which TorchScript's lexer reads
// too: it has no \x); every other byte (UTF-8 included) as it is.
std::string py_str(const std::string& s, bool octal = false);

// Python's repr() of a float: the shortest digits that round-trip, fixed notation for decimal
// exponents in [-4, 16), scientific otherwise ("1e-05", "0.0001", "1.0", "1e+16", "-0.0");
// float("nan"), float("inf") and -float("inf") for the others. The float overload prints with
// float32's shortest digits (0.1f -> "0.1", not "0.10000000149011612").
std::string py_float(double v);
std::string py_float(float v);

// "True" / "False".
inline const char* py_bool(bool b) { return b ? "True" : "False"; }

// Element texts of number lists (ints as std::to_string, floats as py_float).
std::vector<std::string> int_items(const std::vector<int64_t>& v);
std::vector<std::string> float_items(const std::vector<double>& v);

// "[a, b]" (a list display) and "()", "(a,)", "(a, b)" (a tuple display).
std::string py_list(const std::vector<std::string>& items);
std::string py_tuple(const std::vector<std::string>& items);

// ---------------------------------------------------------------------------------------------
// strings

// "a.b" -> {"a", "b"}; "" -> {""}; empty parts kept ("a..b" -> {"a", "", "b"}).
std::vector<std::string> split(const std::string& s, char sep);
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
// "encoder_layer" -> "EncoderLayer": each '_'-separated part capitalised, the '_' dropped.
std::string camel_case(const std::string& s);

// ---------------------------------------------------------------------------------------------
// expressions

// Python's operator precedence, loosest first (the language reference's table, without lambda
// and the conditional expression, which the emitters never write).
enum class Prec : int8_t {
  Or,
  And,
  Not,
  Compare,
  BitOr,
  BitXor,
  BitAnd,
  Shift,
  Add,
  Mul,
  Unary,
  Power,
  Atom
};

// An expression with its precedence: whether it can be a call receiver or an operand without
// parentheses. A negative literal ("-1") binds like a unary minus.
struct Expr {
  Expr() = default;
  Expr(std::string t, bool atomic = true,
       std::optional<std::vector<std::string>> elems = std::nullopt)
      : text(std::move(t)), prec(atomic ? Prec::Atom : Prec::Unary), list_elems(std::move(elems)) {}
  Expr(std::string t, Prec p) : text(std::move(t)), prec(p) {}
  std::string text;
  Prec prec = Prec::Atom;
  // Set for list literals: the element texts (lets `x.view([a, b])` become `x.view(a, b)`).
  std::optional<std::vector<std::string>> list_elems;
  // Set for basic slicing written as one subscript, "x[:, a:b]": the sliced expression's text
  // and the subscripts (":" or a slice), so that a slice of it on a later dim joins them
  // ("x[:, a:b][:, :, c:]" is "x[:, a:b, c:]").
  std::optional<std::pair<std::string, std::vector<std::string>>> slices;
  bool atomic() const { return prec == Prec::Atom; }
};

// `e` as a receiver: "x", "(a + b)".
std::string receiver(const Expr& e);
// "not x", "not (a == b)".
std::string not_expr(const Expr& e);
// `a op b` with the parentheses Python's precedence needs: "a - (b - c)", "(a + b) * c",
// "(-2) ** x", "(a < b) < c" (comparisons would chain). `op` is a binary operator ("+", "//",
// "**", "==", "in", "is not", "and", ...).
Expr binary_expr(const Expr& a, const std::string& op, const Expr& b);
// `op a` for "-", "+" and "~": "-x", "-(a + b)", "-(-1)".
Expr unary_expr(const std::string& op, const Expr& a);

// base.a.b, with getattr(base, "0") for the components `plain` rejects (by default those that
// are not identifiers): "self", {"layer1", "0", "conv1"} -> getattr(self.layer1, "0").conv1.
std::string attr_path(const std::string& base, const std::vector<std::string>& comps,
                      bool (*plain)(const std::string&) = is_identifier);
// The same for a dotted path; `base` itself for "".
std::string dotted_attr(const std::string& base, const std::string& dotted);

// `owner.name = rhs`, or setattr(owner, "name", rhs) when name is not an identifier.
std::string assign_attr(const std::string& owner, const std::string& name, const std::string& rhs);

// `a, b = x, y` for the pairs whose two sides differ, skipping empty left sides ("" when none).
std::string parallel_assign(const std::vector<std::string>& lhs,
                            const std::vector<std::string>& rhs);

// ---------------------------------------------------------------------------------------------
// names

// Allocates unique Python names in one scope. A name is usable when it is an identifier the
// `reserved` predicate does not reject (keywords are always rejected); taken names are never
// handed out again.
class NameAllocator {
 public:
  using Reserved = std::function<bool(const std::string&)>;
  explicit NameAllocator(Reserved reserved = nullptr) : reserved_(std::move(reserved)) {}

  // is_identifier(s) and not reserved.
  bool usable(const std::string& s) const;
  bool reserved(const std::string& s) const;
  bool taken(const std::string& s) const { return taken_.count(s) != 0; }
  // Marks `s` as taken (whether or not it is usable).
  void take(const std::string& s) { taken_.insert(s); }

  // `base` when free, else the first free of base_1, base_2, ...; taken on return. `base` is
  // used as it is (no cleaning).
  std::string fresh(const std::string& base);

  // A hint made into a usable name: characters other than [A-Za-z0-9_] become '_', leading and
  // trailing '_' are dropped, "" becomes "value", a leading digit gets "value_" before it and a
  // reserved word "_" after it ("conv1.0" -> "conv1_0", "3" -> "value_3", "if" -> "if_").
  std::string clean(const std::string& hint) const;

  // fresh(clean(hint)).
  std::string unique(const std::string& hint) { return fresh(clean(hint)); }

 private:
  Reserved reserved_;
  std::unordered_set<std::string> taken_;
  std::unordered_map<std::string, int> next_suffix_;  // where fresh(base) resumes its search
};

}  // namespace tt::pysrc
