// Pipeline text parser and PassManager (see pass_manager.h, Note [Pipeline text]).
#include "passes/pass_manager.h"

#include "ir/printer.h"
#include "ir/verifier.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <iterator>
#include <sstream>

namespace tt {

// ---------------------------------------------------------------------------------------------
// names

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_pass_name(const std::string& name) {
  std::vector<std::string> cands;
  for (const auto& p : all_passes()) cands.push_back(p.name);
  for (const auto& p : all_pipelines()) cands.push_back(p.name);
  cands.push_back("fixpoint");
  for (const auto& p : import_passes()) cands.push_back(p.name);
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& c : cands) {
    size_t d = edit_distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Close enough to be a typo: a couple of edits, or a third of the word.
  size_t limit = std::max<size_t>(2, name.size() / 3);
  return best_d <= limit ? best : "";
}

// ---------------------------------------------------------------------------------------------
// parser

namespace {

constexpr const char* kFixpoint = "fixpoint";
constexpr int kDefaultFixpointIterations = 10;

class PipelineParser {
 public:
  explicit PipelineParser(const std::string& text) : s_(text) {}

  std::vector<PipelineStep> parse_all() {
    skip_blanks();
    if (i_ == s_.size()) return {};
    auto steps = parse_list();
    skip_blanks();
    if (i_ != s_.size()) {
      if (s_[i_] == ')') fail("unbalanced ')'", "remove it or add the matching 'fixpoint('");
      fail(std::string("unexpected '") + s_[i_] + "'", "separate passes with ','");
    }
    return steps;
  }

 private:
  [[noreturn]] void fail(const std::string& what, const std::string& fix, size_t at) const {
    throw Error(ExitCode::Usage,
                "--passes: " + what + " at column " + std::to_string(at + 1) + " — " + fix);
  }
  [[noreturn]] void fail(const std::string& what, const std::string& fix) const {
    fail(what, fix, i_);
  }

  void skip_blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  }
  std::string name() {
    size_t b = i_;
    while (i_ < s_.size() && is_name_char(s_[i_])) ++i_;
    return s_.substr(b, i_ - b);
  }

  std::vector<PipelineStep> parse_list() {
    std::vector<PipelineStep> steps;
    while (true) {
      parse_element(steps);
      skip_blanks();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      return steps;
    }
  }

  std::map<std::string, std::string> parse_options() {
    std::map<std::string, std::string> opts;
    ++i_;  // '{'
    while (true) {
      skip_blanks();
      size_t kat = i_;
      std::string key = name();
      if (key.empty()) fail("expected an option name", "write options as {key=value,key2=value2}");
      skip_blanks();
      if (i_ >= s_.size() || s_[i_] != '=')
        fail("expected '=' after option '" + key + "'", "write options as {key=value}");
      ++i_;
      skip_blanks();
      size_t vb = i_;
      while (i_ < s_.size() && std::string(",{}()").find(s_[i_]) == std::string::npos) ++i_;
      std::string value = s_.substr(vb, i_ - vb);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
      if (value.empty()) fail("option '" + key + "' has no value", "write {" + key + "=value}");
      if (opts.count(key)) fail("option '" + key + "' given twice", "keep one", kat);
      opts[key] = value;
      skip_blanks();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return opts;
      }
      fail("expected ',' or '}' in the options", "close the options with '}'");
    }
  }

  void parse_element(std::vector<PipelineStep>& out) {
    skip_blanks();
    size_t at = i_;
    std::string n = name();
    if (n.empty()) {
      if (i_ >= s_.size()) fail("expected a pass name", "remove the trailing ',' or add a pass");
      fail(std::string("expected a pass name, found '") + s_[i_] + "'",
           "run 'tinytrace passes' for the list of passes");
    }
    skip_blanks();
    std::map<std::string, std::string> opts;
    bool has_opts = false;
    if (i_ < s_.size() && s_[i_] == '{') {
      opts = parse_options();
      has_opts = true;
      skip_blanks();
    }

    if (n == kFixpoint) {
      PipelineStep step;
      step.kind = PipelineStep::Kind::Fixpoint;
      step.column = at + 1;
      for (const auto& kv : opts) {
        if (kv.first != "max-iterations")
          fail("fixpoint has no option '" + kv.first + "'", "its only option is max-iterations=N",
               at);
        char* end = nullptr;
        long v = std::strtol(kv.second.c_str(), &end, 10);
        if (*end != '\0' || v < 1)
          fail("fixpoint max-iterations=" + kv.second + " is not a positive integer",
               "write e.g. fixpoint{max-iterations=20}(...)", at);
        step.max_iterations = static_cast<int>(v);
      }
      step.options = opts;
      if (i_ >= s_.size() || s_[i_] != '(')
        fail("expected '(' after fixpoint", "write fixpoint(pass1,pass2)");
      ++i_;
      skip_blanks();
      if (i_ < s_.size() && s_[i_] == ')')
        fail("empty fixpoint()", "list passes inside: fixpoint(cse,dce)");
      step.children = parse_list();
      skip_blanks();
      if (i_ >= s_.size() || s_[i_] != ')')
        fail("expected ')' to close fixpoint( at column " + std::to_string(at + 1),
             "add the missing ')'");
      ++i_;
      out.push_back(std::move(step));
      return;
    }

    if (const PassInfo* p = find_pass(n)) {
      PipelineStep step;
      step.pass = p;
      step.options = std::move(opts);
      step.column = at + 1;
      out.push_back(std::move(step));
      return;
    }
    if (const PipelineInfo* pl = find_pipeline(n)) {
      if (has_opts)
        fail("options apply to passes, not to the pipeline '" + n + "'",
             "list its passes instead: " + std::string(pl->pipeline), at);
      // Registry text: a mistake there is a bug, reported like any other parse error.
      PipelineParser sub(pl->pipeline);
      for (auto& st : sub.parse_all()) {
        st.column = at + 1;
        out.push_back(std::move(st));
      }
      return;
    }
    std::string near = closest_pass_name(n);
    fail("unknown pass '" + n + "'",
         near.empty() ? "run 'tinytrace passes' for the list of passes"
                      : "did you mean '" + near + "'?",
         at);
  }

  std::string s_;  // a copy: named pipelines are parsed from their registry C strings
  size_t i_ = 0;
};

void step_str(const PipelineStep& st, std::string& out) {
  auto opts_str = [&](const std::map<std::string, std::string>& o) {
    if (o.empty()) return;
    out += "{";
    bool first = true;
    for (const auto& kv : o) {
      if (!first) out += ",";
      first = false;
      out += kv.first + "=" + kv.second;
    }
    out += "}";
  };
  if (st.kind == PipelineStep::Kind::Pass) {
    out += st.pass->name;
    opts_str(st.options);
    return;
  }
  out += kFixpoint;
  opts_str(st.options);
  out += "(";
  for (size_t i = 0; i < st.children.size(); ++i) {
    if (i) out += ",";
    step_str(st.children[i], out);
  }
  out += ")";
}

void collect_names(const std::vector<PipelineStep>& steps, std::vector<std::string>& out) {
  for (const auto& st : steps) {
    if (st.kind == PipelineStep::Kind::Fixpoint) {
      collect_names(st.children, out);
    } else if (std::find(out.begin(), out.end(), st.pass->name) == out.end()) {
      out.push_back(st.pass->name);
    }
  }
}

}  // namespace

Pipeline parse_pipeline(const std::string& text) {
  Pipeline p;
  p.steps = PipelineParser(text).parse_all();
  return p;
}

std::string Pipeline::str() const {
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i) out += ",";
    step_str(steps[i], out);
  }
  return out;
}

std::vector<std::string> Pipeline::pass_names() const {
  std::vector<std::string> out;
  collect_names(steps, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// PassManager

PassManager::PassManager(Pipeline pipeline, PassManagerOptions opts)
    : pipeline_(std::move(pipeline)), opts_(std::move(opts)) {
  const std::string& pia = opts_.print_ir_after;
  if (!pia.empty() && pia != "all") {
    auto names = pipeline_.pass_names();
    if (std::find(names.begin(), names.end(), pia) == names.end()) {
      std::string fix;
      if (find_pass(pia)) {
        fix = "'" + pia + "' is not in the pipeline (" + pipeline_.str() +
              "); name one of its passes or 'all'";
      } else {
        std::string near = closest_pass_name(pia);
        fix =
            near.empty() ? "name a pass of the pipeline or 'all'" : "did you mean '" + near + "'?";
      }
      throw Error(ExitCode::Usage, "--print-ir-after: unknown pass '" + pia + "' — " + fix);
    }
  }
}

namespace {
std::vector<std::string> first_problems(const std::vector<std::string>& problems, size_t n) {
  return std::vector<std::string>(
      problems.begin(), problems.begin() + static_cast<long>(std::min(n, problems.size())));
}
}  // namespace

bool PassManager::run(Graph& g, Diagnostics& diags) {
  if (opts_.verify_each) {
    auto problems = verify_graph(g);
    if (!problems.empty())
      throw Error(
          ExitCode::BadInput,
          "the input IR is not well-formed: " + problems.front() +
              " — fix the graph (this was found before any pass ran)",
          first_problems(std::vector<std::string>(problems.begin() + 1, problems.end()), 5));
  }
  known_nodes_.reset();  // the graph may have changed since the last run
  return run_steps(pipeline_.steps, g, diags);
}

bool PassManager::run_steps(const std::vector<PipelineStep>& steps, Graph& g, Diagnostics& diags) {
  bool changed = false;
  for (const auto& st : steps) {
    if (st.kind == PipelineStep::Kind::Pass) {
      changed |= run_pass(st, g, diags);
      continue;
    }
    bool converged = false;
    int round = 0;
    while (round < st.max_iterations) {
      ++round;
      bool round_changed = run_steps(st.children, g, diags);
      changed |= round_changed;
      if (!round_changed) {
        converged = true;
        break;
      }
    }
    if (!converged) {
      std::string text;
      step_str(st, text);
      std::string msg = text + " still changed the graph after " + std::to_string(round) +
                        " round(s); stopped there (raise fixpoint{max-iterations=N} if needed)";
      diags.warn("fixpoint-cap", msg);
    } else {
      spdlog::debug("fixpoint converged after {} round(s)", round);
    }
  }
  return changed;
}

// Note [Pass times on a shared machine]
// The -v line of each pass gives its wall time and the CPU time of the thread that ran it. On a
// loaded machine (CI, shared build hosts) the wall time measures the scheduler as much as the
// pass, so scripts/bench_passes.sh judges linearity by the CPU time (passes are single-threaded).
static double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

bool PassManager::run_pass(const PipelineStep& st, Graph& g, Diagnostics& diags) {
  const PassInfo& p = *st.pass;
  PassStat stat;
  stat.name = p.name;
  // Only passes run between two passes of one run(), so the count after one is the next's before.
  stat.nodes_before = known_nodes_ ? *known_nodes_ : g.num_nodes();

  PassContext ctx(diags);
  ctx.set_pass_name(p.name);
  ctx.set_options(st.options);
  auto t0 = std::chrono::steady_clock::now();
  double cpu0 = thread_cpu_ms();
  bool changed = p.fn(g, ctx);
  double cpu_ms = thread_cpu_ms() - cpu0;
  auto t1 = std::chrono::steady_clock::now();

  auto unused = ctx.unused_options();
  if (!unused.empty())
    throw Error(ExitCode::Usage, "--passes: pass '" + std::string(p.name) + "' has no option '" +
                                     unused.front() + "' (column " + std::to_string(st.column) +
                                     ") — run 'tinytrace passes' for the options of each pass");

  stat.changed = changed;
  stat.nodes_after = g.num_nodes();
  known_nodes_ = stat.nodes_after;
  stat.rewrites = ctx.rewrites();
  stat.milliseconds = std::chrono::duration<double, std::milli>(t1 - t0).count();
  stat.log.reserve(ctx.log().size());
  for (const RewriteLogEntry& e : ctx.log()) stat.log.push_back({e.rule, e.node, e.scope});
  stat.module_copies = ctx.module_copies();
  stat.statistics = ctx.statistics();
  spdlog::info("pass {}: {} ({} -> {} nodes, {} rewrite(s), {:.2f} ms, {:.2f} ms cpu)", p.name,
               changed ? "changed" : "no change", stat.nodes_before, stat.nodes_after,
               stat.rewrites, stat.milliseconds, cpu_ms);
  stats_.push_back(stat);
  std::vector<RewriteLogEntry> log = ctx.take_log();
  if (log_.empty())
    log_ = std::move(log);
  else
    log_.insert(log_.end(), std::make_move_iterator(log.begin()),
                std::make_move_iterator(log.end()));

  if (opts_.print_ir_after == "all" || opts_.print_ir_after == p.name) {
    std::ostream& os = opts_.ir_stream ? *opts_.ir_stream : std::cerr;
    os << "// IR after " << p.name << "\n" << print_graph(g);
    os.flush();
  }
  if (opts_.verify_each) {
    auto problems = verify_graph(g);
    if (!problems.empty())
      throw Error(
          ExitCode::Internal,
          "the IR verifier failed after pass '" + std::string(p.name) + "': " + problems.front() +
              " — this is a bug in tinytrace; please report it",
          first_problems(std::vector<std::string>(problems.begin() + 1, problems.end()), 5));
  }
  return changed;
}

// ---------------------------------------------------------------------------------------------
// Import pipelines (Note [Import pipeline] in lib/loaders/loader.h)

namespace {
bool run_import_steps(const std::vector<PipelineStep>& steps, Graph& g, Diagnostics& diags) {
  bool changed = false;
  for (const auto& st : steps) {
    if (st.kind == PipelineStep::Kind::Fixpoint) {
      for (int round = 0; round < st.max_iterations && run_import_steps(st.children, g, diags);
           ++round)
        changed = true;
      continue;
    }
    PassContext ctx(diags);
    ctx.set_pass_name(st.pass->name);
    ctx.set_options(st.options);
    bool c = st.pass->fn(g, ctx);
    spdlog::debug("import pass {}: {} ({} rewrite(s))", st.pass->name, c ? "changed" : "no change",
                  ctx.rewrites());
    changed |= c;
  }
  return changed;
}
}  // namespace

void run_import_pipeline(const std::string& text, Graph& g, Diagnostics& diags) {
  if (text.empty()) return;
  run_import_steps(parse_pipeline(text).steps, g, diags);
}

}  // namespace tt
