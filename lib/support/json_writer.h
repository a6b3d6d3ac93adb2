// A streaming JSON writer: byte-for-byte nlohmann's `dump(2)` of the same document, or with some
// containers on one line (Note [One record per line]).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tt {

// Note [Streaming JSON writer]
// The JSON report of a deep model is ~1 KB per node (200 MB for 200 transformer layers): building
// it as an nlohmann tree and dumping it took more time than loading the model. JsonWriter appends
// the text to a string as the document is generated, in exactly the layout of nlohmann's
// `dump(2)` (without ensure_ascii), so the output did not change:
// - a container opens with '{' / '['; each member starts on its own line (",\n" after the
//   previous one), indented 2 spaces per open container; an object member is `"key": value`; a
//   non-empty container closes on its own line at its opening indentation, an empty one is
//   `{}` / `[]`;
// - integers are decimal; doubles go through nlohmann's own Grisu2 `detail::to_chars` (shortest
//   round-trip digits, "1.0", "1e-07", "-0.0"), non-finite doubles are `null`;
// - strings escape `"` `\` \b \f \n \r \t, other control characters as \u00xx, and leave other
//   bytes as they are; a string with a non-ASCII byte goes through nlohmann's serializer itself,
//   which also checks that it is valid UTF-8 (and throws as dump() did when it is not).
// The caller writes keys in the order the document needs; tests/unit/test_json_writer.cpp
// compares the writer with dump(2) on tricky values.
//
// Note [One record per line]
// A container opened Inline is written on one line: members separated by ", ", no newline, and
// no indentation of its own (as Python's json.dumps without indent). Containers opened inside it
// are inline too, unless opened Indented: then their members go on lines of their own again,
// indented one step deeper than the line the inline container started on. The report writes
// each graph node (and value, weight, diagnostic) Inline and a node's "blocks" and a block's
// "nodes" Indented, so every node of every depth is one line:
//       {"name": "y", "op": "prim.If", ..., "weights": [], "blocks": [
//         {"inputs": [], "nodes": [
//           {"name": "a", "op": "aten.add", ...}
//         ], "outputs": ["a"]}
//       ]},
// That is a third of dump(2)'s size for a deep model, and grep finds a whole node. Without
// Inline the layout is dump(2)'s, byte for byte.
class JsonWriter {
 public:
  // How a container's members are laid out: Inherit is Indented at the top level and inside an
  // Indented container, Inline inside an Inline one.
  enum class Layout { Inherit, Indented, Inline };
  static constexpr Layout Inline = Layout::Inline;
  static constexpr Layout Indented = Layout::Indented;

  explicit JsonWriter(std::string& out) : out_(out) {}
  // A value to be placed later (raw()) inside another document, where it starts `depth`
  // indentation steps deep: a member of the top-level object is at depth 1.
  JsonWriter(std::string& out, size_t depth) : out_(out), indented_(depth) {}

  JsonWriter& begin_object(Layout layout = Layout::Inherit) { return open('{', layout); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(Layout layout = Layout::Inherit) { return open('[', layout); }
  JsonWriter& end_array() { return close(']'); }
  // The next value is the member `key` of the open object.
  JsonWriter& key(std::string_view key);

  JsonWriter& null();
  JsonWriter& boolean(bool b);
  JsonWriter& integer(int64_t i);
  JsonWriter& unsigned_integer(uint64_t u);
  JsonWriter& number(double d);  // non-finite: null, as dump() writes them
  JsonWriter& string(std::string_view s);
  JsonWriter& string_or_null(std::string_view s) { return s.empty() ? null() : string(s); }
  // A value written by another JsonWriter, at the depth it is placed at here.
  JsonWriter& raw(std::string_view json_text);

  // Any nlohmann document (json or ordered_json), in its own key order.
  template <class BasicJson>
  JsonWriter& value(const BasicJson& j);

  // Shorthands for members: key(k) then the value.
  template <class T>
  JsonWriter& member(std::string_view k, const T& v) {
    key(k);
    return write(v);
  }

  JsonWriter& write(bool b) { return boolean(b); }
  JsonWriter& write(int64_t i) { return integer(i); }
  JsonWriter& write(uint64_t u) { return unsigned_integer(u); }
  JsonWriter& write(double d) { return number(d); }
  JsonWriter& write(std::string_view s) { return string(s); }
  JsonWriter& write(const std::string& s) { return string(s); }
  JsonWriter& write(const char* s) { return string(s); }
  JsonWriter& write(std::nullptr_t) { return null(); }
  JsonWriter& write(const nlohmann::json& j) { return value(j); }
  JsonWriter& write(const nlohmann::ordered_json& j) { return value(j); }
  template <class T>
  JsonWriter& write(const std::vector<T>& v) {
    begin_array();
    for (const auto& x : v) write(x);
    return end_array();
  }

 private:
  struct Open {         // one open container
    bool empty = true;  // nothing written in it yet
    bool inline_ = false;
  };
  JsonWriter& open(char c, Layout layout);
  JsonWriter& close(char c);
  template <class Int>
  JsonWriter& decimal(Int i);
  void before_value();  // the separator and indentation of the next array element
  void separate();      // the separator and indentation of the next member or element
  void newline_indent(size_t depth);
  void escaped(std::string_view s);

  std::string& out_;
  std::vector<Open> open_;
  size_t indented_ = 0;  // how many open containers are Indented: the indentation depth
  bool after_key_ = false;
};

template <class BasicJson>
JsonWriter& JsonWriter::value(const BasicJson& j) {
  using nlohmann::detail::value_t;
  switch (j.type()) {
    case value_t::object:
      begin_object();
      for (auto it = j.cbegin(); it != j.cend(); ++it) {
        key(it.key());
        value(it.value());
      }
      return end_object();
    case value_t::array:
      begin_array();
      for (const auto& x : j) value(x);
      return end_array();
    case value_t::string:
      return string(j.template get_ref<const std::string&>());
    case value_t::boolean:
      return boolean(j.template get<bool>());
    case value_t::number_integer:
      return integer(j.template get<int64_t>());
    case value_t::number_unsigned:
      return unsigned_integer(j.template get<uint64_t>());
    case value_t::number_float:
      return number(j.template get<double>());
    case value_t::null:
      return null();
    default:  // binary, discarded: not in our documents; nlohmann's own text at this place
      before_value();
      out_ += j.dump();
      return *this;
  }
}

}  // namespace tt
