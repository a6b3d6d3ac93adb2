// `tinytrace convert`: the whole job behind the CLI, reachable from tests.
#include "driver/convert.h"

#include "driver/tools_common.h"

#include "ir/quant.h"

#include "driver/verify.h"
#include "emitters/dot.h"
#include "emitters/python.h"
#include "emitters/pysrc.h"
#include "exec/alias.h"
#include "exec/interpreter.h"
#include "exec/quant_engine.h"
#include "loaders/jit_runner.h"
#include "emitters/report.h"
#include "ir/printer.h"
#include "loaders/loader.h"
#include "driver/torchscript.h"
#include "loaders/torch_io.h"
#include "support/diag.h"
#include "support/output_set.h"
#include "support/phase_timer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <future>
#include <map>
#include <string_view>
#include <tuple>

namespace tt {
namespace {

const char* const kPythonKeywords[] = {"False", "None", "True", "and", "as", "assert", "async",
                                       "await", "break", "class", "continue", "def", "del", "elif",
                                       "else", "except", "finally", "for", "from", "global", "if",
                                       "import", "in", "is", "lambda", "nonlocal", "not", "or",
                                       "pass", "raise", "return", "try", "while", "with", "yield",
                                       // Names that would shadow what the generated module imports.
                                       "torch", "nn", "F", "os"};

std::string stem_of(const std::string& path) {
  std::string base = path;
  while (!base.empty() && base.back() == '/') base.pop_back();
  auto slash = base.rfind('/');
  if (slash != std::string::npos) base = base.substr(slash + 1);
  auto dot = base.rfind('.');
  if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  return base;
}

c10::IValue pack_outputs(std::vector<c10::IValue> outs) {
  if (outs.size() == 1) return outs[0];
  return c10::ivalue::Tuple::create(std::move(outs));
}

// --verify: the original (TorchScript, and a torch.export program as the module that
// lib/loaders/export/ builds from it, through torch::jit; other formats: the graph as loaded,
// before any pass, through the interpreter) on seeded inputs, computed once and compared with
// every engine that runs the transformed model: the interpreter on the final graph, and the
// emitted NAME.pt through torch::jit when --emit torchscript is given.
struct VerifyRun {
  std::vector<std::string> spec_text;
  std::vector<c10::IValue> inputs;
  c10::IValue expected;
  double tolerance = 0;
  double min_cosine = 0;              // > 0: outputs compared by cosine similarity (--dequantize)
  std::vector<VerifyResult> results;  // one per engine
};

// Note [Verifying a dequantized model]
// The float twin of an int8 model (--dequantize, passes/dequantize.cpp) computes without the
// rounding of every activation and weight to 8 bits, so its outputs differ from the int8
// original's by the quantization error, which grows with depth and no relative tolerance bounds
// well. --verify then compares each output by the cosine similarity of the flattened tensors
// (the usual measure of quantization error): it passes at kDequantizeMinCosine or more. The
// report states each output's cosine ("cosine" in verification.results[].outputs) and the summary
// line the smallest; --tolerance does not apply.
constexpr double kDequantizeMinCosine = 0.99;

VerifyRun reference_run(const Model& m, const std::vector<InputSpec>& specs, double tolerance,
                        const std::string& inputs_file) {
  VerifyRun run;
  if (!inputs_file.empty()) {
    // Given inputs (e.g. ones that take a particular branch of a scripted model).
    run.spec_text.push_back(inputs_file);
    run.inputs = load_input_values(inputs_file);
  } else {
    for (const auto& s : specs) run.spec_text.push_back(s.str());
    run.inputs = make_example_inputs(specs);
  }
  add_default_inputs(*m.graph, run.inputs);  // Note [Forward defaults] in ir/ir.h
  run.tolerance = tolerance;
  if (m.source.format == "torchscript" || m.source.format == "export") {
    run.expected = run_torchscript_file(m.source.path, clone_inputs(run.inputs));
  } else {
    Model ref = load_model(m.source.path);
    run.expected = pack_outputs(Interpreter(*ref.graph).run(clone_inputs(run.inputs)));
  }
  return run;
}

// The report's "verification" object: one entry per engine in "results".
nlohmann::json verification_json(const VerifyRun& run) {
  nlohmann::json results = nlohmann::json::array();
  bool passed = true;
  for (const auto& r : run.results) {
    results.push_back(r.to_json());
    passed = passed && r.passed();
  }
  return {{"inputs", run.spec_text}, {"seed", 0}, {"passed", passed}, {"results", results}};
}

// What a failed --verify blames, and where the difference first appears: when the graph as
// loaded (before any pass) already differs from the original, the conversion itself; otherwise a
// pass, located at the first value of the final graph that differs from the same value of the
// loaded graph (first_difference).
std::pair<std::string, std::vector<std::string>> blame(const Model& m, const Graph& final_graph,
                                                       const VerifyRun& run) {
  std::string rerun = "rerun with --verify-each and -v to find it, or raise --tolerance";
  Model loaded;
  c10::IValue got;
  try {
    loaded = load_model(m.source.path);
    got = pack_outputs(Interpreter(*loaded.graph).run(clone_inputs(run.inputs)));
  } catch (const std::exception&) {
    return {"a pass or the conversion changed what the model computes: " + rerun, {}};
  }
  if (m.source.format == "torchscript" || m.source.format == "export") {
    VerifyResult as_loaded = compare_outputs(run.expected, got, run.tolerance, "loaded graph");
    if (!as_loaded.passed()) {
      std::vector<std::string> notes;
      if (auto d = first_difference_from_original(loaded, run.inputs, run.tolerance))
        notes.push_back("the first value that differs from the original: " + d->str());
      return {
          "the conversion changed what the model computes (the graph as loaded, before any "
          "pass, already differs from the original: " +
              as_loaded.summary() + ") — please report it as a tinytrace bug with the model",
          notes};
    }
  }
  std::vector<std::string> notes;
  if (auto d = first_difference(*loaded.graph, final_graph, run.inputs, run.tolerance))
    notes.push_back("the first value that differs from the graph as loaded: " + d->str());
  return {"a pass changed what the model computes: " + rerun, notes};
}

// Exit 5 when any engine disagrees with the original beyond the tolerance; the message carries
// every failing engine's verdict and what it blames (blame()), the notes every output's figures.
void throw_if_verify_failed(const VerifyRun& run, const Model& m, const Graph& g) {
  std::string verdicts;
  std::vector<std::string> notes;
  for (const auto& vr : run.results) {
    if (vr.passed()) continue;
    verdicts += (verdicts.empty() ? "" : "; ") + vr.summary();
    for (const auto& o : vr.outputs)
      notes.push_back(vr.engine + " output " + (o.path.empty() ? std::string("0") : o.path) +
                      ": max |diff| " + std::to_string(o.max_abs) + ", max |expected| " +
                      std::to_string(o.max_expected) + ", relative " + std::to_string(o.rel) +
                      (run.min_cosine > 0 ? ", cosine " + std::to_string(o.cosine) : ""));
  }
  if (verdicts.empty()) return;
  // The float twin of an int8 model differs from it by design (Note [Verifying a dequantized
  // model]); no value-by-value blame between a quantized and a float graph.
  if (run.min_cosine > 0)
    throw Error(ExitCode::VerifyFailed,
                verdicts +
                    "; no outputs written — the float twin (--dequantize) is further from the "
                    "int8 original than quantization error explains: if the int8 model's error "
                    "is that large (weak calibration), convert it without --verify, else please "
                    "report it as a tinytrace bug with the model",
                notes);
  bool interpreter_ok =
      std::any_of(run.results.begin(), run.results.end(),
                  [](const VerifyResult& r) { return r.engine == "interpreter" && r.passed(); });
  if (interpreter_ok)  // only the emitted NAME.pt disagrees: neither loading nor a pass
    throw Error(ExitCode::VerifyFailed,
                verdicts +
                    "; no outputs written — the emitted TorchScript computes something else than "
                    "the converted graph, which agrees with the original: please report it as a "
                    "tinytrace bug (drop torchscript from --emit meanwhile)",
                notes);
  auto [culprit, where] = blame(m, g, run);
  notes.insert(notes.begin(), where.begin(), where.end());
  throw Error(ExitCode::VerifyFailed, verdicts + "; no outputs written — " + culprit, notes);
}

// The file name extension of an --emit kind.
std::string output_ext(const std::string& kind) {
  return kind == "python"        ? ".py"
         : kind == "weights"     ? ".pth"
         : kind == "report"      ? ".json"
         : kind == "torchscript" ? ".pt"
         : kind == "dot"         ? ".dot"
                                 : ".tir";
}

// "message (node %y in module 'scope' at file:line)" for a log line or a note.
std::string located(const Diagnostic& d) {
  std::string where = describe(d.where());
  return where.empty() ? d.message : d.message + " (" + where + ")";
}

// Note [Repeated diagnostics on stderr]
// A deep model repeats one diagnostic per layer (200 layers of a scripted nn.TransformerEncoder:
// 400 lines of "no Python spelling for aten::..." that differ only in where). On stderr each
// message (same severity, code and text) is shown once, at its first location, with how many
// more there are; the report keeps every diagnostic with its own location.
// Warnings on stderr at warn level; notes (a resolved branch, an inlined leaf) only with -v.
void log_diagnostics(const Diagnostics& diags) {
  std::map<std::tuple<Severity, std::string_view, std::string_view>, size_t> count;
  for (const auto& d : diags.items()) ++count[{d.severity, d.code, d.message}];
  for (const auto& d : diags.items()) {
    size_t& n = count[{d.severity, d.code, d.message}];
    if (n == 0) continue;  // shown with the first of its kind
    std::string more = n > 1 ? " (and " + std::to_string(n - 1) + " more like it)" : "";
    n = 0;
    if (d.severity == Severity::Note)
      spdlog::info("note: {}{}", located(d), more);
    else
      spdlog::warn("{}{}", located(d), more);
  }
}

void convert_loaded(Model& m, const ConvertOptions& opts, const std::vector<std::string>& emit,
                    ConvertResult& res);

}  // namespace

const std::vector<std::string>& emit_kinds() {
  static const std::vector<std::string> kinds = {"python",      "weights", "report",
                                                 "torchscript", "tir",     "dot"};
  return kinds;
}

bool is_python_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  for (const char* k : kPythonKeywords)
    if (s == k) return false;
  return true;
}

std::string default_model_name(const std::string& model_path) {
  std::string s;
  for (char c : stem_of(model_path)) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty()) s = "model";
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "model_" + s;
  if (!is_python_identifier(s)) s += "_model";
  return s;
}

std::string class_name_for(const std::string& name) {
  std::string out = pysrc::camel_case(name);
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "Model" + out;
  return out;
}

ConvertResult run_convert(const ConvertOptions& opts) {
  ConvertResult res;
  res.name = opts.name.empty() ? default_model_name(opts.model_path) : opts.name;
  if (!is_python_identifier(res.name))
    throw Error(
        ExitCode::Usage,
        "--name '" + res.name + "' is not a usable Python identifier — use letters, digits and _");
  res.class_name = opts.name.empty() ? class_name_for(res.name) : opts.name;
  for (const auto& e : opts.emit)
    if (std::find(emit_kinds().begin(), emit_kinds().end(), e) == emit_kinds().end())
      throw Error(ExitCode::Usage,
                  "--emit: unknown output kind '" + e +
                      "' — choose from python, weights, report, torchscript, tir, dot");
  std::vector<std::string> emit = opts.emit;
  if (opts.optimize_for_inference &&
      std::find(emit.begin(), emit.end(), "torchscript") == emit.end())
    throw Error(
        ExitCode::Usage,
        "--optimize-for-inference optimizes the emitted TorchScript NAME.pt, which is not "
        "asked for — add --emit torchscript (e.g. --emit python,weights,report,torchscript)");
  // The .tir refers to its weights in NAME.pth (external("NAME.pth")), so it needs them.
  if (std::find(emit.begin(), emit.end(), "tir") != emit.end() &&
      std::find(emit.begin(), emit.end(), "weights") == emit.end())
    emit.push_back("weights");
  check_pass_options(opts.passes);  // a pipeline typo fails before the model is loaded
  // An output that would overwrite the input fails now, not after minutes of loading and passes.
  for (const auto& kind : emit) {
    std::string path = (opts.out_dir.empty() ? std::string(".") : opts.out_dir) + "/" + res.name +
                       output_ext(kind);
    if (same_file(path, opts.model_path))
      throw Error(
          ExitCode::Usage,
          "output '" + path + "' would overwrite the input model — choose another -o or --name");
  }

  Model m = load_model(opts.model_path);
  try {
    convert_loaded(m, opts, emit, res);
  } catch (const Error& e) {
    // The warnings gathered before the failure often explain it (an op that fell back to
    // torch.ops.aten, a resolved branch): keep them as notes under the one error line.
    std::vector<std::string> notes = e.notes();
    size_t shown = 0, warnings = 0;
    for (const auto& d : m.diags.items()) {
      if (d.severity != Severity::Warning) continue;
      ++warnings;
      if (shown++ < 5) notes.push_back("earlier warning: " + located(d));
    }
    if (warnings > 5)
      notes.push_back("... and " + std::to_string(warnings - 5) +
                      " more warning(s); 'tinytrace inspect' lists them all");
    throw Error(e.code(), e.what(), std::move(notes));
  }
  log_diagnostics(m.diags);
  for (const auto& d : m.diags.items()) {
    if (d.severity == Severity::Warning) ++res.warnings;
    if (d.code == "aten-fallback") ++res.aten_fallbacks;
  }
  // Note [The final graph at exit] in lib/driver/passes_cli.cpp: freeing the 175k nodes of
  // scripts/gen_deep_models.py's enc200_scripted took ~0.5 s of a convert about to exit.
  if (opts.keep_final_graph) {
    static Graph* kept = nullptr;  // a global: LeakSanitizer sees it as reachable
    kept = m.graph.release();
  }
  return res;
}

namespace {

void convert_loaded(Model& m, const ConvertOptions& opts, const std::vector<std::string>& emit,
                    ConvertResult& res) {
  auto wants = [&](const char* kind) {
    return std::find(emit.begin(), emit.end(), kind) != emit.end();
  };
  Graph& g = *m.graph;
  g.set_name(res.name);

  // Inputs with a default may be left out from the end: --verify passes their defaults.
  if (!opts.input_shapes.empty()) apply_input_shapes(m, opts.input_shapes);

  // With --input-shape, infer-shapes runs last, so .tir, --print-ir-after and the report show
  // the dtype and shape of every value of the final graph.
  PassCliOptions pass_opts = opts.passes;
  if (!opts.input_shapes.empty())
    pass_opts.passes += (pass_opts.passes.empty() ? "" : ",") + std::string("infer-shapes");
  PhaseTimer passing("passes");
  std::vector<PassStat> pass_stats = run_pass_options(g, m.diags, pass_opts);
  passing.stop();

  std::optional<VerifyRun> vrun;  // --verify
  if (opts.verify) {
    std::vector<InputSpec> specs =
        opts.input_shapes.empty() ? specs_from_graph(g) : opts.input_shapes;
    if (specs.empty() && opts.verify_inputs.empty())
      throw Error(ExitCode::Usage,
                  "--verify needs example inputs — give --input-shape once per "
                  "model input (those with a default may be left out from the end), e.g. "
                  "--input-shape 1,3,224,224");
    // Folding BatchNorm reassociates float arithmetic: allow 1e-3 then (DESIGN.md §2).
    bool folded = std::any_of(pass_stats.begin(), pass_stats.end(), [](const PassStat& p) {
      return (p.name == "fold-batchnorm" || p.name == "fuse-intrinsic") && p.changed;
    });
    double tol = opts.tolerance ? *opts.tolerance : folded ? 1e-3 : 1e-4;
    vrun = reference_run(m, specs, tol, opts.verify_inputs);
    if (opts.passes.dequantize) vrun->min_cosine = kDequantizeMinCosine;
    vrun->results.push_back(compare_outputs(
        vrun->expected, pack_outputs(Interpreter(g).run(clone_inputs(vrun->inputs))), tol,
        "interpreter"));
    vrun->results.back().min_cosine = vrun->min_cosine;
    // With --emit torchscript the verdict waits for NAME.pt's own comparison below.
    if (!wants("torchscript")) throw_if_verify_failed(*vrun, m, g);
  }

  // Quantized modules' entries in the layout their load_state_dict expects (Note [State of
  // quantized modules] in lib/ir/quant.h); every other weight as it is. Made before DIR is
  // touched.
  std::vector<std::pair<std::string, c10::IValue>> state_items;
  if (wants("weights")) {
    PhaseTimer t("state dict");
    state_items = state_dict_items(g);
  }

  // Note [Emitters in parallel]
  // The report's graph section (most of a deep model's report: one line per node) only reads the
  // final graph, as the Python emitter does: it is written on the second core while NAME.py is
  // generated (a third of a deep scripted model's convert time). Both only read the graph; its
  // lazily filled caches are safe for that (Node::info() is atomic, ir_op_counts() per thread,
  // and the weight store is compacted here, before the thread starts). The rest of the report
  // (diagnostics, which the emitter adds to, outputs) is written after, on this thread. Nothing
  // changes the graph until the thread is joined: a failure here (an exception) waits for it in
  // the future's destructor.
  // The Python emitter's alias analysis (mutated_memory, a walk over the whole graph) goes first
  // on that core too: the emitter asks for it only after it has laid out its classes.
  std::promise<MutatedMemory> mutated;  // before report_graph: the thread sets it
  std::future<ReportGraph> report_graph;
  bool mutated_apart = wants("report") && wants("python");
  if (wants("report")) {
    g.weights().names();  // compacts the store (a write) before the second reader starts
    report_graph = std::async(std::launch::async, [&g, &mutated, mutated_apart] {
      if (mutated_apart) {
        PhaseTimer t("alias analysis (in parallel)");
        try {
          mutated.set_value(mutated_memory(g));
        } catch (...) {
          mutated.set_exception(std::current_exception());
        }
      }
      PhaseTimer t("report graph (in parallel)");
      return render_report_graph(g);
    });
  }

  // NAME.py first, in memory: a graph the Python emitter refuses (exit 4) or a class name it
  // cannot use (exit 2) fails before the output directory is created or touched.
  std::string python_source;
  if (wants("python")) {
    PythonEmitOptions po;
    po.class_name = res.class_name;
    po.weights_file = res.name + ".pth";
    po.example_inputs = opts.input_shapes;
    po.flat = opts.flat;
    po.op_libraries = m.source.op_libraries;
    po.quantized_engine = quantized_engine();
    if (mutated_apart) po.mutated_memory = mutated.get_future().share();
    PhaseTimer t("emit python");
    python_source = emit_python(g, po, m.diags);
  }

  // Stage every output; nothing becomes visible unless all of them were written.
  OutputSet out(opts.out_dir);
  std::vector<std::string> finals;
  for (const auto& kind : emit_kinds()) {
    if (!wants(kind.c_str())) continue;
    finals.push_back(out.final_path(res.name + output_ext(kind)));
    if (kind == "dot" && find_dot_program()) finals.push_back(out.final_path(res.name + ".svg"));
  }

  if (wants("python")) out.write_text(res.name + ".py", python_source);
  if (wants("weights")) {
    PhaseTimer t("write weights");
    save_state_dict(out.stage(res.name + ".pth"), state_items, out.final_path(res.name + ".pth"));
  }
  InferenceOptimization optimized;  // --optimize-for-inference
  if (wants("torchscript")) {
    std::string staged = out.stage(res.name + ".pt");
    save_torchscript(g, staged, res.class_name, opts.optimize_for_inference ? &optimized : nullptr);
    if (vrun) {
      // LibTorch's folds reassociate float arithmetic as fold-batchnorm does: the same 1e-3
      // (Note [Optimizing NAME.pt for inference]); an explicit --tolerance stays as given.
      double tol = vrun->tolerance;
      if (opts.optimize_for_inference && !opts.tolerance && optimized.reassociated())
        tol = std::max(tol, 1e-3);
      vrun->results.push_back(
          verify_torchscript_archive(staged, vrun->inputs, vrun->expected, tol));
      vrun->results.back().min_cosine = vrun->min_cosine;
    }
  }
  nlohmann::json verification;  // null unless --verify
  if (vrun) {
    throw_if_verify_failed(*vrun, m, g);
    verification = verification_json(*vrun);
    for (const auto& r : vrun->results) res.verify_summaries.push_back(r.summary());
  }
  if (wants("tir")) {
    PrintOptions po;
    po.weights = PrintOptions::Weights::External;
    po.weights_file = res.name + ".pth";
    out.write_text(res.name + ".tir", print_graph(g, po));
  }
  // NAME.dot, and NAME.svg beside it when Graphviz is installed.
  if (wants("dot") && !write_dot_outputs(g, out, res.name + ".dot")) {
    // No picture after all (Graphviz missing or failed): the report lists only what is written.
    std::string svg = out.final_path(res.name + ".svg");
    finals.erase(std::remove(finals.begin(), finals.end(), svg), finals.end());
  }
  if (wants("report")) {
    ReportExtras extras;
    extras.outputs = finals;
    extras.pipeline = pass_stats;
    extras.verification = verification;
    if (opts.optimize_for_inference)
      extras.inference_optimization = {{"file", out.final_path(res.name + ".pt")},
                                       {"passes", optimized.passes},
                                       {"reassociated", optimized.reassociated()},
                                       {"aten_ops_before", optimized.ops_before},
                                       {"aten_ops_after", optimized.ops_after}};
    PhaseTimer t("report");
    ReportGraph graph = report_graph.get();
    std::string text;  // all but the graph section (60 MB for a deep model), which is not copied
    size_t graph_at = write_report_around(text, m, extras, graph);
    std::string_view around = text;
    out.write_text(res.name + ".json",
                   {around.substr(0, graph_at), graph.text, around.substr(graph_at)});
  }
  PhaseTimer committing("commit outputs");
  res.written = out.commit();
  res.nodes = g.num_nodes();
  for (const auto& n : g.weights().names())
    if (g.weights().at(n).is_param) res.parameters += g.weights().at(n).tensor.numel();
}

}  // namespace
}  // namespace tt
