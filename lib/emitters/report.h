// The JSON graph report (DESIGN.md §2), validated by tests against lib/emitters/report.schema.json.
#pragma once

#include "ir/model.h"
#include "passes/pass_stats.h"

#include <nlohmann/json.hpp>

#include <map>
#include <set>
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

// The part of the report that depends only on the final graph: the "graph" section's text (the
// bulk of a deep model's report), and the totals and op histogram of the summary. It only reads
// the graph, so it can be made while the Python emitter reads the same graph (Note [Emitters
// in parallel] in lib/driver/convert.cpp).
struct ReportGraph {
  std::string text;
  std::map<std::string, int64_t> histogram;  // op -> node count
  std::set<std::string> fallbacks, called;   // torch.ops.aten ops; module paths called
  int64_t param_numel = 0, buffer_numel = 0, param_tensors = 0, buffer_tensors = 0;
  int64_t weight_bytes = 0;
  nlohmann::ordered_json quantization;  // quantization_json
};
ReportGraph render_report_graph(const Graph& g);

// The report's JSON text of an attribute value (a node's attrs, an input's "default").
std::string attr_json(const AttrValue& v);

// Appends the report's text to `out`, and a newline (Note [Streaming JSON writer] and Note [One
// record per line] in lib/support/json_writer.h; no tree is built). The second form uses a
// ReportGraph made beforehand from the same graph.
void write_report(std::string& out, const Model& m, const ReportExtras& extras);
void write_report(std::string& out, const Model& m, const ReportExtras& extras,
                  const ReportGraph& graph);
// The same text without the graph section's, which belongs at the returned offset of `out`: the
// report is out[0, k) + graph.text + out[k, end), written without joining them (60 MB for a deep
// model).
size_t write_report_around(std::string& out, const Model& m, const ReportExtras& extras,
                           const ReportGraph& graph);

// The report as a document (write_report's text parsed back), for tests; keys stay in the order
// written (format and version first, attributes in constructor order).
nlohmann::ordered_json build_report(const Model& m, const ReportExtras& extras);

// The report's `quantization` section (also `tinytrace inspect`'s): the quantized engine, each
// quantized weight's parameters (dtype, scheme, scale and zero point, or per channel scales, zero
// points and axis) and each int8 module's op, weight and output parameters; null for a float model.
nlohmann::ordered_json quantization_json(const Graph& g);

}  // namespace tt
