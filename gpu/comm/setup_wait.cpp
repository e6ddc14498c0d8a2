#include "gpu/comm/setup_wait.h"

#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/comm/run_control.h"

namespace pipelab::gpu {
namespace {

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

}  // namespace

void SetupWait::until_ready(const std::function<bool()>& ready, const std::string& step) const {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  for (;;) {
    if (ready()) return;
    if (stopping && stopping()) throw RunStopped{};
    if (timeout && Clock::now() - begin > *timeout)
      throw std::runtime_error("rank " + std::to_string(rank) + ": " + step +
                               " did not finish within " +
                               seconds_text(timeout->count()) +
                               " s: another rank died, failed to build or never came "
                               "(see its message)");
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace pipelab::gpu
