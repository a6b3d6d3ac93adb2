// What a pass run reports (the JSON report's "pipeline" entries, built by PassManager).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tt {

// One rewrite of a pass, as the report lists it (PassContext::rewrite records them).
struct RewriteRecord {
  std::string rule;   // "conv+bn", "dead-node", ...
  std::string node;   // value name of the node's first output ("" when none)
  std::string scope;  // module scope of the node
};

struct PassStat {
  std::string name;
  bool changed = false;
  size_t nodes_before = 0, nodes_after = 0, rewrites = 0;
  double milliseconds = 0;
  std::vector<RewriteRecord> log;  // every rewrite, in order (rewrites == log.size())
  // Module instances the pass created as copies: (copy path, original path) (unshare-modules).
  std::vector<std::pair<std::string, std::string>> module_copies;
  std::map<std::string, int64_t> statistics;  // the pass's named counts (PassContext::statistic)
};

}  // namespace tt
