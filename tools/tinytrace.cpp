// tinytrace command-line front end: argument parsing, logging set-up and exit codes only.
// Everything it runs lives in lib/ (see lib/driver/) so that tests reach it without the CLI.
#include "driver/convert.h"
#include "driver/diff.h"
#include "driver/inspect.h"
#include "driver/passes_cli.h"
#include "driver/profile.h"
#include "exec/quant_engine.h"
#include "loaders/loader.h"
#include "support/diag.h"
#include "support/output_set.h"
#include "ir/input_spec.h"
#include "passes/pass.h"

#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>

namespace {

// LibTorch's TORCH_WARN goes to stderr by default as multi-line text; route it to our log.
class WarningToLog : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override {
    spdlog::debug("libtorch: {}", warning.msg());
  }
};

void set_up_logging(int verbosity, bool quiet) {
  auto logger = spdlog::stderr_color_mt("tinytrace");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::level::level_enum level = spdlog::level::warn;
  if (quiet) level = spdlog::level::err;
  if (verbosity == 1) level = spdlog::level::info;
  if (verbosity == 2) level = spdlog::level::debug;
  if (verbosity >= 3) level = spdlog::level::trace;
  spdlog::set_level(level);
}

// LibTorch's CPU allocator reports a failed allocation as a plain c10::Error ("[enforce fail at
// alloc_cpu.cpp:118] err == 0. DefaultCPUAllocator: can't allocate memory: ..."), not as
// c10::OutOfMemoryError; messages that quote it are out of memory too (Note [Exit code 6]).
bool allocation_failed(const std::string& what) {
  return what.find("DefaultCPUAllocator: can't allocate memory") != std::string::npos ||
         what.find("DefaultCPUAllocator: not enough memory") != std::string::npos;
}

int report_error(const std::string& file, const tt::Error& e) {
  const std::string what = e.what();
  std::cerr << "error: " << (file.empty() ? "" : file + ": ") << what << "\n";
  // The error's place in the model (Note [Located errors]), as far as the message does not say it.
  tt::Location rest = e.where();
  if (what.find("%" + rest.node) != std::string::npos) rest.node.clear();
  if (what.find("'" + rest.scope + "'") != std::string::npos) rest.scope.clear();
  if (what.find(rest.loc) != std::string::npos) rest.loc.clear();
  if (!rest.empty()) std::cerr << "note: at " << tt::describe(rest) << "\n";
  for (const auto& n : e.notes()) std::cerr << "note: " << n << "\n";
  return static_cast<int>(e.code());
}

}  // namespace

// Note [jemalloc]
// The tinytrace executable is linked with jemalloc (CMakeLists.txt, TT_JEMALLOC), so every
// malloc and operator new of the process, LibTorch's included, is jemalloc's. A graph is millions
// of small heap objects (a node's vectors and strings, its values, their use lists, the weight
// store's entries): on scripts/bench_passes.sh's 1M-node graph through --fuse, a profile put over
// a third of the samples in the C library and page faults, and in 4 alternating rounds the whole
// command took 12.1-15.4 s of wall time on glibc's malloc (median 14.5 s) and 9.2-12.3 s on
// jemalloc (median 10.7 s) (issue #22). The deep models of the same benchmark convert faster too
// (enc200_scripted, one run each: 7.6 -> 5.4 s). jemalloc's defaults are kept: the options tried
// (one arena, no decay, a larger thread cache) made no difference beyond the machine's noise.
// Only the executable links it: a library must not swap its host's allocator (the unit tests and
// Python keep glibc's), and the sanitizer build keeps ASan's. The test `jemalloc_in_use` asks
// jemalloc for its statistics at exit.

int main(int argc, char** argv) {
  static WarningToLog warning_handler;
  c10::WarningUtils::set_warning_handler(&warning_handler);
  // The e2e tests that need a deliberately wrong pass (passes/pass.h) ask for the test passes.
  if (const char* t = std::getenv("TT_TEST_PASSES"); t && std::string(t) == "1")
    tt::register_test_passes();

  CLI::App app{
      "tinytrace " TT_VERSION
      " — turn a TorchScript, torch.export or ONNX model back into readable PyTorch code.\n\n"
      "Examples:\n"
      "  tinytrace convert model.pt                       writes model.py, model.pth, model.json\n"
      "  tinytrace convert model.pt -o out --input-shape 1,3,224,224\n"
      "  tinytrace convert bert.pt --input-shape 1,128:int64 --input-shape 1,128:int64\n"
      "  tinytrace inspect model.pt --input-shape 1,3,224,224   modules, params, ops, shapes\n"
      "  tinytrace diff model.pt out/model.tir                   what a conversion changed\n"
      "  tinytrace profile model.pt --input-shape 1,3,224,224   time per op and node\n\n"
      "Exit codes: 0 ok, 1 internal error, 2 usage error, 3 unreadable or not a model,\n"
      "4 unsupported construct in the model, 5 --verify mismatch, 6 the system failed the run\n"
      "(out of memory, full disk, output directory read-only or removed); diff: 0 identical,\n"
      "1 different, 2 and up on errors (an internal error in diff exits 2). Killed by a signal\n"
      "(Ctrl-C, SIGTERM, SIGHUP): no output is left behind and the status is that signal's.",
      "tinytrace"};
  app.set_version_flag("--version", "tinytrace " TT_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // -v/-q work after the subcommand too: tinytrace convert m.pt -v
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "More log output on stderr (repeat: -vv, -vvv)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");
  std::vector<std::string> op_libraries;
  app.add_option("--load-library", op_libraries,
                 "Load a shared library that registers TorchScript ops before reading models "
                 "(as torch.ops.load_library does; repeatable), e.g. torchvision's _C*.so for a "
                 "model calling torchvision::nms")
      ->type_name("PATH");
  std::string q_engine;
  app.add_option("--quantized-engine", q_engine,
                 "The quantized engine int8 models are packed for and run with (any command; "
                 "default: LibTorch's, " +
                     tt::quantized_engine() +
                     " here): outputs are bit-exact only on the same engine, which NAME.py's "
                     "__main__ selects too")
      ->type_name("ENGINE");

  tt::ConvertOptions copts;
  std::vector<std::string> shape_specs;
  std::vector<std::string> emit;
  auto* convert = app.add_subcommand(
      "convert",
      "Convert MODEL (TorchScript .pt, torch.export .pt2, ONNX .onnx or .tir) into NAME.py\n"
      "(a standalone nn.Module), NAME.pth (its state_dict) and NAME.json (the graph report). The\n"
      "original model's state_dict loads into the generated class with strict=True.");
  convert
      ->add_option("MODEL", copts.model_path,
                   "TorchScript archive (.pt), torch.export archive (.pt2), ONNX file (.onnx) or "
                   ".tir text IR; the format "
                   "is read from the content")
      ->required();
  convert->add_option("-o,--output-dir", copts.out_dir,
                      "Directory for the outputs (created if missing; default: current directory)");
  convert->add_option("--name", copts.name,
                      "Base name of the outputs and the generated class (default: the model file's "
                      "stem, class in CamelCase)");
  convert
      ->add_option("--input-shape", shape_specs,
                   "Shape of one model input, once per input in order: 1,3,224,224 (float32) "
                   "or 1,128:int64. Used for example inputs and static shapes")
      ->take_all();
  convert
      ->add_option("--emit", emit,
                   "Comma-separated outputs: python,weights,report,torchscript,tir,dot (default: "
                   "python,weights,report)")
      ->delimiter(',');
  convert->add_flag("--flat", copts.flat,
                    "Write NAME.py as one class with one forward over the whole graph. By default "
                    "each module type of the model is its own class (BasicBlock, "
                    "InvertedResidual), containers are nn.Sequential/nn.ModuleList, and the parent "
                    "calls self.layer1(x)");
  convert->add_flag(
      "--optimize-for-inference", copts.optimize_for_inference,
      "With --emit torchscript: save NAME.pt frozen and optimized by LibTorch's own passes "
      "(torch::jit::freeze: weights become constants, dropout goes, BatchNorm and constant "
      "add/mul fold into the convs; linears become matmuls on pre-transposed weights). NAME.pt "
      "then has no state_dict (NAME.pth keeps the weights); --verify checks it against the "
      "original (1e-3 when the folds changed the arithmetic). LibTorch's MKLDNN conversion is "
      "left out: it cannot be saved. E.g. --fuse --emit torchscript --optimize-for-inference");
  convert->add_flag("--fuse", copts.passes.fuse,
                    "Fold BatchNorm into the preceding conv/linear and clean up (the pipeline "
                    "'fuse'; see 'tinytrace passes')");
  convert->add_flag("--quant-prep", copts.passes.quant_prep,
                    "Make the model ready for eager-mode quantization: module activations, "
                    "unshared modules, FloatFunctional, fused Conv/BN/ReLU, Quant/DeQuant stubs, "
                    "float fallback (the pipeline 'quant-prep'; --passes run after it)");
  convert->add_flag("--dequantize", copts.passes.dequantize,
                    "Turn an int8 (eager-quantized) model into its float twin: nn.Conv2d/Linear "
                    "with the dequantized weights, nn.ReLU split out of fused modules, QFunctional "
                    "-> torch ops, Quantize/DeQuantize removed (runs before --fuse/--quant-prep; "
                    "--verify compares with the int8 original by cosine similarity >= 0.99)");
  convert->add_flag("--qat", copts.passes.qat,
                    "With --quant-prep: keep BatchNorm for quantization-aware training "
                    "(ConvBn2d, ConvBnReLU2d, LinearBn1d)");
  convert->add_option("--passes", copts.passes.passes,
                      "Pass pipeline to run, e.g. 'cse,dce' or 'fixpoint(fold-constants,dce)' "
                      "(after --fuse when both are given; see 'tinytrace passes')");
  convert->add_option("--print-ir-after", copts.passes.print_ir_after,
                      "Print the IR (.tir) to stderr after this pass, or after every pass: all");
  convert->add_flag("--verify-each", copts.passes.verify_each,
                    "Run the IR verifier before the pipeline and after every pass");

  convert->add_option("--verify-inputs", copts.verify_inputs,
                      "With --verify: the inputs to compare on, a tuple saved with torch.save "
                      "(default: seeded inputs from --input-shape)");
  convert->add_flag("--verify", copts.verify,
                    "Run the original model and the converted graph on the same seeded inputs "
                    "(from --input-shape) and compare every output; exit 5 beyond tolerance");
  convert
      ->add_option("--tolerance", copts.tolerance,
                   "Largest allowed relative difference max|diff|/max|expected| for --verify "
                   "(default 1e-4; 1e-3 when BatchNorm was folded)")
      ->check(CLI::PositiveNumber);

  auto* passes_cmd = app.add_subcommand("passes", "List every pass and named pipeline");
  tt::OptOptions oopts;
  auto* opt_cmd = app.add_subcommand(
      "opt",
      "Run passes on a .tir file and print the resulting .tir on stdout (cases separated "
      "by '// -----' are run one by one)");
  opt_cmd->add_option("FILE", oopts.file, ".tir text IR file")->required();
  opt_cmd->add_option("--passes", oopts.passes.passes, "Pass pipeline (see 'tinytrace passes')");
  opt_cmd->add_flag("--fuse", oopts.passes.fuse, "Run the pipeline 'fuse' (before --passes)");
  opt_cmd->add_flag("--quant-prep", oopts.passes.quant_prep,
                    "Run the pipeline 'quant-prep' (before --passes)");
  opt_cmd->add_flag("--qat", oopts.passes.qat, "With --quant-prep: 'quant-prep-qat' (BN kept)");
  opt_cmd->add_option("--print-ir-after", oopts.passes.print_ir_after,
                      "Print the IR to stderr after this pass, or after every pass: all");
  opt_cmd->add_flag("--verify-each", oopts.passes.verify_each,
                    "Run the IR verifier before the pipeline and after every pass");
  opt_cmd->add_option("--weights", oopts.weights,
                      "How to print the weights section: inline (values, default) or declare");

  // inspect / diff / profile (lib/driver/{inspect,diff,profile}.h).
  tt::InspectOptions iopts;
  std::vector<std::string> inspect_shapes;
  auto* inspect_cmd = app.add_subcommand(
      "inspect",
      "Show what is in a model: inputs/outputs, the module tree with parameter counts, "
      "the op histogram,\nparameter totals and weight bytes, ops that fell back to "
      "torch.ops.aten, and warnings");
  inspect_cmd
      ->add_option("MODEL", iopts.model_path,
                   "TorchScript archive (.pt), torch.export archive (.pt2), ONNX file or .tir")
      ->required();
  inspect_cmd
      ->add_option("--input-shape", inspect_shapes,
                   "Shape of one model input, once per input in order (1,3,224,224 or "
                   "1,128:int64): shows the shapes of inputs, outputs and --dot edges")
      ->take_all();
  inspect_cmd->add_flag("--json", iopts.json,
                        "Print a JSON document instead (schema: lib/emitters/inspect.schema.json)");
  inspect_cmd->add_option(
      "--dot", iopts.dot_path,
      "Also write the graph as Graphviz DOT to FILE (module scopes as "
      "clusters, shapes on edges; its directory is created if missing), and FILE's .svg "
      "beside it when 'dot' is installed");
  inspect_cmd->footer(
      "Examples:\n"
      "  tinytrace inspect resnet18.pt\n"
      "  tinytrace inspect resnet18.pt --input-shape 1,3,224,224 --dot resnet18.dot\n"
      "  tinytrace inspect model.onnx --json | jq .summary.parameter_count");

  tt::DiffOptions dopts;
  auto* diff_cmd = app.add_subcommand(
      "diff",
      "Show what changed between two models (any of .pt, .pt2, .onnx, .tir): ops added/removed "
      "per op type,\nmodules whose type changed, parameters added/removed/changed (max "
      "|diff|), input/output signatures.\nExit 0 when identical, 1 when different, 2/3 on "
      "errors (like diff(1))");
  diff_cmd->add_option("A", dopts.a, "The first model (the 'before')")->required();
  diff_cmd->add_option("B", dopts.b, "The second model (the 'after')")->required();
  diff_cmd->add_flag("--json", dopts.json,
                     "Print a JSON document instead (schema: lib/emitters/diff.schema.json)");
  diff_cmd->footer(
      "Examples:\n"
      "  tinytrace convert resnet18.pt --fuse --emit tir -o out && tinytrace diff resnet18.pt "
      "out/resnet18.tir\n"
      "  tinytrace diff v1.pt v2.pt --json > changes.json || echo \"the model changed\"");

  tt::ProfileOptions popts;
  std::vector<std::string> profile_shapes;
  auto* profile_cmd = app.add_subcommand(
      "profile",
      "Run the model's IR node by node with the interpreter and show where the time "
      "goes: per node and per op\ntype (mean, share), the top N nodes, the whole run, "
      "and the original TorchScript's time for reference");
  profile_cmd
      ->add_option("MODEL", popts.model_path,
                   "TorchScript archive (.pt), torch.export archive (.pt2), ONNX file or .tir")
      ->required();
  profile_cmd
      ->add_option("--input-shape", profile_shapes,
                   "Shape of one model input, once per input in order (required): "
                   "1,3,224,224 or 1,128:int64; inputs are seeded random values")
      ->take_all();
  profile_cmd->add_option("--runs", popts.runs, "Measured runs; times are their mean (default 10)");
  profile_cmd->add_option("--warmup", popts.warmup, "Unmeasured runs first (default 2)");
  profile_cmd->add_option("--top", popts.top, "How many of the slowest nodes to list (default 10)");
  profile_cmd->add_flag("--json", popts.json,
                        "Print a JSON document with every node instead (schema: "
                        "lib/emitters/profile.schema.json)");
  profile_cmd->footer(
      "Examples:\n"
      "  tinytrace profile resnet18.pt --input-shape 1,3,224,224\n"
      "  tinytrace profile bert.pt --input-shape 1,128:int64 --input-shape 1,128:int64 --runs 20 "
      "--top 5\n"
      "  tinytrace profile model.tir --input-shape 1,3,32,32 --json > profile.json");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << tt::first_line(e.what()) << " — run 'tinytrace --help' for usage\n";
    return static_cast<int>(tt::ExitCode::Usage);
  }
  set_up_logging(verbosity, quiet);

  std::string file;
  // diff follows diff(1): 0 identical, 1 different, so its troubles must not exit 1 — an internal
  // error there exits 2 (like usage) so that `tinytrace diff a b || echo changed` never mistakes a
  // crash for a change.
  const int internal_exit = diff_cmd->parsed() ? static_cast<int>(tt::ExitCode::Usage)
                                               : static_cast<int>(tt::ExitCode::Internal);
  auto internal_error = [&](const std::string& about, const std::string& what) {
    std::cerr << "error: " << (about.empty() ? "" : about + ": ") << what << "\n";
    return internal_exit;
  };
  // Out of memory is the system's failure, not a bug (Note [Exit code 6] in lib/support/diag.h).
  auto out_of_memory = [&]() {
    std::cerr
        << "error: " << (file.empty() ? "" : file + ": ")
        << "out of memory — use smaller --input-shape values, or a machine with more memory\n";
    return static_cast<int>(tt::ExitCode::System);
  };
  tt::install_signal_handlers();  // Note [Signals while loading] in lib/support/output_set.cpp
  try {
    if (!q_engine.empty()) tt::set_quantized_engine(q_engine);
    // A library that cannot be loaded is a bad argument, whatever the command.
    for (const auto& lib : op_libraries) {
      try {
        tt::load_op_library(lib);
      } catch (const tt::Error& e) {
        throw tt::Error(tt::ExitCode::Usage, std::string("--load-library: ") + e.what());
      }
    }
    if (convert->parsed()) {
      file = copts.model_path;
      for (const auto& s : shape_specs) copts.input_shapes.push_back(tt::parse_input_spec(s));
      if (!emit.empty()) copts.emit = emit;
      copts.keep_final_graph = true;  // the process ends right after
      tt::ConvertResult r = tt::run_convert(copts);
      std::cout << "converted " << copts.model_path << " -> class " << r.class_name << " ("
                << r.nodes << " nodes, " << r.parameters << " parameters";
      if (r.aten_fallbacks) std::cout << ", " << r.aten_fallbacks << " op(s) via torch.ops.aten";
      if (r.warnings) std::cout << ", " << r.warnings << " warning(s)";
      std::cout << ")\n";
      for (const auto& v : r.verify_summaries) std::cout << "  " << v << "\n";
      for (const auto& w : r.written) std::cout << "  wrote " << w << "\n";
    }
    if (passes_cmd->parsed()) tt::print_pass_list(std::cout);
    // opt's messages name the file themselves (parse errors carry file:line:col).
    if (opt_cmd->parsed()) {
      // The process ends right after (Note [The final graph at exit] in passes_cli.cpp).
      oopts.keep_final_graph = true;
      tt::run_opt(oopts, std::cout);
    }
    if (inspect_cmd->parsed()) {
      file = iopts.model_path;
      for (const auto& s : inspect_shapes) iopts.input_shapes.push_back(tt::parse_input_spec(s));
      tt::run_inspect(iopts, std::cout);
    }
    // diff's messages name the file they are about (there are two).
    if (diff_cmd->parsed()) return tt::run_diff(dopts, std::cout);
    if (profile_cmd->parsed()) {
      file = popts.model_path;
      for (const auto& s : profile_shapes) popts.input_shapes.push_back(tt::parse_input_spec(s));
      tt::run_profile(popts, std::cout);
    }
  } catch (const tt::Error& e) {
    // A loader or runner that wraps LibTorch's failed allocation in its own message ("the original
    // model failed on the example inputs (... can't allocate memory ...)") still ran out of memory.
    if (e.code() != tt::ExitCode::System && allocation_failed(e.what())) return out_of_memory();
    // Usage errors about the input-shape or options are not about the file.
    int code = report_error(e.code() == tt::ExitCode::Usage ? "" : file, e);
    return code == static_cast<int>(tt::ExitCode::Internal) ? internal_exit : code;
  } catch (const c10::Error& e) {
    if (dynamic_cast<const c10::OutOfMemoryError*>(&e) ||
        allocation_failed(e.what_without_backtrace()))
      return out_of_memory();
    return internal_error(
        file, "internal error in LibTorch: " + tt::first_line(e.what_without_backtrace()) +
                  " — this is a bug in tinytrace; please report it with the model");
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  } catch (const std::exception& e) {
    return internal_error(file, "internal error: " + tt::first_line(e.what()) +
                                    " — this is a bug in tinytrace; please report it");
  } catch (...) {
    return internal_error(
        file, "internal error (unknown exception) — this is a bug in tinytrace; please report it");
  }
  return 0;
}
