// The .tir parser: recursive descent over the .tir text (DESIGN.md §4), building the
// graph only through the ir.h API. Errors are one line, "<file>:<line>:<col>: <what> — <hint>".
//
// Note [Scopes in .tir]
// The text is SSA in topological order: a value must be defined above its first use. A nested
// block sees the values of its enclosing blocks that were defined before the owning node (and
// its own block arguments); values defined inside a block are invisible outside it. Names are
// unique in the whole graph, so a name is either visible, defined elsewhere (not visible), or
// not defined yet (a forward reference) — each gets its own message.
#include "loaders/tir_parser.h"

#include "ir/tir_text.h"
#include "loaders/torch_io.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>

namespace tt {

namespace {

// A scalar as written in the text; converted once the element type is known, so f32 values
// go through strtof (no double rounding) and f64 values through strtod.
struct Scalar {
  enum Kind { Int, Float, Bool } kind;
  std::string text;  // Int/Float: the literal ("-1", "0.5", "inf")
  bool b = false;    // Bool
  size_t pos;
};

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_op_char(char c) { return tir_is_name_char(c) || c == ':'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

const char* kValueHint =
    "attribute values are none, true, false, 3, 0.5, \"text\", [1,2], [0.5,1.0], [\"a\"], a dtype "
    "(f32), device(\"cpu\") or tensor<f32[2]>[1.0,2.0]";
const char* kElemHint =
    "tensor values are a flat list of numbers, inf, nan, true or false: [1.0, -2.5]";
const char* kListHint = "lists hold only ints [1,2], only floats [0.5,1.0] or only strings [\"a\"]";
const char* kGraphHint = "a .tir text starts with graph @name(%x : Type, ...) {";
const char* kBlockHint = "nested blocks are written block0(%arg : Type, ...) { ... return ... }";
const char* kTypeHint =
    "types are Tensor, f32, f32[1,?,3], ?[2,3], int, float, bool, str, None, Device, ScalarType, "
    "Layout, MemoryFormat, Any, List[T], Tuple[T, U], Optional[T], Dict[K, V]";

class Parser {
 public:
  Parser(const std::string& text, const std::string& file) : src_(text), file_(file) {}

  std::unique_ptr<Graph> run() {
    g_ = std::make_unique<Graph>();
    parse_graph();
    parse_weights();
    return std::move(g_);
  }

 private:
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

  void expect(char c, const std::string& context, const std::string& hint) {
    if (eat(c)) return;
    fail(pos_, std::string("expected '") + c + "' " + context + ", found " + found(pos_), hint);
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

  void expect_ident(const char* kw, const std::string& context, const std::string& hint) {
    if (peek_ident(kw)) {
      pos_ += std::char_traits<char>::length(kw);
      return;
    }
    fail(pos_, std::string("expected '") + kw + "' " + context + ", found " + found(pos_), hint);
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
  std::string name_or_string(const std::string& what) {
    skip_ws();
    if (here() == '"') return string_lit();
    std::string s = read_while(tir_is_name_char);
    if (s.empty())
      fail(pos_, "expected " + what + ", found " + found(pos_),
           "write a dotted name (layer1.0.conv) or a quoted string");
    return s;
  }

  // '%' followed directly by a value name.
  std::string value_name(const std::string& context) {
    skip_ws();
    if (here() != '%')
      fail(pos_, "expected a value (%name) " + context + ", found " + found(pos_),
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

  // ------------------------------------------------------------------------------------------
  // types

  std::vector<int64_t> dims() {
    std::vector<int64_t> out;
    expect('[', "to start a shape", "write a shape as [1,?,3]");
    if (eat(']')) return out;
    do {
      skip_ws();
      if (here() == '?') {
        ++pos_;
        out.push_back(-1);
        continue;
      }
      Scalar s = number("write a shape as [1,?,3]");
      int64_t d = to_int(s);
      if (d < 0) fail(s.pos, "negative dimension " + s.text, "write '?' for an unknown dimension");
      out.push_back(d);
    } while (eat(','));
    expect(']', "to close the shape", "write a shape as [1,?,3]");
    return out;
  }

  Type type() {
    skip_ws();
    size_t start = pos_;
    if (here() == '?') {
      ++pos_;
      if (here() == '[') return Type::tensor(DType::Unknown, dims());
      return Type::tensor();
    }
    std::string w = ident();
    if (w.empty()) fail(start, "expected a type, found " + found(start), kTypeHint);
    if (w == "List" || w == "Optional") {
      expect('[', "after " + w, kTypeHint);
      Type elem = type();
      expect(']', "to close " + w + "[...]", kTypeHint);
      return w == "List" ? Type::list(elem) : Type::optional(elem);
    }
    if (w == "Dict") {
      expect('[', "after Dict", kTypeHint);
      Type key = type();
      expect(',', "between the key and value types of Dict[K, V]", kTypeHint);
      Type value = type();
      expect(']', "to close Dict[...]", kTypeHint);
      return Type::dict(key, value);
    }
    if (w == "Tuple") {
      expect('[', "after Tuple", kTypeHint);
      std::vector<Type> elems;
      if (!eat(']')) {
        do elems.push_back(type());
        while (eat(','));
        expect(']', "to close Tuple[...]", kTypeHint);
      }
      return Type::tuple(std::move(elems));
    }
    // "bool" is the Python bool type unless a shape follows ("bool[2,3]" is a bool tensor).
    if (here() != '[') {
      static const std::pair<const char*, Type::Kind> kinds[] = {
          {"Any", Type::Kind::Any},       {"int", Type::Kind::Int},
          {"float", Type::Kind::Float},   {"bool", Type::Kind::Bool},
          {"str", Type::Kind::Str},       {"None", Type::Kind::None},
          {"Device", Type::Kind::Device}, {"ScalarType", Type::Kind::ScalarType},
          {"Layout", Type::Kind::Layout}, {"MemoryFormat", Type::Kind::MemoryFormat},
      };
      if (w == "Tensor") return Type::tensor();
      for (const auto& k : kinds)
        if (w == k.first) return Type::of(k.second);
    }
    std::optional<DType> d = dtype_from_name(w);
    if (!d) fail(start, "unknown type '" + w + "'", kTypeHint);
    if (here() == '[') return Type::tensor(*d, dims());
    return Type::tensor(*d);
  }

  // ------------------------------------------------------------------------------------------
  // tensors

  // Builds a tensor of type `t` (complete) from row-major elements.
  at::Tensor make_tensor(const Type& t, const std::vector<Scalar>& elems, size_t pos) {
    int64_t numel = 1;
    for (int64_t d : *t.shape) numel *= d;
    if (static_cast<int64_t>(elems.size()) != numel)
      fail(pos,
           t.str() + " needs " + std::to_string(numel) + " values, found " +
               std::to_string(elems.size()),
           "write one value per element, row-major, in a flat list");
    const int64_t code = dtype_to_scalar_type(t.dtype);
    const auto st = static_cast<at::ScalarType>(code);
    if (code < 0 || at::isComplexType(st) || at::isQIntType(st))
      fail(pos, std::string("cannot write ") + dtype_name(t.dtype) + " tensors inline",
           "use a declaration (zeros), random(seed=N) or external(\"file.pth\") for this weight");
    at::Tensor out;
    if (t.dtype == DType::F64) {
      std::vector<double> v;
      for (const Scalar& s : elems) v.push_back(to_double(s));
      out = at::from_blob(v.data(), {numel}, at::kDouble).clone();
    } else if (at::isFloatingType(st)) {
      std::vector<float> v;
      for (const Scalar& s : elems) v.push_back(to_float(s));
      out = at::from_blob(v.data(), {numel}, at::kFloat).clone();
    } else if (t.dtype == DType::Bool) {
      std::vector<uint8_t> v;
      for (const Scalar& s : elems) {
        if (s.kind != Scalar::Bool)
          fail(s.pos, "expected true or false in a bool tensor, found '" + s.text + "'",
               "bool tensors hold true/false");
        v.push_back(s.b ? 1 : 0);
      }
      out = at::from_blob(v.data(), {numel}, at::kByte).clone();
    } else {
      int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
      switch (t.dtype) {
        case DType::I32:
          lo = INT32_MIN;
          hi = INT32_MAX;
          break;
        case DType::I16:
          lo = INT16_MIN;
          hi = INT16_MAX;
          break;
        case DType::I8:
          lo = INT8_MIN;
          hi = INT8_MAX;
          break;
        case DType::U8:
          lo = 0;
          hi = 255;
          break;
        default:
          break;
      }
      std::vector<int64_t> v;
      for (const Scalar& s : elems) {
        int64_t x = to_int(s);
        if (x < lo || x > hi)
          fail(s.pos, "value " + s.text + " does not fit in " + dtype_name(t.dtype),
               "use a wider integer dtype");
        v.push_back(x);
      }
      out = at::from_blob(v.data(), {numel}, at::kLong).clone();
    }
    return out.to(st).reshape(*t.shape);
  }

  std::vector<Scalar> element_list() {
    std::vector<Scalar> elems;
    expect('[', "to start the values", kElemHint);
    if (eat(']')) return elems;
    do elems.push_back(element());
    while (eat(','));
    expect(']', "to close the values", kElemHint);
    return elems;
  }

  void require_complete(const Type& t, size_t pos, const std::string& what) {
    if (!t.is_tensor() || !t.is_complete())
      fail(pos, what + " needs a tensor type with a dtype and all dimensions, found " + t.str(),
           "write e.g. f32[2,3]");
  }

  // ------------------------------------------------------------------------------------------
  // attribute values

  AttrValue attr_value() {
    skip_ws();
    const size_t start = pos_;
    const char c = here();
    if (c == '"') return string_lit();
    if (c == '[') return attr_list();
    if (is_digit(c) || c == '-' || c == '+' || c == '.') {
      Scalar s = number();
      if (s.kind == Scalar::Int) return to_int(s);
      return to_double(s);
    }
    if (c == '?') {
      ++pos_;
      return DType::Unknown;
    }
    std::string w = ident();
    if (w.empty()) fail(start, "expected an attribute value, found " + found(start), kValueHint);
    if (w == "none") return NoneAttr{};
    if (w == "true") return true;
    if (w == "false") return false;
    if (w == "inf") return std::numeric_limits<double>::infinity();
    if (w == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (w == "device") {
      expect('(', "after device", "write device(\"cpu\")");
      std::string name = string_lit();
      expect(')', "to close device(...)", "write device(\"cpu\")");
      return DeviceAttr{name};
    }
    if (w == "tensor") {
      expect('<', "after tensor", "write tensor<f32[2]>[1.0,2.0]");
      size_t tpos = pos_;
      Type t = type();
      require_complete(t, tpos, "an inline tensor");
      expect('>', "to close tensor<...>", "write tensor<f32[2]>[1.0,2.0]");
      size_t vpos = pos_;
      std::vector<Scalar> elems = element_list();
      return make_tensor(t, elems, vpos);
    }
    if (std::optional<DType> d = dtype_from_name(w)) return *d;
    fail(start, "unknown attribute value '" + w + "'", kValueHint);
  }

  AttrValue attr_list() {
    const size_t start = pos_;
    expect('[', "to start a list", kListHint);
    if (eat(']')) return std::vector<int64_t>{};
    if (peek() == '"') {
      std::vector<std::string> out;
      do out.push_back(string_lit());
      while (eat(','));
      expect(']', "to close the list", kListHint);
      return out;
    }
    std::vector<Scalar> nums;
    bool any_float = false;
    do {
      Scalar s = number(kListHint);
      any_float |= s.kind == Scalar::Float;
      nums.push_back(s);
    } while (eat(','));
    expect(']', "to close the list", kListHint);
    (void)start;
    if (any_float) {
      std::vector<double> out;
      for (const Scalar& s : nums) out.push_back(to_double(s));
      return out;
    }
    std::vector<int64_t> out;
    for (const Scalar& s : nums) out.push_back(to_int(s));
    return out;
  }

  // ------------------------------------------------------------------------------------------
  // values and scopes (Note [Scopes in .tir])

  void define(const std::string& name, Value* v) { scopes_.back()[name] = v; }

  Value* lookup(const std::string& name, size_t pos) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    if (g_->find_value(name))
      fail(pos, "%" + name + " is not visible here",
           "a value defined inside a block (or by the node that owns this block) cannot be used "
           "outside it; return it from the block");
    fail(pos, "use of undefined value %" + name,
         "values must be defined above their first use (SSA order); check the spelling");
  }

  void check_new_name(const std::string& name, size_t pos) {
    if (g_->find_value(name))
      fail(pos, "redefinition of %" + name,
           "value names are unique within a graph; rename one of them");
  }

  Value* checked_name(Value* v, const std::string& name, size_t pos) {
    // The graph keeps the hint when it is free (checked above); anything else is a clash.
    if (v->name() != name) fail(pos, "cannot name a value %" + name, "pick another value name");
    return v;
  }

  // ------------------------------------------------------------------------------------------
  // graph, blocks, nodes

  void parse_graph() {
    expect_ident("graph", "at the start of the file", kGraphHint);
    if (eat('@')) g_->set_name(name_or_string("a graph name"));
    expect('(', "to start the graph inputs", kGraphHint);
    scopes_.emplace_back();
    if (!eat(')')) {
      do {
        size_t p = (skip_ws(), pos_);
        std::string name = value_name("as a graph input");
        expect(':', "after the input name", "write %name : Type");
        Type t = type();
        check_new_name(name, p);
        define(name, checked_name(g_->add_input(t, name), name, p));
      } while (eat(','));
      expect(')', "to close the graph inputs", "separate inputs with ','");
    }
    expect('{', "to start the graph body", kGraphHint);
    parse_block_body(g_->block());
  }

  // Nodes up to and including "return ... }".
  void parse_block_body(Block* b) {
    while (true) {
      skip_ws();
      if (pos_ >= src_.size())
        fail(pos_, "unexpected end of input inside a block",
             "end every block with 'return ...' and '}'");
      if (peek_ident("return")) {
        pos_ += 6;
        if (peek() == '%') {
          do {
            size_t p = (skip_ws(), pos_);
            b->add_output(lookup(value_name("in return"), p));
          } while (eat(','));
        }
        expect('}', "after return", "'return' is the last line of a block");
        return;
      }
      parse_node(b);
    }
  }

  void parse_node(Block* b) {
    struct Out {
      std::string name;
      Type type;
      size_t pos;
    };
    std::vector<Out> outs;
    skip_ws();
    if (here() == '%') {
      do {
        size_t p = (skip_ws(), pos_);
        std::string name = value_name("as a node output");
        expect(':', "after %" + name, "write %name : Type");
        outs.push_back({name, type(), p});
      } while (eat(','));
      expect('=', "after the node outputs", "write %y : Type = op[attrs](inputs)");
    }
    skip_ws();
    const size_t op_pos = pos_;
    std::string op = read_while(is_op_char);
    if (op.empty())
      fail(op_pos, "expected an op name, found " + found(op_pos),
           "a node line is '%y : Type = op[attrs](%inputs)' and a block ends with 'return'");

    Attrs attrs;
    if (peek() == '[') {
      ++pos_;
      if (!eat(']')) {
        do {
          size_t p = (skip_ws(), pos_);
          std::string key = ident();
          if (key.empty())
            fail(p, "expected an attribute name, found " + found(p), "write name=value");
          if (attrs.has(key))
            fail(p, "duplicate attribute '" + key + "'", "give each attribute once");
          expect('=', "after attribute '" + key + "'", "write name=value");
          attrs.set(key, attr_value());
        } while (eat(','));
        expect(']', "to close the attributes of " + op, "separate attributes with ','");
      }
    }

    std::vector<Value*> inputs;
    expect('(', "after " + op, "every node has an input list, possibly empty: op()");
    if (!eat(')')) {
      do {
        size_t p = (skip_ws(), pos_);
        inputs.push_back(lookup(value_name("as an input of " + op), p));
      } while (eat(','));
      expect(')', "to close the inputs of " + op, "separate inputs with ','");
    }

    // Appended at once so the graph stays consistent (and destructible) if a later part of
    // the line is malformed.
    Node* n = g_->create(op, inputs, 0);
    b->append(n);
    for (const Out& o : outs) {
      check_new_name(o.name, o.pos);
      checked_name(n->add_output(o.type, o.name), o.name, o.pos);
    }
    for (const auto& kv : attrs.items()) n->attrs().set(kv.first, kv.second);

    bool seen_module = false, seen_scope = false, seen_loc = false;
    while (true) {
      char c = peek();
      size_t p = pos_;
      if (c == '@') {
        ++pos_;
        // Keys may be dotted: nn.MultiheadAttention owns "out_proj.weight".
        std::string key = read_while(tir_is_name_char);
        if (key.empty()) fail(p, "expected a weight key after '@'", "write @weight=layer.weight");
        if (!n->weight(key).empty())
          fail(p, "duplicate weight ref @" + key, "give each weight key once");
        expect('=', "after @" + key, "write @weight=layer.weight");
        n->set_weight(key, name_or_string("a weight name"));
      } else if (c == '#') {
        ++pos_;
        std::string key = ident();
        auto once = [&](bool& seen) {
          if (seen) fail(p, "duplicate #" + key, "give each of #module, #scope, #loc once");
          seen = true;
          expect('=', "after #" + key, "write #module=path, #scope=path or #loc=\"file.py:12\"");
        };
        if (key == "module") {
          once(seen_module);
          n->set_module(name_or_string("a module path"));
        } else if (key == "scope") {
          once(seen_scope);
          n->set_scope(name_or_string("a module path"));
        } else if (key == "loc") {
          once(seen_loc);
          n->set_loc(string_lit());
        } else {
          fail(p, "unknown metadata '#" + key + "'",
               "node metadata is #module=, #scope= and #loc=\"...\"");
        }
      } else {
        break;
      }
    }

    if (peek() == '{') {
      ++pos_;
      size_t index = 0;
      while (!eat('}')) {
        size_t p = (skip_ws(), pos_);
        std::string kw = ident();
        std::string want = "block" + std::to_string(index);
        if (kw != want)
          fail(p,
               "expected '" + want + "' in the blocks of " + op + ", found " +
                   (kw.empty() ? found(p) : "'" + kw + "'"),
               "nested blocks are written block0(...) { ... } block1(...) { ... } and closed with "
               "'}'");
        Block* nb = n->add_block();
        scopes_.emplace_back();
        expect('(', "after " + want, kBlockHint);
        if (!eat(')')) {
          do {
            size_t vp = (skip_ws(), pos_);
            std::string name = value_name("as a block argument");
            expect(':', "after %" + name, "write %name : Type");
            Type t = type();
            check_new_name(name, vp);
            define(name, checked_name(nb->add_input(t, name), name, vp));
          } while (eat(','));
          expect(')', "to close the arguments of " + want, kBlockHint);
        }
        expect('{', "to start " + want, kBlockHint);
        parse_block_body(nb);
        scopes_.pop_back();
        ++index;
      }
    }
    // Outputs become visible only after the node (its own blocks cannot see them).
    for (size_t i = 0; i < outs.size(); ++i) define(outs[i].name, n->output(i));
  }

  // ------------------------------------------------------------------------------------------
  // weights section

  void parse_weights() {
    skip_ws();
    if (pos_ >= src_.size()) return;
    size_t p = pos_;
    if (!peek_ident("weights"))
      fail(p, "unexpected " + found(p) + " after the graph",
           "a .tir text holds one graph and an optional 'weights { ... }' section; separate test "
           "cases with a line '// -----'");
    pos_ += 7;
    expect('{', "after weights", "write weights { name : f32[2] param ... }");
    while (!eat('}')) {
      size_t np = (skip_ws(), pos_);
      if (np >= src_.size())
        fail(np, "unexpected end of input in the weights section", "close it with '}'");
      std::string name = name_or_string("a weight name");
      if (g_->weights().has(name))
        fail(np, "duplicate weight '" + name + "'", "declare each weight once");
      expect(':', "after the weight name", "write name : f32[2,3] param");
      size_t tp = (skip_ws(), pos_);
      Type t = type();
      if (!t.is_tensor())
        fail(tp, "weight type must be a tensor type, found " + t.str(), "write e.g. f32[64,3,7,7]");
      size_t kp = (skip_ws(), pos_);
      std::string kind = ident();
      if (kind != "param" && kind != "buffer")
        fail(kp,
             "expected 'param' or 'buffer', found " + (kind.empty() ? found(kp) : "'" + kind + "'"),
             "write name : f32[2,3] param (or buffer)");
      Weight w;
      w.is_param = kind == "param";
      if (eat('=')) {
        size_t vp = (skip_ws(), pos_);
        if (here() == '[') {
          require_complete(t, tp, "an inline weight");
          std::vector<Scalar> elems = element_list();
          w.tensor = make_tensor(t, elems, vp);
        } else if (peek_ident("random")) {
          pos_ += 6;
          expect('(', "after random", "write random(seed=N)");
          expect_ident("seed", "in random(...)", "write random(seed=N)");
          expect('=', "after seed", "write random(seed=N)");
          Scalar s = number("write random(seed=N)");
          int64_t seed = to_int(s);
          if (seed < 0)
            fail(s.pos, "seed must not be negative", "write random(seed=N) with N >= 0");
          expect(')', "to close random(...)", "write random(seed=N)");
          require_complete(t, tp, "random()");
          w.tensor = random_tensor(t, static_cast<uint64_t>(seed), vp);
        } else if (peek_ident("external")) {
          pos_ += 8;
          expect('(', "after external", "write external(\"file.pth\")");
          std::string file = string_lit();
          expect(')', "to close external(...)", "write external(\"file.pth\")");
          w.tensor = external_tensor(name, t, file, vp);
        } else {
          fail(vp, "expected a weight value, found " + found(vp),
               "write [values...], random(seed=N) or external(\"file.pth\"), or leave the value "
               "out for zeros");
        }
      } else if (t.is_complete()) {
        const auto st = static_cast<at::ScalarType>(dtype_to_scalar_type(t.dtype));
        if (at::isQIntType(st))
          fail(tp,
               std::string("cannot create a ") + dtype_name(t.dtype) + " weight from a declaration",
               "quantized weights can only come from external(\"file.pth\")");
        w.tensor = at::zeros(*t.shape, at::TensorOptions().dtype(st));
      }
      // An incomplete declaration (f32[?,3], Tensor) leaves the tensor undefined.
      g_->weights().set(name, std::move(w));
    }
    skip_ws();
    if (pos_ < src_.size())
      fail(pos_, "unexpected " + found(pos_) + " after the weights section",
           "separate test cases with a line '// -----'");
  }

  // Deterministic and independent of the global RNG: a private generator per weight.
  at::Tensor random_tensor(const Type& t, uint64_t seed, size_t pos) {
    const auto st = static_cast<at::ScalarType>(dtype_to_scalar_type(t.dtype));
    if (at::isQIntType(st))
      fail(pos, std::string("random() cannot make ") + dtype_name(t.dtype) + " weights",
           "quantized weights can only come from external(\"file.pth\")");
    at::Generator gen = at::detail::createCPUGenerator(seed);
    if (at::isFloatingType(st) || at::isComplexType(st)) {
      at::ScalarType base = st == at::kDouble || at::isComplexType(st) ? st : at::kFloat;
      return at::randn(*t.shape, gen, at::TensorOptions().dtype(base)).to(st);
    }
    const int64_t high = st == at::kBool ? 2 : 10;
    return at::randint(0, high, *t.shape, gen, at::TensorOptions().dtype(at::kLong)).to(st);
  }

  at::Tensor external_tensor(const std::string& name, const Type& t, const std::string& file,
                             size_t pos) {
    namespace fs = std::filesystem;
    fs::path path(file);
    if (path.is_relative() && file_ != "<input>") path = fs::path(file_).parent_path() / path;
    const std::string key = path.lexically_normal().string();
    auto it = external_.find(key);
    if (it == external_.end()) {
      std::vector<std::pair<std::string, at::Tensor>> items;
      try {
        items = load_tensor_dict(key);
      } catch (const Error& e) {
        fail(pos, "cannot read external weights '" + key + "': " + e.what(),
             "check the path (relative to the .tir file)");
      } catch (const std::exception& e) {
        fail(pos, "cannot read external weights '" + key + "': " + e.what(),
             "check the path (relative to the .tir file)");
      }
      std::unordered_map<std::string, at::Tensor> m;
      for (auto& kv : items) m.emplace(kv.first, kv.second);
      it = external_.emplace(key, std::move(m)).first;
    }
    auto f = it->second.find(name);
    if (f == it->second.end())
      fail(pos, "weight '" + name + "' is not in " + key,
           "the file holds " + std::to_string(it->second.size()) +
               " tensors; check the weight name");
    const at::Tensor& x = f->second;
    Type got = tir_tensor_type(x);
    bool ok = t.dtype == DType::Unknown || t.dtype == got.dtype;
    if (ok && t.shape) {
      ok = t.shape->size() == got.shape->size();
      for (size_t i = 0; ok && i < t.shape->size(); ++i)
        ok = (*t.shape)[i] < 0 || (*t.shape)[i] == (*got.shape)[i];
    }
    if (!ok)
      fail(pos,
           "weight '" + name + "' is " + got.str() + " in " + key + ", but declared " + t.str(),
           "fix the declared type or the file");
    return x;
  }

  const std::string& src_;
  std::string file_;
  size_t pos_ = 0;
  std::unique_ptr<Graph> g_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
  std::map<std::string, std::unordered_map<std::string, at::Tensor>> external_;
};

}  // namespace

std::unique_ptr<Graph> parse_tir(const std::string& text, const std::string& filename) {
  try {
    return Parser(text, filename).run();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // LibTorch errors (tensor construction) must not escape as raw exceptions.
    std::string msg = e.what();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.erase(nl);
    throw Error(ExitCode::BadInput, filename + ": " + msg + " — check the .tir text");
  }
}

std::vector<std::string> split_tir_cases(const std::string& text) {
  // Each case keeps its original line numbers (earlier lines become blank lines), so parse
  // errors point at the right line of the file.
  std::vector<std::string> cases;
  std::string cur;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool has_nl = end != std::string::npos;
    if (!has_nl) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = has_nl ? end + 1 : end;
    ++line_no;
    size_t b = line.find_first_not_of(" \t\r");
    size_t e = line.find_last_not_of(" \t\r");
    std::string trimmed = b == std::string::npos ? "" : line.substr(b, e - b + 1);
    bool is_sep = trimmed.size() >= 7 && trimmed.compare(0, 3, "// ") == 0 &&
                  trimmed.find_first_not_of('-', 3) == std::string::npos;
    if (is_sep) {
      cases.push_back(cur);
      cur = std::string(line_no, '\n');
      continue;
    }
    cur += line;
    if (has_nl) cur += '\n';
  }
  cases.push_back(cur);
  return cases;
}

}  // namespace tt
