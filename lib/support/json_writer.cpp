// Note [Streaming JSON writer] in json_writer.h.
#include "support/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>

namespace tt {

void JsonWriter::newline_indent(size_t depth) {
  out_ += '\n';
  out_.append(2 * depth, ' ');
}

void JsonWriter::separate() {
  Open& o = open_.back();
  if (!o.empty) out_ += o.inline_ ? ", " : ",";
  o.empty = false;
  if (!o.inline_) newline_indent(indented_);
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;  // the top-level value
  separate();
}

JsonWriter& JsonWriter::key(std::string_view key) {
  separate();
  out_ += '"';
  escaped(key);
  out_ += "\": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::open(char c, Layout layout) {
  before_value();
  out_ += c;
  bool in_inline = !open_.empty() && open_.back().inline_;
  bool inline_ = layout == Layout::Inline || (layout == Layout::Inherit && in_inline);
  open_.push_back({true, inline_});
  if (!inline_) ++indented_;
  return *this;
}

JsonWriter& JsonWriter::close(char c) {
  Open o = open_.back();
  open_.pop_back();
  if (!o.inline_) {
    --indented_;
    if (!o.empty) newline_indent(indented_);
  }
  out_ += c;
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json_text) {
  before_value();
  out_ += json_text;
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::boolean(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

template <class Int>
JsonWriter& JsonWriter::decimal(Int i) {
  before_value();
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, i);
  out_.append(buf, r.ptr);
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t i) { return decimal(i); }
JsonWriter& JsonWriter::unsigned_integer(uint64_t u) { return decimal(u); }

JsonWriter& JsonWriter::number(double d) {
  before_value();
  if (!std::isfinite(d)) {
    out_ += "null";
    return *this;
  }
  std::array<char, 64> buf;  // the size of nlohmann's serializer::number_buffer
  char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), d);
  out_.append(buf.data(), end);
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
  before_value();
  out_ += '"';
  escaped(s);
  out_ += '"';
  return *this;
}

void JsonWriter::escaped(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) {
      // Non-ASCII: nlohmann validates the UTF-8 (and throws on a bad byte as dump() did).
      std::string quoted = nlohmann::json(std::string(s)).dump();
      out_.append(quoted, 1, quoted.size() - 2);
      return;
    }
  }
  size_t plain = 0;  // start of the run of bytes that need no escape
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\r':
        out_ += "\\r";
        break;
      default: {
        static const char kHex[] = "0123456789abcdef";
        char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out_.append(u, 6);
      }
    }
  }
  out_.append(s.data() + plain, s.size() - plain);
}

}  // namespace tt
