#include "core/comm/rendezvous.h"

namespace pipelab {

Rendezvous::Rendezvous(int workers, RunControl& control) : workers_(workers), control_(control) {
  control_.add_stop_listener([this] {
    std::lock_guard<std::mutex> lock(mutex_);
    released_.notify_all();
  });
}

void Rendezvous::arrive(int worker, const std::function<void()>& action) {
  std::unique_lock<std::mutex> lock(mutex_);
  control_.throw_if_stopping();
  if (++arrived_ == workers_) {
    // Everyone else waits on this lock's condition; the action runs alone.
    arrived_ = 0;
    action();
    ++generation_;
    released_.notify_all();
    return;
  }
  const int64_t generation = generation_;
  RunControl::IdleScope idle(control_, worker);
  released_.wait(lock, [&] { return generation_ != generation || control_.stopping(); });
  if (generation_ == generation) throw RunStopped{};
}

}  // namespace pipelab
