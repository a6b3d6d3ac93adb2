// Fresh module paths for passes that add module instances (functional-to-module,
// unshare-modules, float-functional, ...).
//
// Note [Fresh module paths]
// The Python emitter turns module paths and weight names into one attribute tree
// (`self.layer1[0].relu`), so a new path must differ from every module path, every weight name
// and every container on the way to them ("layer1", "layer1.0"). A new path hangs under the
// calling node's scope (a container module, or "" = the root), so it reads like the model's own
// attributes: scope "layer1.0" + "relu" -> "layer1.0.relu", then "layer1.0.relu_1", ...
// Building the table is one walk over the graph; each request is amortised O(1) (one counter per
// stem, so N requests of the same stem do not retry 1, 2, ..., N each).
#pragma once

#include "ir/ir.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace tt {

class ModulePaths {
 public:
  // Records every module path (nested blocks included) and weight name of `g`.
  explicit ModulePaths(const Graph& g);

  // "<scope>.<base>" (or "<base>" at the root) when free, else with the first free "_N" suffix
  // (N = 1, 2, ...). The result is reserved.
  std::string fresh(const std::string& scope, const std::string& base);
  // A path for a copy of module `path`: "<path>_N" with the first free N >= 1. Reserved.
  std::string fresh_copy(const std::string& path);
  // True when `path` is a module path, a weight name or a container of one of them.
  bool taken(const std::string& path) const { return taken_.count(path) != 0; }
  // Reserves `path` and its containers.
  void reserve(const std::string& path);

 private:
  std::string first_free(const std::string& stem, bool try_plain);

  std::unordered_set<std::string> taken_;
  std::unordered_map<std::string, uint64_t> next_suffix_;
};

}  // namespace tt
