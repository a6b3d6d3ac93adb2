// tinytrace command-line front end: argument parsing, logging set-up and exit codes only.
// Everything it runs lives in lib/ (see lib/driver/) so that tests reach it without the CLI.
#include "driver/convert.h"
#include "driver/passes_cli.h"
#include "support/diag.h"
#include "support/input_spec.h"

#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

namespace {

// LibTorch's TORCH_WARN goes to stderr by default as multi-line text; route it to our log.
class WarningToLog : public c10::WarningHandler {
 public:
  void process(const c10::SourceLocation&, const std::string& msg, const bool) override {
    spdlog::debug("libtorch: {}", msg);
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

int report_error(const std::string& file, const tt::Error& e) {
  std::cerr << "error: " << (file.empty() ? "" : file + ": ") << e.what() << "\n";
  for (const auto& n : e.notes()) std::cerr << "note: " << n << "\n";
  return static_cast<int>(e.code());
}

// One line, whatever the message looked like (LibTorch messages span lines).
std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

int main(int argc, char** argv) {
  static WarningToLog warning_handler;
  c10::Warning::set_warning_handler(&warning_handler);

  CLI::App app{
      "tinytrace " TT_VERSION " — turn a TorchScript model back into readable PyTorch code.\n\n"
      "Examples:\n"
      "  tinytrace convert model.pt                       writes model.py, model.pth, model.json\n"
      "  tinytrace convert model.pt -o out --input-shape 1,3,224,224\n"
      "  tinytrace convert bert.pt --input-shape 1,128:int64 --input-shape 1,128:int64\n\n"
      "Exit codes: 0 ok, 1 internal error, 2 usage error, 3 unreadable or not a model,\n"
      "4 unsupported construct in the model, 5 --verify mismatch.",
      "tinytrace"};
  app.set_version_flag("--version", "tinytrace " TT_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // -v/-q work after the subcommand too: tinytrace convert m.pt -v
  int verbosity = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbosity, "More log output on stderr (repeat: -vv, -vvv)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");

  tt::ConvertOptions copts;
  std::vector<std::string> shape_specs;
  std::vector<std::string> emit;
  auto* convert = app.add_subcommand(
      "convert",
      "Convert MODEL (TorchScript .pt or .tir) into NAME.py (a standalone nn.Module), NAME.pth\n"
      "(its state_dict) and NAME.json (the graph report). The original model's state_dict loads\n"
      "into the generated class with strict=True.");
  convert->add_option("MODEL", copts.model_path, "TorchScript archive (.pt) or .tir text IR")
      ->required();
  convert->add_option("-o,--output-dir", copts.out_dir,
                      "Directory for the outputs (created if missing; default: current directory)");
  convert->add_option("--name", copts.name,
                      "Base name of the outputs and the generated class (default: the model file's "
                      "stem, class in CamelCase)");
  convert->add_option("--input-shape", shape_specs,
                      "Shape of one model input, once per input in order: 1,3,224,224 (float32) "
                      "or 1,128:int64. Used for example inputs and static shapes")
      ->take_all();
  convert
      ->add_option("--emit", emit,
                   "Comma-separated outputs: python,weights,report,torchscript,tir (default: "
                   "python,weights,report)")
      ->delimiter(',');
  convert->add_flag("--fuse", copts.passes.fuse,
                    "Fold BatchNorm into the preceding conv/linear and clean up (the pipeline "
                    "'fuse'; see 'tinytrace passes')");
  convert->add_option("--passes", copts.passes.passes,
                      "Pass pipeline to run, e.g. 'cse,dce' or 'fixpoint(fold-constants,dce)' "
                      "(after --fuse when both are given; see 'tinytrace passes')");
  convert->add_flag("--quant-prep", copts.passes.quant_prep,
                    "Make the model ready for eager-mode quantization: module activations, "
                    "unshared modules, FloatFunctional, fused Conv/BN/ReLU, Quant/DeQuant stubs, "
                    "float fallback (the pipeline 'quant-prep'; --passes run after it)");
  convert->add_flag("--qat", copts.passes.qat,
                    "With --quant-prep: keep BatchNorm for quantization-aware training "
                    "(ConvBn2d, ConvBnReLU2d, LinearBn1d)");
  convert->add_option("--print-ir-after", copts.passes.print_ir_after,
                      "Print the IR (.tir) to stderr after this pass, or after every pass: all");
  convert->add_flag("--verify-each", copts.passes.verify_each,
                    "Run the IR verifier before the pipeline and after every pass");

  convert->add_flag("--verify", copts.verify,
                    "Run the original model and the converted graph on the same seeded inputs "
                    "(from --input-shape) and compare every output; exit 5 beyond tolerance");
  convert->add_option("--tolerance", copts.tolerance,
                      "Largest allowed relative difference max|diff|/max|expected| for --verify "
                      "(default 1e-4; 1e-3 when BatchNorm was folded)")
      ->check(CLI::PositiveNumber);

  auto* passes_cmd = app.add_subcommand("passes", "List every pass and named pipeline");
  tt::OptOptions oopts;
  auto* opt_cmd = app.add_subcommand(
      "opt", "Run passes on a .tir file and print the resulting .tir on stdout (cases separated "
             "by '// -----' are run one by one)");
  opt_cmd->add_option("FILE", oopts.file, ".tir text IR file")->required();
  opt_cmd->add_option("--passes", oopts.passes.passes, "Pass pipeline (see 'tinytrace passes')");
  opt_cmd->add_flag("--fuse", oopts.passes.fuse, "Run the pipeline 'fuse' (before --passes)");
  opt_cmd->add_option("--print-ir-after", oopts.passes.print_ir_after,
                      "Print the IR to stderr after this pass, or after every pass: all");
  opt_cmd->add_flag("--verify-each", oopts.passes.verify_each,
  opt_cmd->add_flag("--quant-prep", oopts.passes.quant_prep,
                    "Run the pipeline 'quant-prep' (before --passes)");
  opt_cmd->add_flag("--qat", oopts.passes.qat, "With --quant-prep: 'quant-prep-qat' (BN kept)");
                    "Run the IR verifier before the pipeline and after every pass");
  opt_cmd->add_option("--weights", oopts.weights,
                      "How to print the weights section: inline (values, default) or declare");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << first_line(e.what()) << " — run 'tinytrace --help' for usage\n";
    return static_cast<int>(tt::ExitCode::Usage);
  }
  set_up_logging(verbosity, quiet);

  std::string file;
  try {
    if (convert->parsed()) {
      file = copts.model_path;
      for (const auto& s : shape_specs) copts.input_shapes.push_back(tt::parse_input_spec(s));
      if (!emit.empty()) copts.emit = emit;
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
    if (opt_cmd->parsed()) tt::run_opt(oopts, std::cout);
  } catch (const tt::Error& e) {
    // Usage errors about the input-shape or options are not about the file.
    return report_error(e.code() == tt::ExitCode::Usage ? "" : file, e);
  } catch (const c10::Error& e) {
    std::cerr << "error: " << (file.empty() ? "" : file + ": ")
              << "internal error in LibTorch: " << first_line(e.what_without_backtrace())
              << " — this is a bug in tinytrace; please report it with the model\n";
    return static_cast<int>(tt::ExitCode::Internal);
  } catch (const std::exception& e) {
    std::cerr << "error: " << (file.empty() ? "" : file + ": ") << "internal error: "
              << first_line(e.what()) << " — this is a bug in tinytrace; please report it\n";
    return static_cast<int>(tt::ExitCode::Internal);
  }
  return 0;
}
