// The pass registry (built from passes/passes.def) and PassContext.
#include "passes/pass.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace tt {

const std::vector<PassInfo>& all_passes() {
  static const std::vector<PassInfo> passes = {
#define TT_PASS(name, fn, summary) {name, &fn, summary},
#define TT_PIPELINE(name, pipeline, summary)
#define TT_IMPORT_PASS(name, fn, summary)
#include "passes/passes.def"
#undef TT_PASS
#undef TT_PIPELINE
#undef TT_IMPORT_PASS
  };
  return passes;
}

const std::vector<PassInfo>& import_passes() {
  static const std::vector<PassInfo> passes = {
#define TT_PASS(name, fn, summary)
#define TT_PIPELINE(name, pipeline, summary)
#define TT_IMPORT_PASS(name, fn, summary) {name, &fn, summary},
#include "passes/passes.def"
#undef TT_PASS
#undef TT_PIPELINE
#undef TT_IMPORT_PASS
  };
  return passes;
}

const std::vector<PipelineInfo>& all_pipelines() {
  static const std::vector<PipelineInfo> pipelines = {
#define TT_PASS(name, fn, summary)
#define TT_PIPELINE(name, pipeline, summary) {name, pipeline, summary},
#define TT_IMPORT_PASS(name, fn, summary)
#include "passes/passes.def"
#undef TT_PASS
#undef TT_PIPELINE
#undef TT_IMPORT_PASS
  };
  return pipelines;
}

bool run_test_perturb_weight(Graph& g, PassContext& ctx);

namespace {
std::vector<PassInfo>& test_passes() {
  static std::vector<PassInfo> passes;
  return passes;
}
}  // namespace

void register_test_passes() {
  if (!test_passes().empty()) return;
  test_passes().push_back(
      {"test-perturb-weight", &run_test_perturb_weight,
       "TEST ONLY: adds delta (default 0.5) to one weight element so that --verify must fail"});
}

const PassInfo* find_pass(std::string_view name) {
  for (const auto& p : all_passes())
    if (name == p.name) return &p;
  for (const auto& p : import_passes())
    if (name == p.name) return &p;
  for (const auto& p : test_passes())
    if (name == p.name) return &p;
  return nullptr;
}

const PipelineInfo* find_pipeline(std::string_view name) {
  for (const auto& p : all_pipelines())
    if (name == p.name) return &p;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// PassContext

void PassContext::set_options(std::map<std::string, std::string> opts) {
  options_ = std::move(opts);
  used_options_.clear();
}

bool PassContext::has_option(const std::string& key) {
  used_options_.insert(key);
  return options_.count(key) != 0;
}

std::string PassContext::option(const std::string& key, const std::string& def) {
  used_options_.insert(key);
  auto it = options_.find(key);
  return it == options_.end() ? def : it->second;
}

int64_t PassContext::option_int(const std::string& key, int64_t def) {
  used_options_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  const std::string& s = it->second;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0')
    throw Error(ExitCode::Usage, "pass '" + pass_name_ + "': option " + key + "=" + s +
                                     " is not an integer — write e.g. " + key + "=" +
                                     std::to_string(def));
  return v;
}

bool PassContext::option_bool(const std::string& key, bool def) {
  used_options_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  if (it->second == "true" || it->second == "1") return true;
  if (it->second == "false" || it->second == "0") return false;
  throw Error(ExitCode::Usage, "pass '" + pass_name_ + "': option " + key + "=" + it->second +
                                   " is not a boolean — write " + key + "=true or " + key +
                                   "=false");
}

std::vector<std::string> PassContext::unused_options() const {
  std::vector<std::string> out;
  for (const auto& kv : options_)
    if (!used_options_.count(kv.first)) out.push_back(kv.first);
  return out;
}

namespace {
std::string first_output_name(const Node* n) {
  return n && n->num_outputs() ? n->output(0)->name() : std::string();
}
}  // namespace

void PassContext::rewrite(const char* rule, const Node* n) {
  ++rewrites_;
  RewriteLogEntry e{pass_name_, rule, first_output_name(n), n ? n->scope() : std::string()};
  if (spdlog::should_log(spdlog::level::debug))  // no message built when debug is off
    spdlog::debug("{}: {} at %{}{}", pass_name_, rule, e.node,
                  e.scope.empty() ? std::string() : " (in " + e.scope + ")");
  log_.push_back(std::move(e));
}

void PassContext::reject(const char* rule, const Node* n, const char* why) {
  if (!spdlog::should_log(spdlog::level::trace)) return;
  spdlog::trace("{}: {} not applied at %{} ({}): {}", pass_name_, rule, first_output_name(n),
                n ? n->op() : std::string(), why);
}

}  // namespace tt
