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
    // A failing op inside a scripted/traced forward surfaces as torch::jit::JITException (a
    // std::runtime_error whose first line is only "The following operation failed..."), an
    // ATen check as c10::Error: both mean the inputs do not fit.
    auto bad_inputs = [](std::string msg) {
      auto nl = msg.find('\n');
      if (nl != std::string::npos) msg = msg.substr(0, nl);
      return Error(ExitCode::Usage, "the original model failed on the example inputs (" + msg +
                                        ") — check --input-shape (one per input, in order)");
    };
    try {
      out = m.forward(inputs);
    } catch (const c10::Error& e) {
      throw bad_inputs(e.what_without_backtrace());
    } catch (const std::exception& e) {
      // The JIT's message starts with its own header; the ATen error is the last line.
      std::string msg = e.what();
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      auto last = msg.rfind('\n');
      throw bad_inputs(last == std::string::npos ? msg : msg.substr(last + 1));
    }
    auto t1 = std::chrono::steady_clock::now();
    if (on_run) on_run(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return out;
}

}  // namespace tt
