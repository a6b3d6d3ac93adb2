// Pass interface: what every pass sees (PassContext) and the central registry (passes.def).
//
// Note [Writing a pass]
// - A pass is a free function `bool run_xxx(Graph&, PassContext&)` that returns whether it changed
//   the graph. It is declared once, in passes/passes.def; its CLI name is its file name with '_'
//   replaced by '-' (passes/fold_batchnorm.cpp is `fold-batchnorm`).
// - A pass is linear in the graph size: one walk over the nodes (nested blocks included), no
//   restart from the top after a rewrite, no walk over all uses of a value per node.
// - A matcher checks everything before its first change, so a "no" leaves the graph untouched.
//   Every rejection says why through ctx.reject() (logged at trace level). The toolkit for this
//   (walks, check-then-apply patterns, Rewriter::reject) is lib/ir/rewrite.h.
// - Every rewrite is reported through ctx.rewrite() (counted for the report, logged at debug).
// - Rewrites keep provenance: new nodes copy scope and loc from the node they replace.
// - A pass never prints and never throws for a model it cannot improve; problems worth telling
//   the user go to ctx.diags().
#pragma once

#include "ir/ir.h"
#include "ir/rewrite.h"
#include "support/diag.h"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tt {

// One rewrite a pass made, for logs and the report ("fold-batchnorm: conv+bn at %conv1 in layer1").
struct RewriteLogEntry {
  std::string pass;   // CLI name of the pass
  std::string rule;   // short name of the rewrite ("conv+bn", "dead-node", "detach")
  std::string node;   // value name of the node's first output ("" when none)
  std::string scope;  // module scope of the node
};

class PassContext : public RewriteLog {
 public:
  explicit PassContext(Diagnostics& diags) : diags_(diags) {}

  Diagnostics& diags() { return diags_; }

  // Options of the running pass, from the pipeline text (`cse{key=value}`).
  void set_options(std::map<std::string, std::string> opts);
  const std::map<std::string, std::string>& options() const { return options_; }
  bool has_option(const std::string& key);
  std::string option(const std::string& key, const std::string& def);
  // Throw Error(Usage) when the value is not an integer / not true|false.
  int64_t option_int(const std::string& key, int64_t def);
  bool option_bool(const std::string& key, bool def);
  // Keys given in the pipeline that the pass never asked for (the PassManager reports them).
  std::vector<std::string> unused_options() const;

  // The pass being run (set by the PassManager; used in logs).
  const std::string& pass_name() const { return pass_name_; }
  void set_pass_name(std::string n) { pass_name_ = std::move(n); }

  // Records one rewrite at node `n` (the node being replaced, or the new one).
  void rewrite(const char* rule, const Node* n) override;
  // Why a match at `n` was rejected (trace level only; costs nothing when trace is off).
  void reject(const char* rule, const Node* n, const char* why) override;
  size_t rewrites() const { return rewrites_; }
  const std::vector<RewriteLogEntry>& log() const { return log_; }
  // Moves the log out (the PassManager keeps it after the pass; 10^5 entries are not copied).
  std::vector<RewriteLogEntry> take_log() { return std::move(log_); }

  // A named count the pass reports (MLIR-style statistics): the report's pipeline[].statistics,
  // e.g. infer-shapes' "nodes run for real" next to "nodes by shape rule".
  void statistic(const std::string& name, int64_t value) { statistics_[name] = value; }
  const std::map<std::string, int64_t>& statistics() const { return statistics_; }

  // A module instance the pass created as a copy of another one (unshare-modules): the report
  // lists these pairs under "module_copies" so a user can map new paths back to the model's.
  void record_module_copy(const std::string& copy, const std::string& original) {
    module_copies_.emplace_back(copy, original);
  }
  // (copy, original) pairs, in the order recorded.
  const std::vector<std::pair<std::string, std::string>>& module_copies() const {
    return module_copies_;
  }

 private:
  Diagnostics& diags_;
  std::map<std::string, std::string> options_;
  std::set<std::string> used_options_;
  std::string pass_name_;
  size_t rewrites_ = 0;
  std::vector<RewriteLogEntry> log_;
  std::vector<std::pair<std::string, std::string>> module_copies_;
  std::map<std::string, int64_t> statistics_;
};

using PassFn = bool (*)(Graph&, PassContext&);

struct PassInfo {
  const char* name;  // CLI name ("fold-batchnorm")
  PassFn fn;
  const char* summary;
};

struct PipelineInfo {
  const char* name;      // "fuse"
  const char* pipeline;  // pipeline text ("eliminate-noops,fold-constants,...")
  const char* summary;
};

// Every pass / named pipeline of passes/passes.def, in declaration order.
const std::vector<PassInfo>& all_passes();
const std::vector<PipelineInfo>& all_pipelines();
// The import passes of passes/passes.def (TT_IMPORT_PASS): written for loaders' import pipelines
// (Note [Import pipeline] in lib/loaders/loader.h), not in all_passes(); find_pass knows them.
const std::vector<PassInfo>& import_passes();
const PassInfo* find_pass(std::string_view name);
// Test-only passes (test-perturb-weight: adds delta to one weight so that --verify must fail)
// are not in passes.def: `tinytrace passes` does not list them and find_pass does not know them
// until this is called. The unit tests call it; the CLI calls it when the environment has
// TT_TEST_PASSES=1, which the e2e tests that need a deliberately wrong pass set.
void register_test_passes();
const PipelineInfo* find_pipeline(std::string_view name);

// The pass functions themselves.
#define TT_PASS(name, fn, summary) bool fn(Graph& g, PassContext& ctx);
#define TT_PIPELINE(name, pipeline, summary)
#define TT_IMPORT_PASS(name, fn, summary) bool fn(Graph& g, PassContext& ctx);
#include "passes/passes.def"
#undef TT_PASS
#undef TT_PIPELINE
#undef TT_IMPORT_PASS

}  // namespace tt
