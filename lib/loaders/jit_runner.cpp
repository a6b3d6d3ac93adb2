// Running the original TorchScript model through torch::jit (JIT headers stay in lib/loaders/).
#include "loaders/jit_runner.h"

#include "support/diag.h"

#include <torch/script.h>

#include <chrono>

namespace tt {

c10::IValue run_torchscript_file(const std::string& path, const std::vector<c10::IValue>& inputs,
                                 int repeat, const std::function<void(double)>& on_run) {
  torch::jit::Module m;
  try {
    m = torch::jit::load(path);
    m.eval();
  } catch (const std::exception& e) {
    throw Error(ExitCode::BadInput, "cannot load the TorchScript model to run it — re-export it");
  }
  c10::InferenceMode guard;
  c10::IValue out;
  for (int i = 0; i < std::max(repeat, 1); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    try {
      out = m.forward(inputs);
    } catch (const c10::Error& e) {
      std::string msg = e.what_without_backtrace();
      auto nl = msg.find('\n');
      if (nl != std::string::npos) msg = msg.substr(0, nl);
      throw Error(ExitCode::Usage, "the original model failed on the example inputs (" + msg +
                                       ") — check --input-shape (one per input, in order)");
    }
    auto t1 = std::chrono::steady_clock::now();
    if (on_run) on_run(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return out;
}

}  // namespace tt
