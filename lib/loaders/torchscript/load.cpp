// The TorchScript loader's entry points (loader.h): load_torchscript reads an archive with
// torch::jit::load and lifts its forward (lifter.h); lift_jit_module lifts a module built in
// memory (the torch.export loader's).
#include "loaders/loader.h"

#include "loaders/torchscript/lifter.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/jit/serialization/import.h>

#include <dlfcn.h>

namespace tt {
namespace {

namespace jit = torch::jit;

const char* kSaveHint = "save with torch.jit.trace(model.eval(), example).save(path)";

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
  // An op no loaded library registers: "Unknown builtin op: torchvision::nms."
  const std::string unknown = "Unknown builtin op: ";
  if (size_t at = reason.find(unknown); at != std::string::npos) {
    std::string op = reason.substr(at + unknown.size());
    while (!op.empty() && (op.back() == '.' || op.back() == ' ')) op.pop_back();
    std::string ns = op.substr(0, op.find("::"));
    std::string where = ns == "torchvision" ? " (python3-torchvision's torchvision/_C*.so)" : "";
    throw Error(ExitCode::BadInput, "the model calls " + op +
                                        ", which no loaded op library registers — pass "
                                        "--load-library PATH with the library that registers " +
                                        ns + ":: ops" + where);
  }
  throw Error(ExitCode::BadInput,
              "LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." +
                  std::to_string(TORCH_VERSION_MINOR) + " cannot load this TorchScript archive (" +
                  reason +
                  ") — it may come from a newer PyTorch, or be damaged; re-export it with this "
                  "PyTorch or an older one: " +
                  kSaveHint);
}

jit::Module load_module(const std::string& path) {
  try {
    return jit::load(path, c10::Device(c10::kCPU));
  } catch (const c10::Error& e) {
    explain_load_failure(path, e.what_without_backtrace());
  } catch (const std::exception& e) {
    explain_load_failure(path, e.what());
  }
}

}  // namespace

void load_op_library(const std::string& path) {
  // RTLD_GLOBAL: the library's ops register with LibTorch's dispatcher, which every later load
  // (and the interpreter) uses; the handle stays open for the process's lifetime.
  if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    const char* why = dlerror();
    throw Error(ExitCode::BadInput, "cannot load the op library " + path + " (" +
                                        first_line(why ? why : "unknown reason") +
                                        ") — give the path of a shared library that registers "
                                        "TorchScript ops");
  }
}

// What the TorchScript and .pt2 loaders ask to run on the graph they lifted (Note [Import
// pipeline]): the tracer's shape arithmetic on 0-dim tensors back to Python ints (Note [Int
// shapes] in passes/int_shapes.cpp), so every command starts from `x.size(2) // 16`.
const char* const kTorchScriptImportPipeline = "int-shapes";

std::unique_ptr<Graph> load_torchscript(
    const std::string& path, Diagnostics& diags,
    std::vector<std::pair<std::string, std::string>>* source_values) {
  try {
    jit::Module module = load_module(path);
    module.eval();
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
