// The TorchScript loader's entry points (loader.h): load_torchscript reads an archive with
// torch::jit::load and lifts its forward (lifter.h); lift_jit_module lifts a module built in
// memory (the torch.export loader's).
#include "loaders/loader.h"

#include "loaders/torchscript/lifter.h"
#include "loaders/torchscript/mapped_load.h"
#include "support/phase_timer.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/jit/serialization/import.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace tt {
namespace {

namespace jit = torch::jit;

const char* kSaveHint = "save with torch.jit.trace(model.eval(), example).save(path)";

// The op LibTorch did not know when it compiled the archive's code ("torchvision::nms" from
// "Unknown builtin op: torchvision::nms."), or "".
std::string unknown_op(const std::string& reason) {
  const std::string unknown = "Unknown builtin op: ";
  size_t at = reason.find(unknown);
  if (at == std::string::npos) return "";
  std::string op = reason.substr(at + unknown.size());
  while (!op.empty() && (op.back() == '.' || op.back() == ' ')) op.pop_back();
  return op.find("::") == std::string::npos ? "" : op;
}

// Turns a torch::jit::load failure into a message about the file.
[[noreturn]] void explain_load_failure(const std::string& path, const std::string& what) {
  std::vector<std::string> records;
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    records = reader.getAllRecords();
  } catch (const std::exception& e) {
    throw Error(ExitCode::BadInput,
                "not a readable TorchScript archive (" + first_line(e.what()) +
                    ") — the file may be truncated or corrupt; re-export it: " + kSaveHint);
  }
  bool has_code = false, has_data = false, has_constants = false;
  for (const auto& r : records) {
    if (r.rfind("code/", 0) == 0) has_code = true;
    if (r == "data.pkl") has_data = true;
    if (r == "constants.pkl") has_constants = true;
  }
  if (has_data && !has_code && !has_constants)
    throw Error(ExitCode::BadInput,
                std::string("this is a state_dict/pickled module written by torch.save, not "
                            "TorchScript — ") +
                    kSaveHint);
  std::string reason = first_line(what);
  if (std::string op = unknown_op(reason); !op.empty()) {
    std::string ns = op.substr(0, op.find("::"));
    bool has_ns = false;
    for (const OpLibrary& l : loaded_op_libraries())
      has_ns = has_ns || std::count(l.namespaces.begin(), l.namespaces.end(), ns);
    if (has_ns)
      throw Error(ExitCode::BadInput, "the model calls " + op + ", which the loaded " + ns +
                                          ":: op library does not register — load the version of "
                                          "that library the model was saved with (--load-library)");
    std::string hint =
        ns == "torchvision" || ns == "torchaudio"
            ? " (install python3-" + ns + ", whose library tinytrace finds by itself)"
            : "";
    throw Error(ExitCode::BadInput, "the model calls " + op +
                                        ", which no loaded op library registers — pass "
                                        "--load-library PATH with the library that registers " +
                                        ns + ":: ops" + hint);
  }
  throw Error(ExitCode::BadInput,
              "LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." +
                  std::to_string(TORCH_VERSION_MINOR) + " cannot load this TorchScript archive (" +
                  reason +
                  ") — it may come from a newer PyTorch, or be damaged; re-export it with this "
                  "PyTorch or an older one: " +
                  kSaveHint);
}

// torch::jit::load, loading the op library of a Python package the archive's code calls into
// when one is installed (Note [Op libraries]) and trying again.
jit::Module load_module(const std::string& path) {
  std::set<std::string> tried;
  for (;;) {
    std::string what;
    try {
      ts::MappedLoadStats stats;
      jit::Module m = ts::load_mapped(path, &stats);
      if (stats.mapped)
        spdlog::debug("weights: {} records ({} MiB) mapped from the archive, {} read",
                      stats.records, stats.bytes >> 20, stats.filled);
      else
        spdlog::debug("weights: read into memory ({})", stats.reason);
      return m;
    } catch (const c10::Error& e) {
      what = e.what_without_backtrace();
    } catch (const std::exception& e) {
      what = e.what();
    }
    std::string op = unknown_op(first_line(what));
    std::string ns = op.substr(0, op.find("::"));
    std::string lib = op.empty() || tried.count(ns) ? "" : find_op_library(ns);
    if (lib.empty()) explain_load_failure(path, what);
    tried.insert(ns);
    OpLibrary loaded = load_op_library(lib, "the model calls " + op);
    spdlog::info("loaded the op library {} ({}:: ops)", loaded.path, ns);
  }
}

}  // namespace

// What the TorchScript and .pt2 loaders ask to run on the graph they lifted (Note [Import
// pipeline]): the tracer's shape arithmetic on 0-dim tensors back to Python ints (Note [Int
// shapes] in passes/int_shapes.cpp), so every command starts from `x.size(2) // 16`.
const char* const kTorchScriptImportPipeline = "int-shapes";

std::unique_ptr<Graph> load_torchscript(
    const std::string& path, Diagnostics& diags,
    std::vector<std::pair<std::string, std::string>>* source_values) {
  try {
    PhaseTimer loading("torch::jit::load");
    jit::Module module = load_module(path);
    module.eval();
    loading.stop();
    PhaseTimer lifting("lift");
    std::unique_ptr<Graph> g = ts::Lifter(module, diags, source_values).run();
    g->modules() = ts::module_table(module);
    return g;
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(ExitCode::Unsupported,
                "cannot lift the TorchScript model: " + first_line(e.what_without_backtrace()) +
                    " — please report this with the model");
  } catch (const std::exception& e) {
    throw Error(ExitCode::Unsupported,
                "cannot lift the TorchScript model: " + first_line(e.what()) +
                    " — please report this with the model");
  }
}

std::unique_ptr<Graph> lift_jit_module(
    const torch::jit::Module& module, Diagnostics& diags,
    std::vector<std::pair<std::string, std::string>>* source_values) {
  return ts::Lifter(module, diags, source_values).run();
}

}  // namespace tt
