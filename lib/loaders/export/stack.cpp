// Module paths and call stacks of an exported program's nodes (metadata nn_module_stack).
#include "loaders/export/builder.h"

#include <cctype>
#include <functional>

namespace tt::pt2 {

std::optional<std::string> normalize_path(const std::string& p) {
  if (p.find_first_of("[(") == std::string::npos) return p;
  size_t i = 0;
  std::vector<std::string> parts;
  auto lit = [&](std::string& s) {  // '...' or "..."
    if (i >= p.size() || (p[i] != '\'' && p[i] != '"')) return false;
    char q = p[i++];
    size_t e = p.find(q, i);
    if (e == std::string::npos) return false;
    s = p.substr(i, e - i);
    i = e + 1;
    return true;
  };
  auto eat = [&](const char* t) {
    size_t n = std::char_traits<char>::length(t);
    if (p.compare(i, n, t) != 0) return false;
    i += n;
    return true;
  };
  auto ident = [&](std::string& s) {
    size_t b = i;
    while (i < p.size() && (std::isalnum(static_cast<unsigned char>(p[i])) || p[i] == '_')) ++i;
    s = p.substr(b, i - b);
    return !s.empty();
  };
  std::function<bool()> expr = [&]() -> bool {
    std::string s;
    if (eat("getattr(")) {
      if (!expr() || !eat(", ") || !lit(s) || !eat(")")) return false;
      parts.push_back(s);
    } else if (eat("L[")) {
      if (!lit(s) || !eat("]")) return false;
    } else if (!ident(s)) {
      return false;
    }
    while (i < p.size()) {
      if (eat(".")) {
        if (!ident(s)) return false;
        if (s == "_modules" && i < p.size() && p[i] == '[') continue;
        parts.push_back(s);
      } else if (eat("[")) {
        if (i < p.size() && (p[i] == '\'' || p[i] == '"')) {
          if (!lit(s)) return false;
        } else {
          size_t b = i;
          while (i < p.size() && (std::isdigit(static_cast<unsigned char>(p[i])) || p[i] == '-'))
            ++i;
          s = p.substr(b, i - b);
          if (s.empty()) return false;
        }
        if (!eat("]")) return false;
        parts.push_back(s);
      } else {
        return true;
      }
    }
    return true;
  };
  if (!expr() || i != p.size()) return std::nullopt;
  std::string out;
  for (const auto& s : parts) out += (out.empty() ? "" : ".") + s;
  return out;
}

std::vector<StackEntry> parse_stack(const std::string& s) {
  std::vector<StackEntry> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t semi = s.find(';', start);
    std::string item =
        s.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
    start = semi == std::string::npos ? s.size() + 1 : semi + 1;
    size_t c1 = item.find(','), c2 = item.rfind(',');
    if (c1 == std::string::npos || c1 == c2) continue;
    StackEntry e{item.substr(0, c1), item.substr(c1 + 1, c2 - c1 - 1), item.substr(c2 + 1)};
    if (e.key.rfind("_empty_nn_module_stack", 0) == 0) continue;
    out.push_back(std::move(e));
  }
  return out;
}

bool under(const std::string& prefix, const std::string& path) {  // path is prefix or inside it
  return prefix.empty() || path == prefix || path.rfind(prefix + ".", 0) == 0;
}

}  // namespace tt::pt2
