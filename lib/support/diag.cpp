#include "support/diag.h"

#include <cctype>
#include <sstream>

namespace tt {

std::string describe(const Location& where) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
  if (!where.node.empty()) add("node %" + where.node);
  if (!where.scope.empty()) add("in module '" + where.scope + "'");
  if (!where.loc.empty()) add("at " + where.loc);
  return s;
}

void assert_fail(const char* expr, const char* file, int line, const std::string& msg) {
  std::ostringstream os;
  os << "internal error: assertion `" << expr << "` failed at " << file << ":" << line;
  if (!msg.empty()) os << ": " << msg;
  os << " — this is a bug in tinytrace; please report it with the model that triggers it";
  throw Error(ExitCode::Internal, os.str());
}

std::string source_file_label(const std::string& path) {
  size_t best = std::string::npos;
  for (const char* dir : {"/site-packages/", "/dist-packages/"}) {
    size_t at = path.rfind(dir);
    if (at != std::string::npos && (best == std::string::npos || at > best))
      best = at + std::char_traits<char>::length(dir);
  }
  if (best != std::string::npos && best < path.size()) return path.substr(best);
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string first_line(const std::string& s) {
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    std::string l = s.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    while (!l.empty() && std::isspace(static_cast<unsigned char>(l.back()))) l.pop_back();
    size_t lead = 0;
    while (lead < l.size() && std::isspace(static_cast<unsigned char>(l[lead]))) ++lead;
    if (lead < l.size()) return l.substr(lead);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return "";
}

}  // namespace tt
