// PhaseTimer: logs how long one phase of a command took, at debug level (-vv).
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <string_view>

namespace tt {

// Note [Phase times]
// `tinytrace convert -vv` logs one "time: PHASE N ms" line per phase (loading the archive,
// lifting, the passes, each output), so a user with a slow model can see where the time goes
// without a profiler: scripts/bench_passes.sh prints the totals against the load floor, this
// says which phase to look at. The timer ends when it goes out of scope, or at stop().
class PhaseTimer {
 public:
  explicit PhaseTimer(std::string_view phase)
      : phase_(phase), start_(std::chrono::steady_clock::now()) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() { stop(); }

  void stop() {
    if (stopped_) return;
    stopped_ = true;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
                    .count();
    spdlog::debug("time: {} {:.0f} ms", phase_, ms);
  }

 private:
  std::string_view phase_;
  std::chrono::steady_clock::time_point start_;
  bool stopped_ = false;
};

}  // namespace tt
