// Rendezvous: a point every worker of a run reaches (between two of its ops);
// the last to arrive runs an action while the others wait, then all go on.
// The CPU executor evaluates the model this way: at the step's boundary every
// device is between ops, so the weights are consistent and nobody writes them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "core/comm/run_control.h"

namespace pipelab {

class Rendezvous {
 public:
  // Registers a stop wake-up with `control` (before the workers start).
  Rendezvous(int workers, RunControl& control);

  // Every worker calls arrive() for the same sequence of rendezvous. Throws
  // RunStopped when the run stops while waiting; an exception from `action`
  // propagates to the worker that ran it.
  void arrive(int worker, const std::function<void()>& action);

 private:
  const int workers_;
  RunControl& control_;
  std::mutex mutex_;
  std::condition_variable released_;
  int arrived_ = 0;
  int64_t generation_ = 0;
};

}  // namespace pipelab
