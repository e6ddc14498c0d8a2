#include "core/comm/run_control.h"

#include <cassert>
#include <limits>

namespace pipelab {

namespace {
constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
}

RunControl::RunControl(int workers)
    : workers_(workers),
      limits_(workers, kNoLimit),
      waiting_at_(workers, -1),
      running_at_(workers, 0),
      idle_(workers, 0) {}

bool RunControl::must_halt_locked(int worker, int64_t position) const {
  return paused_ || position >= limits_[worker];
}

bool RunControl::wait_for_turn(int worker, int64_t position) {
  assert(worker >= 0 && worker < workers_);
  std::unique_lock<std::mutex> lock(mutex_);
  if (!stopping() && must_halt_locked(worker, position)) {
    waiting_at_[worker] = position;
    changed_.wait(lock, [&] { return stopping() || !must_halt_locked(worker, position); });
    waiting_at_[worker] = -1;
  }
  running_at_[worker] = position;
  return !stopping();
}

void RunControl::worker_done(int worker) {
  (void)worker;
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
}

void RunControl::set_idle(int worker, bool idle) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_[worker] = idle;
}

void RunControl::add_stop_listener(std::function<void()> listener) {
  stop_listeners_.push_back(std::move(listener));
}

void RunControl::hold() {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = true;
}

void RunControl::hold_at(const std::vector<int64_t>& positions) {
  assert(static_cast<int>(positions.size()) == workers_);
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = false;
  limits_ = positions;
  changed_.notify_all();
}

void RunControl::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = false;
  limits_.assign(workers_, kNoLimit);
  changed_.notify_all();
}

void RunControl::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
    changed_.notify_all();
  }
  // Outside our lock: listeners take their own (channel, rendezvous) locks.
  for (const auto& listener : stop_listeners_) listener();
}

bool RunControl::holding() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (paused_) return true;
  for (int64_t limit : limits_)
    if (limit != kNoLimit) return true;
  return false;
}

bool RunControl::all_idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int settled = done_;
  for (int worker = 0; worker < workers_; ++worker) {
    if (waiting_at_[worker] >= 0 && must_halt_locked(worker, waiting_at_[worker]))
      ++settled;
    else if (idle_[worker] && must_halt_locked(worker, running_at_[worker]))
      ++settled;
  }
  return settled >= workers_;
}

int RunControl::workers_done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

}  // namespace pipelab
