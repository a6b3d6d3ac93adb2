// A scope in which the global CPU generator starts from a fixed seed (Note [Random draws under
// --verify]).
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <cstdint>
#include <mutex>

namespace tt {

// Note [Random draws under --verify]
// A model that draws from the global generator (torch.randn(shape), x.normal_(), randn_like,
// dropout left in training mode) draws other numbers on every run, so --verify compared two
// different draws and blamed the conversion. Every engine run that --verify (and profile)
// compares therefore starts from kVerifySeed: the original through torch::jit
// (run_torchscript_file, record_torchscript_values), the interpreter (Interpreter::run) and the
// emitted NAME.pt. Their draws are made by the same ATen kernels in program order, so they are
// the same numbers. The generator's state before the scope comes back after it, so a caller's
// own draws (the Python API runs in the user's process) are not disturbed. Only the outermost
// scope of a thread seeds and restores: a run inside a run (the interpreter runs a module op's
// lowered graph with an Interpreter of its own) draws on from where the outer run is, as the
// original's module call does.
constexpr uint64_t kVerifySeed = 0;

class SeededGlobalRng {
 public:
  explicit SeededGlobalRng(uint64_t seed = kVerifySeed)
      : gen_(at::detail::getDefaultCPUGenerator()) {
    if (depth()++ > 0) return;
    std::lock_guard<std::mutex> lock(gen_.mutex());
    saved_ = gen_.get_state();
    gen_.set_current_seed(seed);
  }
  ~SeededGlobalRng() {
    if (--depth() > 0) return;
    std::lock_guard<std::mutex> lock(gen_.mutex());
    gen_.set_state(saved_);
  }
  SeededGlobalRng(const SeededGlobalRng&) = delete;
  SeededGlobalRng& operator=(const SeededGlobalRng&) = delete;

 private:
  static int& depth() {
    thread_local int d = 0;
    return d;
  }
  at::Generator gen_;
  at::Tensor saved_;
};

}  // namespace tt
