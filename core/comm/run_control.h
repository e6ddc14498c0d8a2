// RunControl: the flags a run's worker threads check between ops (pause, step,
// stop) and the bookkeeping of who is waiting, so the executor can tell a
// paused run from a running one.
//
// Positions count a worker's ops from the start of the run (over every window
// it runs), so "halt before op #p" is one number per worker.
//
//  - hold():      every worker halts before its next op (pause);
//  - hold_at(p):  worker w runs until its position reaches p[w], then halts
//                 (step: p comes from the step boundaries);
//  - release():   no more halting (resume);
//  - stop():      sets the stop flag and wakes every waiting worker, including
//                 those blocked in a channel receive or a rendezvous (they
//                 register a wake-up through add_stop_listener).
// A worker that waits for another (a receive, a collective, a rendezvous)
// marks itself idle with an IdleScope. The run counts as paused once a halt is
// asked for and every worker is halted, done, or idle where it may not go on:
// under pause() anywhere, under a step limit only past its limit (a worker
// idle before its limit is still on its way there).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace pipelab {

// Thrown inside a worker when the run is stopping, to unwind out of whatever it
// was doing (a receive, a collective inside a layer's forward). Deliberately
// not a std::exception: it is not an error.
struct RunStopped {};

class RunControl {
 public:
  explicit RunControl(int workers);

  // --- worker side ---
  // Blocks while the worker must halt before the op at `position`. Returns
  // false when the run is stopping.
  bool wait_for_turn(int worker, int64_t position);
  void worker_done(int worker);
  bool stopping() const { return stop_.load(std::memory_order_acquire); }
  // Throws RunStopped when the run is stopping.
  void throw_if_stopping() const {
    if (stopping()) throw RunStopped{};
  }

  // The message idle `worker` waits for has arrived: it counts as busy at
  // once, before its thread wakes (see TaggedMailbox::post).
  void message_arrived(int worker) { set_idle(worker, false); }

  // Marks worker `worker` idle while it waits on others.
  class IdleScope {
   public:
    IdleScope(RunControl& control, int worker) : control_(control), worker_(worker) {
      control_.set_idle(worker_, true);
    }
    ~IdleScope() { control_.set_idle(worker_, false); }
    IdleScope(const IdleScope&) = delete;
    IdleScope& operator=(const IdleScope&) = delete;

   private:
    RunControl& control_;
    const int worker_;
  };

  // Called by stop(); registered before the workers start (not thread-safe).
  void add_stop_listener(std::function<void()> listener);

  // --- controller side ---
  void hold();
  void hold_at(const std::vector<int64_t>& positions);
  void release();
  void stop();

  bool holding() const;   // a pause or a step limit is in force
  bool all_idle() const;  // every worker halted, idle or done
  int workers_done() const;

 private:
  bool must_halt_locked(int worker, int64_t position) const;
  void set_idle(int worker, bool idle);

  const int workers_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool paused_ = false;
  std::vector<int64_t> limits_;  // per worker; INT64_MAX: no limit
  // Per worker: the position it waits before inside wait_for_turn, or -1. A
  // waiting worker counts as halted only while it still must halt, so a
  // release shows as running at once, before the worker wakes.
  std::vector<int64_t> waiting_at_;
  std::vector<int64_t> running_at_;  // per worker: position of the op it runs
  std::vector<char> idle_;           // per worker: inside an IdleScope
  int done_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<std::function<void()>> stop_listeners_;
};

}  // namespace pipelab
