// The JSON graph report (DESIGN.md §2), validated by tests against lib/emitters/report.schema.json.
#pragma once

#include "loaders/loader.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
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

struct ReportExtras {
  std::vector<PassStat> pipeline;  // one entry per pass run
  nlohmann::json verification;     // null when --verify did not run
  std::vector<std::string> outputs;  // files written
};

constexpr int kReportVersion = 1;

// ordered_json keeps keys in the order written (format and version first, attributes in
// constructor order); it converts implicitly to nlohmann::json.
nlohmann::ordered_json build_report(const Model& m, const ReportExtras& extras);

}  // namespace tt
