#include "support/diag.h"

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

}  // namespace tt
