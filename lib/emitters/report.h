// The JSON graph report (DESIGN.md §2), validated by tests against lib/emitters/report.schema.json.
#pragma once

#include "ir/model.h"
#include "passes/pass_stats.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace tt {

struct ReportExtras {
  std::vector<PassStat> pipeline;    // one entry per pass run
  nlohmann::json verification;       // null when --verify did not run
  std::vector<std::string> outputs;  // files written
  // --optimize-for-inference: what LibTorch's passes did to NAME.pt; null otherwise.
  nlohmann::json inference_optimization;
};

constexpr int kReportVersion = 1;

// Appends the report's text to `out`: exactly nlohmann's dump(2) of the document, and a newline
// (Note [Streaming JSON writer] in lib/support/json_writer.h; no tree is built).
void write_report(std::string& out, const Model& m, const ReportExtras& extras);

// The report as a document (write_report's text parsed back), for tests; keys stay in the order
// written (format and version first, attributes in constructor order).
nlohmann::ordered_json build_report(const Model& m, const ReportExtras& extras);

// The report's `quantization` section (also `tinytrace inspect`'s): the quantized engine, each
// quantized weight's parameters (dtype, scheme, scale and zero point, or per channel scales, zero
// points and axis) and each int8 module's op, weight and output parameters; null for a float model.
nlohmann::ordered_json quantization_json(const Graph& g);

}  // namespace tt
