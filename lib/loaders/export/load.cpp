// The torch.export loader's entry points (export.h, loader.h): the archive as a module
// (builder.h), lifted by the TorchScript lifter.
#include "loaders/export.h"

#include "loaders/export/builder.h"
#include "loaders/loader.h"

namespace tt {

namespace jit = torch::jit;

torch::jit::Module export_to_module(const std::string& path, Diagnostics* diags,
                                    std::map<std::string, ModuleInfo>* modules) {
  try {
    pt2::Builder builder(path, diags);
    jit::Module m = builder.run();
    if (modules) *modules = builder.module_table();
    return m;
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(ExitCode::Unsupported,
                "cannot read the exported program: " + first_line(e.what_without_backtrace()) +
                    " — please report this with the model");
  } catch (const std::exception& e) {
    throw Error(ExitCode::Unsupported, "cannot read the exported program: " + first_line(e.what()) +
                                           " — please report this with the model");
  }
}

std::unique_ptr<Graph> load_export(
    const std::string& path, Diagnostics& diags,
    std::vector<std::pair<std::string, std::string>>* source_values) {
  std::map<std::string, ModuleInfo> modules;
  jit::Module module = export_to_module(path, &diags, &modules);
  try {
    std::unique_ptr<Graph> g = lift_jit_module(module, diags, source_values);
    g->modules() = std::move(modules);  // the archive's classes, not the rebuilt module's
    return g;
  } catch (const Error&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(ExitCode::Unsupported,
                "cannot lift the exported program: " + first_line(e.what_without_backtrace()) +
                    " — please report this with the model");
  } catch (const std::exception& e) {
    throw Error(ExitCode::Unsupported, "cannot lift the exported program: " + first_line(e.what()) +
                                           " — please report this with the model");
  }
}

}  // namespace tt
