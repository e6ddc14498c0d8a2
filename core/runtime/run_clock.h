// RunClock: the one time base of a run's events, memory samples and step
// metrics: seconds of std::chrono::steady_clock since the run started. Before
// start() every reading is 0 (memory allocated while the run is being built
// shows at the very beginning of the curves).
#pragma once

#include <atomic>
#include <chrono>

namespace pipelab {

class RunClock {
 public:
  void start() {
    origin_ = std::chrono::steady_clock::now();
    started_.store(true, std::memory_order_release);
  }

  double now() const { return seconds_at(std::chrono::steady_clock::now()); }

  // When the run started, in seconds of steady_clock's own epoch (0 before
  // start()): what ranks of a multi-process run exchange to share one clock.
  double origin_seconds() const {
    if (!started_.load(std::memory_order_acquire)) return 0.0;
    return std::chrono::duration<double>(origin_.time_since_epoch()).count();
  }

  // The reading for an earlier or later instant of steady_clock, e.g. a GPU
  // event mapped onto the host clock (gpu/executor/event_timer.h): same time base as now().
  double seconds_at(std::chrono::steady_clock::time_point time) const {
    if (!started_.load(std::memory_order_acquire)) return 0.0;
    return std::chrono::duration<double>(time - origin_).count();
  }

 private:
  std::chrono::steady_clock::time_point origin_{};
  std::atomic<bool> started_{false};
};

}  // namespace pipelab
