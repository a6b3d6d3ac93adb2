// CLI glue for the pass pipeline: the pass options of `convert` (--passes, --fuse,
// --print-ir-after, --verify-each) and the commands `tinytrace passes` and `tinytrace opt`.
// tools/tinytrace.cpp only declares the flags and calls these; everything is reachable from tests.
#pragma once

#include "emitters/report.h"
#include "ir/ir.h"
#include "support/diag.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace tt {

struct PassCliOptions {
  std::string passes;          // --passes PIPELINE
  bool fuse = false;           // --fuse (the named pipeline "fuse")
  std::string print_ir_after;  // --print-ir-after PASS|all
  bool verify_each = false;    // --verify-each
  bool quant_prep = false;     // --quant-prep (the named pipeline "quant-prep")
  bool qat = false;            // --qat (with --quant-prep: "quant-prep-qat")
  bool dequantize = false;     // --dequantize (the pass "dequantize", then dce; runs first)
};

// The pipeline text to run: "dequantize,dce" for --dequantize, then "fuse" for --fuse or
// "quant-prep" / "quant-prep-qat" for --quant-prep [--qat], then --passes ("" when none was
// given). --dequantize comes first, so that --dequantize --quant-prep prepares the float twin.
std::string pipeline_text(const PassCliOptions& o);

// Checks the pass options before any work is done (so a typo fails before a slow model load):
// throws Error(Usage) for a bad pipeline, an unknown --print-ir-after pass, or --print-ir-after
// without a pipeline. (--verify-each alone is allowed: it verifies the loaded graph.)
void check_pass_options(const PassCliOptions& o);

// Runs the pipeline of `o` on `g` (nothing when there is none). Warnings go to `diags`;
// --print-ir-after goes to `ir_stream` (stderr when nullptr). Returns one PassStat per pass run,
// for the report (ReportExtras::pipeline).
std::vector<PassStat> run_pass_options(Graph& g, Diagnostics& diags, const PassCliOptions& o,
                                       std::ostream* ir_stream = nullptr);

// `tinytrace passes`: every pass, named pipeline and import pass, one line each.
void print_pass_list(std::ostream& os);

// `tinytrace opt FILE.tir --passes P`: parses FILE (every `// -----` separated case), runs the
// pipeline, prints the resulting .tir on `out` (cases separated by `// -----`).
struct OptOptions {
  std::string file;
  PassCliOptions passes;
  // How the weights section is printed: "inline" (values; default, so the output loads back with
  // the transformed weights) or "declare" (names and types only).
  std::string weights = "inline";
  // The CLI sets this: the last graph is not destroyed when run_opt returns (Note [The final
  // graph at exit] in passes_cli.cpp). Library callers and tests leave it false.
  bool keep_final_graph = false;
};
void run_opt(const OptOptions& o, std::ostream& out, std::ostream* ir_stream = nullptr);

}  // namespace tt
