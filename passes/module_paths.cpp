// Fresh module paths (see module_paths.h, Note [Fresh module paths]).
#include "passes/module_paths.h"

#include "passes/pass_util.h"

namespace tt {

ModulePaths::ModulePaths(const Graph& g) {
  for (const std::string& w : g.weights().names()) reserve(w);
  walk_pre(g.block(), [&](Node* n) {
    if (!n->module().empty()) reserve(n->module());
    for (const auto& kv : n->weights()) reserve(kv.second);
    return true;
  });
}

void ModulePaths::reserve(const std::string& path) {
  // The path and every container on the way to it; stop at the first one already known (its
  // containers were reserved with it).
  std::string p = path;
  while (!p.empty() && taken_.insert(p).second) {
    size_t dot = p.rfind('.');
    if (dot == std::string::npos) break;
    p.resize(dot);
  }
}

std::string ModulePaths::first_free(const std::string& stem, bool try_plain) {
  if (try_plain && !taken(stem)) {
    reserve(stem);
    return stem;
  }
  uint64_t& n = next_suffix_[stem];
  if (n == 0) n = 1;
  for (;; ++n) {
    std::string cand = stem + "_" + std::to_string(n);
    if (!taken(cand)) {
      ++n;
      reserve(cand);
      return cand;
    }
  }
}

std::string ModulePaths::fresh(const std::string& scope, const std::string& base) {
  return first_free(scope.empty() ? base : scope + "." + base, true);
}

std::string ModulePaths::fresh_copy(const std::string& path) { return first_free(path, false); }

}  // namespace tt
