// The .tir parser: recursive descent over the .tir text (DESIGN.md §4), building the
// graph only through the ir.h API; the lexing is tir_lexer.h. Errors are one line,
// "<file>:<line>:<col>: <what> — <hint>".
//
// Note [Scopes in .tir]
// The text is SSA in topological order: a value must be defined above its first use. A nested
// block sees the values of its enclosing blocks that were defined before the owning node (and
// its own block arguments); values defined inside a block are invisible outside it. Names are
// unique in the whole graph, so a name is either visible, defined elsewhere (not visible), or
// not defined yet (a forward reference) — each gets its own message.
#include "loaders/tir_parser.h"

#include "ir/tir_text.h"
#include "loaders/jit_builtins.h"
#include "loaders/tir_lexer.h"
#include "loaders/torch_io.h"
#include "support/diag.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/EmptyTensor.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <thread>
#include <unordered_map>

namespace tt {

namespace {

const char* kListHint = "lists hold only ints [1,2], only floats [0.5,1.0] or only strings [\"a\"]";
const char* kGraphHint = "a .tir text starts with graph @name(%x : Type, ...) {";
const char* kBlockHint = "nested blocks are written block0(%arg : Type, ...) { ... return ... }";
const char* kTypeHint =
    "types are Tensor, f32, f32[1,?,3], ?[2,3], int, float, bool, str, None, Device, ScalarType, "
    "Layout, MemoryFormat, Any, List[T], Tuple[T, U], Optional[T], Dict[K, V], "
    "NamedTuple[\"qualified.Name\", field: T, ...]";

using namespace tir;

class Parser : Lexer {
 public:
  Parser(const std::string& text, const std::string& file) : Lexer(text, file) {}

  std::unique_ptr<Graph> run(const TirParseOptions& options) {
    g_ = std::make_unique<Graph>();
    // One node per line, mostly one value each: at most one name per line (issue #22: the name
    // table of a 1M-node graph otherwise rehashes its way up).
    g_->reserve_values(static_cast<size_t>(std::count(src_.begin(), src_.end(), '\n')) + 1);
    WeightsAhead ahead;
    start_weights_ahead(ahead, options);
    parse_graph();
    parse_sections(ahead);
    return std::move(g_);
  }

 private:
  // Note [Weights parsed beside the graph]
  // The weights section of a big graph (scripts/bench_passes.sh's 1M-node graph declares 730k
  // weights, 1.5 s of its parse; issue #22) depends on nothing before it: it only fills the
  // weight store. So when the text has a line starting with `weights {` far enough in, a second
  // parser on a second thread parses the section from there, into its own graph's store, while
  // this one parses the graph. The guess is checked, not trusted: when this parser reaches the
  // `weights` keyword, it takes the other thread's store (or rethrows its error) only if the
  // keyword is exactly where that thread started; otherwise (the line was inside a string, say)
  // it drops that work and parses the section itself. Errors come out as a sequential parse
  // gives them: one in the graph or the modules section is thrown before the weights are
  // looked at (the thread is joined and its result dropped), and an error in the weights section
  // is the same error, at the same position, from either parser. On that graph the command's
  // wall time fell by about 1.3 s (medians of 4 alternating runs, 11.7 against 13.0 s); its CPU
  // time did not change. tests/unit/test_tir.cpp parses every testdata file, and a sample of
  // their truncations and byte flips, both ways and compares.
  struct WeightsAhead {
    size_t pos = std::string::npos;  // where the other thread started; npos: no thread
    std::thread thread;
    std::unique_ptr<Graph> graph;  // its weight store is the result
    size_t end = 0;                // the position after the section
    std::exception_ptr error;
    ~WeightsAhead() {
      if (thread.joinable()) thread.join();
    }
  };

  void start_weights_ahead(WeightsAhead& ahead, const TirParseOptions& options) {
    static const std::string kKey = "\nweights";
    size_t at = src_.rfind(kKey);
    if (at == std::string::npos) return;
    ++at;  // the keyword's position
    if (at < options.weights_thread_min_offset) return;
    size_t b = at + kKey.size() - 1;
    while (b < src_.size() && (src_[b] == ' ' || src_[b] == '\t')) ++b;
    if (b >= src_.size() || src_[b] != '{') return;
    ahead.pos = at;
    ahead.thread = std::thread([this, &ahead] {
      try {
        Parser sub(src_, file_);
        sub.g_ = std::make_unique<Graph>();
        sub.pos_ = ahead.pos;
        sub.parse_weights();
        ahead.end = sub.pos_;
        ahead.graph = std::move(sub.g_);
      } catch (...) {
        ahead.error = std::current_exception();
      }
    });
  }

  // The section at pos_ through the other thread's work when it started right here; false when
  // there is none to take.
  bool take_weights_ahead(WeightsAhead& ahead) {
    if (ahead.pos == std::string::npos) return false;
    ahead.thread.join();
    const bool here = ahead.pos == pos_;
    ahead.pos = std::string::npos;
    if (!here) return false;
    if (ahead.error) std::rethrow_exception(ahead.error);
    g_->weights() = std::move(ahead.graph->weights());
    pos_ = ahead.end;
    return true;
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
    // NamedTuple["qualified.Name", field: T, ...] (Note [NamedTuple types] in ir/ir.h)
    if (w == "NamedTuple") {
      expect('[', "after NamedTuple", kTypeHint);
      std::string name = string_lit();
      if (name.empty()) fail(start, "a NamedTuple needs a name", kTypeHint);
      std::vector<std::string> fields;
      std::vector<Type> elems;
      while (eat(',')) {
        size_t at = pos_;
        std::string field = ident();
        if (field.empty()) fail(at, "expected a field name, found " + found(at), kTypeHint);
        if (std::count(fields.begin(), fields.end(), field))
          fail(at, "the NamedTuple has two fields named '" + field + "'", kTypeHint);
        expect(':', "after the field name", kTypeHint);
        fields.push_back(field);
        elems.push_back(type());
      }
      expect(']', "to close NamedTuple[...]", kTypeHint);
      return Type::named_tuple(std::move(name), std::move(fields), std::move(elems));
    }
    // Enum["qualified.Name", NAME=VALUE, ...] (Note [Enum types] in ir/ir.h)
    if (w == "Enum") {
      const char* hint = "write Enum[\"pkg.Name\", A=1, B=2] (values: all int, float or str)";
      expect('[', "after Enum", hint);
      std::string name = string_lit();
      if (name.empty()) fail(start, "an Enum needs a name", hint);
      std::vector<std::string> members, seen;
      std::optional<size_t> kind;
      while (eat(',')) {
        size_t at = pos_;
        std::string member = ident();
        if (member.empty()) fail(at, "expected a member name, found " + found(at), hint);
        if (std::count(seen.begin(), seen.end(), member))
          fail(at, "the Enum has two members named '" + member + "'", hint);
        expect('=', "after the member name", hint);
        size_t vpos = pos_;
        AttrValue v = attr_value();
        if (!std::holds_alternative<int64_t>(v) && !std::holds_alternative<double>(v) &&
            !std::holds_alternative<std::string>(v))
          fail(vpos, "an Enum member's value must be an int, a float or a string", hint);
        if (kind && *kind != v.index())
          fail(vpos, "the Enum's members have values of different types", hint);
        kind = v.index();
        seen.push_back(member);
        members.push_back(enum_member_field(member, v));
      }
      expect(']', "to close Enum[...]", hint);
      Type value = Type::of(!kind                                    ? Type::Kind::Int
                            : *kind == AttrValue(int64_t{0}).index() ? Type::Kind::Int
                            : *kind == AttrValue(0.0).index()        ? Type::Kind::Float
                                                                     : Type::Kind::Str);
      return Type::enum_type(std::move(name), value, std::move(members));
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
          {"Any", Type::Kind::Any},
          {"int", Type::Kind::Int},
          {"float", Type::Kind::Float},
          {"bool", Type::Kind::Bool},
          {"complex", Type::Kind::Complex},
          {"str", Type::Kind::Str},
          {"None", Type::Kind::None},
          {"Device", Type::Kind::Device},
          {"ScalarType", Type::Kind::ScalarType},
          {"Layout", Type::Kind::Layout},
          {"MemoryFormat", Type::Kind::MemoryFormat},
          {"Generator", Type::Kind::Generator},
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
    if (w == "complex") {  // Note [Complex scalars]
      const char* hint = "write complex(1.0, -0.5)";
      expect('(', "after complex", hint);
      double re = to_double(number(hint));
      expect(',', "between the parts of complex(re, im)", hint);
      double im = to_double(number(hint));
      expect(')', "to close complex(...)", hint);
      return std::complex<double>(re, im);
    }
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

  // A value is visible when it was defined in a block that encloses the one being parsed and is
  // not an output of a node whose blocks are being parsed (its outputs exist from the start of
  // its line, but count as defined only after its last block). The graph's name table finds the
  // value; the stack of open blocks decides: no table of names per scope (issue #22: 10^6 names
  // hashed a second time and freed at the end).
  bool visible(const Value* v) const {
    const Block* def = v->node()->owning_block();  // the block itself for a block argument
    for (size_t i = open_.size(); i-- > 0;) {
      if (open_[i] == def) return true;
      if (open_[i]->owning_node() == v->node()) return false;
    }
    return false;
  }

  Value* lookup(const std::string& name, size_t pos) {
    Value* v = g_->find_value(name);
    if (v && visible(v)) return v;
    if (v)
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

  // Note [Naming parsed values]
  // A new value takes its name with one lookup of the graph's name table (Value::set_name takes a
  // free hint with one try_emplace): the value is made first and a name that was taken is then
  // reported as the redefinition it is, instead of asking the table first (a second lookup per
  // value: 10^6 on the graph of scripts/bench_passes.sh; issue #22). The parse fails either way.
  Value* checked_name(Value* v, const std::string& name, size_t pos) {
    if (v->name() == name) return v;
    check_new_name(name, pos);  // taken: "redefinition of %name"
    fail(pos, "cannot name a value %" + name, "pick another value name");
  }

  // ------------------------------------------------------------------------------------------
  // graph, blocks, nodes

  void parse_graph() {
    expect_ident("graph", "at the start of the file", kGraphHint);
    if (eat('@')) g_->set_name(name_or_string("a graph name"));
    expect('(', "to start the graph inputs", kGraphHint);
    open_.push_back(g_->block());
    if (!eat(')')) {
      const Value* with_default = nullptr;  // Note [Forward defaults] in ir/ir.h
      do {
        size_t p = (skip_ws(), pos_);
        std::string name = value_name("as a graph input");
        expect(':', "after the input name", "write %name : Type");
        Type t = type();
        Value* in = g_->add_input(t, name);
        checked_name(in, name, p);
        if (eat('=')) {
          size_t at = (skip_ws(), pos_);
          AttrValue v = attr_value();
          if (!default_fits(t, v))
            fail(at,
                 "the default " + attr_str(v) + " of %" + name + " is not a value of its type " +
                     t.str(),
                 "write a value of the type, or none for an Optional");
          g_->set_input_default(in, std::move(v));
          with_default = in;
        } else if (with_default) {
          fail(p,
               "%" + name + " has no default but %" + with_default->name() + " before it has one",
               "only the last inputs can have defaults, as in Python");
        }
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
        expect_lazy(':', "write %name : Type", [&] { return "after %" + name; });
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
          expect_lazy('=', "write name=value", [&] { return "after attribute '" + key + "'"; });
          attrs.set(key, attr_value());
        } while (eat(','));
        expect_lazy(']', "separate attributes with ','",
                    [&] { return "to close the attributes of " + op; });
      }
    }

    std::vector<Value*> inputs;
    expect_lazy('(', "every node has an input list, possibly empty: op()",
                [&] { return "after " + op; });
    if (!eat(')')) {
      do {
        size_t p = (skip_ws(), pos_);
        inputs.push_back(lookup(value_name("as an input of ", op), p));
      } while (eat(','));
      expect_lazy(')', "separate inputs with ','", [&] { return "to close the inputs of " + op; });
    }

    // Appended at once so the graph stays consistent (and destructible) if a later part of
    // the line is malformed.
    Node* n = g_->create(op, inputs, 0);
    b->append(n);
    for (const Out& o : outs) {
      checked_name(n->add_output(o.type, o.name), o.name, o.pos);
    }
    n->attrs() = std::move(attrs);

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
        expect_lazy('=', "write @weight=layer.weight", [&] { return "after @" + key; });
        n->set_weight(key, name_or_string("a weight name"));
      } else if (c == '#') {
        ++pos_;
        std::string key = ident();
        auto once = [&](bool& seen) {
          if (seen) fail(p, "duplicate #" + key, "give each of #module, #scope, #loc once");
          seen = true;
          expect_lazy('=', "write #module=path, #scope=path or #loc=\"file.py:12\"",
                      [&] { return "after #" + key; });
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
        open_.push_back(nb);
        expect('(', "after " + want, kBlockHint);
        if (!eat(')')) {
          do {
            size_t vp = (skip_ws(), pos_);
            std::string name = value_name("as a block argument");
            expect(':', "after %" + name, "write %name : Type");
            Type t = type();
            checked_name(nb->add_input(t, name), name, vp);
          } while (eat(','));
          expect(')', "to close the arguments of " + want, kBlockHint);
        }
        expect('{', "to start " + want, kBlockHint);
        parse_block_body(nb);
        open_.pop_back();
        ++index;
      }
    }
    // Outputs become visible only after the node (its own blocks cannot see them): visible().
  }

  // ------------------------------------------------------------------------------------------
  // sections after the graph: modules { ... } then weights { ... }, each optional

  void parse_sections(WeightsAhead& ahead) {
    const char* after = "the graph";
    bool modules = false, weights = false;
    while (skip_ws(), pos_ < src_.size()) {
      size_t p = pos_;
      if (!weights && !modules && peek_ident("modules")) {
        modules = true;
        after = "the modules section";
        parse_modules();
      } else if (!weights && peek_ident("weights")) {
        weights = true;
        after = "the weights section";
        if (!take_weights_ahead(ahead)) parse_weights();
      } else {
        fail(p, "unexpected " + found(p) + " after " + after,
             "a .tir text holds one graph, then optional 'modules { ... }' and 'weights { ... }' "
             "sections in that order; separate test cases with a line '// -----'");
      }
    }
  }

  // Note [Modules in .tir] in lib/ir/printer.cpp: path : "class"(arg, ...), one per line.
  void parse_modules() {
    const char* hint = "write modules { layer1.0 : \"torchvision.models.resnet.BasicBlock\"(x) }";
    pos_ += 7;
    expect('{', "after modules", hint);
    while (!eat('}')) {
      size_t np = (skip_ws(), pos_);
      if (np >= src_.size())
        fail(np, "unexpected end of input in the modules section", "close it with '}'");
      std::string path = name_or_string("a module path");
      if (g_->modules().count(path))
        fail(np, "duplicate module '" + path + "'", "list each module path once");
      expect(':', "after the module path", hint);
      ModuleInfo info;
      info.type = string_lit();
      if (eat('(') && !eat(')')) {
        do {
          size_t ap = (skip_ws(), pos_);
          info.forward_args.push_back(name_or_string("an argument name"));
          if (info.forward_args.back().empty())
            fail(ap, "empty argument name", "write the forward's argument names: (x, h)");
        } while (eat(','));
        expect(')', "to close the argument names", hint);
      }
      g_->modules()[path] = std::move(info);
    }
  }

  void parse_weights() {
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
        // at::zeros without the dispatcher: a declaration per weight is the common case of
        // generated graphs (scripts/bench_passes.sh declares 730k weights; issue #22).
        w.tensor = at::detail::empty_cpu(*t.shape, st);
        if (w.tensor.nbytes()) std::memset(w.tensor.mutable_data_ptr(), 0, w.tensor.nbytes());
      }
      // An incomplete declaration (f32[?,3], Tensor) leaves the tensor undefined. The name is
      // new (checked above).
      g_->weights().add(std::move(name), std::move(w));
    }
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

  std::unique_ptr<Graph> g_;
  std::vector<Block*> open_;  // the blocks being parsed, innermost last
  std::map<std::string, std::unordered_map<std::string, at::Tensor>> external_;
};

}  // namespace

std::unique_ptr<Graph> parse_tir(const std::string& text, const std::string& filename) {
  return parse_tir(text, filename, TirParseOptions{});
}

std::unique_ptr<Graph> parse_tir(const std::string& text, const std::string& filename,
                                 const TirParseOptions& options) {
  install_jit_builtins();  // Note [TorchScript builtins through LibTorch's registry]
  try {
    return Parser(text, filename).run(options);
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
  // errors point at the right line of the file. Lines are looked at in place and copied in
  // runs (no string per line: a 1M-node file has 10^6 lines; issue #22).
  std::vector<std::string> cases;
  std::string cur;
  size_t line_no = 0;
  size_t pos = 0;
  size_t run = 0;  // start of the lines not yet copied into cur
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool has_nl = end != std::string::npos;
    if (!has_nl) end = text.size();
    const size_t line = pos;
    pos = has_nl ? end + 1 : end;
    ++line_no;
    size_t b = line;
    while (b < end && (text[b] == ' ' || text[b] == '\t' || text[b] == '\r')) ++b;
    size_t e = end;
    while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r')) --e;
    bool is_sep = e - b >= 7 && text.compare(b, 3, "// ") == 0;
    for (size_t i = b + 3; is_sep && i < e; ++i) is_sep = text[i] == '-';
    if (is_sep) {
      cur.append(text, run, line - run);
      cases.push_back(std::move(cur));
      cur = std::string(line_no, '\n');
      run = pos;
    }
  }
  cur.append(text, run, pos - run);
  cases.push_back(std::move(cur));
  return cases;
}

}  // namespace tt
