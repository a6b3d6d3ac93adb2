// CLI glue for the pass pipeline (see passes_cli.h).
#include "driver/passes_cli.h"

#include "loaders/loader.h"
#include "loaders/tir_parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace tt {

std::string pipeline_text(const PassCliOptions& o) {
  std::vector<std::string> parts;
  if (o.dequantize) parts.push_back("dequantize,dce");
  if (o.fuse) parts.push_back("fuse");
  if (o.quant_prep) parts.push_back(o.qat ? "quant-prep-qat" : "quant-prep");
  if (!o.passes.empty()) parts.push_back(o.passes);
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : ",") + p;
  return text;
}

namespace {

PassManager make_manager(const PassCliOptions& o, std::ostream* ir_stream) {
  if (o.qat && !o.quant_prep)
    throw Error(ExitCode::Usage, "--qat only changes what --quant-prep does — add --quant-prep");
  // --fuse folds every BatchNorm, which --quant-prep does itself (and --qat must not).
  if (o.fuse && o.quant_prep)
    throw Error(ExitCode::Usage,
                "--fuse and --quant-prep together: --quant-prep already folds "
                "BatchNorm where quantization allows it — drop --fuse");
  std::string text = pipeline_text(o);
  if (text.empty() && !o.print_ir_after.empty())
    throw Error(
        ExitCode::Usage,
        "--print-ir-after needs a pipeline — add --passes PIPELINE, --fuse, --quant-prep or "
        "--dequantize");
  // Parse --passes alone first so that error columns count in the text the user typed.
  if (!o.passes.empty()) parse_pipeline(o.passes);
  Pipeline p = parse_pipeline(text);
  PassManagerOptions pm;
  pm.print_ir_after = o.print_ir_after;
  pm.verify_each = o.verify_each;
  pm.ir_stream = ir_stream;
  return PassManager(std::move(p), pm);
}

}  // namespace

void check_pass_options(const PassCliOptions& o) { make_manager(o, nullptr); }

std::vector<PassStat> run_pass_options(Graph& g, Diagnostics& diags, const PassCliOptions& o,
                                       std::ostream* ir_stream) {
  PassManager pm = make_manager(o, ir_stream);
  if (pm.pipeline().empty() && !o.verify_each) return {};
  spdlog::info("pipeline: {}", pm.pipeline().empty() ? "(none)" : pm.pipeline().str());
  pm.run(g, diags);
  return pm.stats();
}

void print_pass_list(std::ostream& os) {
  size_t width = 8;
  for (const auto& p : all_passes()) width = std::max(width, std::strlen(p.name));
  for (const auto& p : all_pipelines()) width = std::max(width, std::strlen(p.name));
  for (const auto& p : import_passes()) width = std::max(width, std::strlen(p.name));
  width += 2;
  os << "Passes (use with --passes a,b{key=value},fixpoint(c,d)):\n";
  for (const auto& p : all_passes())
    os << "  " << std::left << std::setw(static_cast<int>(width)) << p.name << p.summary << "\n";
  os << "Named pipelines (use as a pass name in --passes; fuse is also --fuse):\n";
  for (const auto& p : all_pipelines())
    os << "  " << std::left << std::setw(static_cast<int>(width)) << p.name << p.summary << " = "
       << p.pipeline << "\n";
  os << "  " << std::left << std::setw(static_cast<int>(width)) << "fixpoint"
     << "fixpoint{max-iterations=N}(a,b): repeat a,b until nothing changes (default at most 10 "
        "rounds)\n";
  os << "Import passes (a loader runs them right after loading, before the passes above; ONNX: "
     << kOnnxImportPipeline << "; TorchScript and .pt2: " << kTorchScriptImportPipeline << "):\n";
  for (const auto& p : import_passes())
    os << "  " << std::left << std::setw(static_cast<int>(width)) << p.name << p.summary << "\n";
}

// Note [The final graph at exit]
// Destroying a graph frees each node, value, use list, name and weight one by one: on the 1M-node
// graph of scripts/bench_passes.sh that was over a second of a command that is about to exit
// anyway (issue #22). `tinytrace opt` therefore hands its last graph to this pointer instead and
// lets the process end with it (everything it would free is memory; its output was written
// before). The pointer is a global, so LeakSanitizer sees the graph as still reachable and does
// not report it. Only the CLI asks for this (OptOptions::keep_final_graph); run_opt called from
// code that goes on frees its graphs as usual.
namespace {
Graph*& final_graph_at_exit() {
  static Graph* g = nullptr;
  return g;
}
}  // namespace

void run_opt(const OptOptions& o, std::ostream& out, std::ostream* ir_stream) {
  PrintOptions po;
  if (o.weights == "inline")
    po.weights = PrintOptions::Weights::Inline;
  else if (o.weights == "declare")
    po.weights = PrintOptions::Weights::Declare;
  else
    throw Error(ExitCode::Usage,
                "--weights: unknown mode '" + o.weights + "' — use inline or declare");
  // Validate the pipeline before reading anything.
  check_pass_options(o.passes);

  std::ifstream in(o.file, std::ios::binary);
  if (!in)
    throw Error(ExitCode::BadInput, o.file + ": cannot open the file (" + std::strerror(errno) +
                                        ") — check the path and its permissions");
  // Read in one piece when the size is known (a 1M-node file is 160 MB: no stream copy).
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0 && in) {
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<size_t>(in.gcount()));
  } else {
    in.clear();
    std::ostringstream buf;
    buf << in.rdbuf();
    text = std::move(buf).str();
  }

  auto cases = split_tir_cases(text);
  for (size_t i = 0; i < cases.size(); ++i) {
    auto g = parse_tir(cases[i], o.file);  // its errors name file:line:col
    Diagnostics diags;
    try {
      run_pass_options(*g, diags, o.passes, ir_stream);
    } catch (const Error& e) {
      if (e.code() == ExitCode::Usage) throw;
      throw Error(e.code(), o.file + ": " + e.what(), e.notes());
    }
    for (const auto& d : diags.items()) spdlog::warn("{}", d.message);
    if (i) out << "// -----\n";
    out << print_graph(*g, po);
    if (o.keep_final_graph && i + 1 == cases.size()) final_graph_at_exit() = g.release();
  }
  out.flush();
}

}  // namespace tt
