// Pipelines: the text form (`a,b{key=value},fixpoint(c,d)`), its parser, and the PassManager that
// runs a parsed pipeline with statistics, --print-ir-after and --verify-each.
//
// Note [Pipeline text]
//   pipeline := element (',' element)*
//   element  := NAME options?                    a pass, or a named pipeline (expanded in place)
//             | 'fixpoint' options? '(' pipeline ')'
//   options  := '{' KEY '=' VALUE (',' KEY '=' VALUE)* '}'
// NAME/KEY are [A-Za-z0-9_-]+; VALUE is any text without ',', '{', '}', '(' or ')'. Blanks between
// tokens are ignored. fixpoint repeats its children until a whole round changes nothing, at most
// max-iterations rounds (option of fixpoint, default 10; hitting the cap is a warning).
// Errors are tt::Error(Usage) naming the 1-based column of the mistake, with the closest pass
// name when a name is unknown.
#pragma once

#include "passes/pass_stats.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "support/diag.h"

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tt {

struct PipelineStep {
  enum class Kind { Pass, Fixpoint };
  Kind kind = Kind::Pass;
  const PassInfo* pass = nullptr;              // Kind::Pass
  std::map<std::string, std::string> options;  // pass options, or fixpoint's max-iterations
  std::vector<PipelineStep> children;          // Kind::Fixpoint
  int max_iterations = 10;                     // Kind::Fixpoint
  size_t column = 0;                           // 1-based, in the text it came from
};

struct Pipeline {
  std::vector<PipelineStep> steps;
  bool empty() const { return steps.empty(); }
  // Canonical text with named pipelines expanded ("eliminate-noops,fold-constants,...").
  std::string str() const;
  // Names of every pass that occurs (nested ones included), in order, without repeats.
  std::vector<std::string> pass_names() const;
};

// Parses pipeline text; throws Error(Usage) with the column on any mistake.
Pipeline parse_pipeline(const std::string& text);

// Levenshtein distance (for "did you mean"); exposed for tests.
size_t edit_distance(const std::string& a, const std::string& b);
// The registered pass or pipeline name closest to `name`, or "" when nothing is close.
std::string closest_pass_name(const std::string& name);

struct PassManagerOptions {
  // A pass name (or "all"): print `// IR after <pass>` and the graph after each run of it.
  std::string print_ir_after;
  std::ostream* ir_stream = nullptr;  // where print_ir_after goes; nullptr: stderr
  bool verify_each = false;           // run the IR verifier before the first and after every pass
};

class PassManager {
 public:
  // Throws Error(Usage) when print_ir_after names a pass that is not in the pipeline.
  explicit PassManager(Pipeline pipeline, PassManagerOptions opts = {});

  // Runs the pipeline; returns whether any pass changed the graph. Warnings (fixpoint cap) go to
  // `diags`. Throws Error(Internal) when --verify-each finds a broken graph after a pass,
  // Error(BadInput) when the graph is broken before the first pass.
  bool run(Graph& g, Diagnostics& diags);

  // One entry per pass run (a pass inside fixpoint appears once per round), in run order.
  const std::vector<PassStat>& stats() const { return stats_; }
  const std::vector<RewriteLogEntry>& rewrite_log() const { return log_; }
  const Pipeline& pipeline() const { return pipeline_; }

 private:
  bool run_steps(const std::vector<PipelineStep>& steps, Graph& g, Diagnostics& diags);
  bool run_pass(const PipelineStep& step, Graph& g, Diagnostics& diags);

  Pipeline pipeline_;
  PassManagerOptions opts_;
  std::vector<PassStat> stats_;
  std::vector<RewriteLogEntry> log_;
  // Node count after the last pass of the current run(): the next pass's count before (counting
  // walks the whole graph; on 1M nodes a walk is a visible part of a pass, issue #22).
  std::optional<size_t> known_nodes_;
};

// Runs a loader's import pipeline (Note [Import pipeline] in lib/loaders/loader.h) on the graph
// it lifted: the passes in order, as PassManager::run would, but nothing is recorded (no
// statistics, no rewrite log, no IR printing or verifying; the report lists the user's pipeline
// only) and the runs log at debug level. Empty text: nothing runs. Throws Error(Usage) when the
// text does not parse (a bug of the loader that asks for it; the unit tests parse every one).
void run_import_pipeline(const std::string& text, Graph& g, Diagnostics& diags);

}  // namespace tt
