// Helpers shared by the runtime tests: small experiments that train in
// milliseconds, and running one to the end while collecting its event stream.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/trace/event_sink.h"

namespace pipelab::testing {

// 2-16-16-16-3 MLP (relu) on 3 noisy Gaussian blobs (600 samples, 480 train),
// batch 32, 20 steps of SGD with momentum, one device.
Experiment small_experiment();

// The same experiment with a parallel plan.
Experiment with_plan(Experiment experiment, ScheduleKind schedule, int pp, int microbatches,
                     int dp = 1, int tp = 1, int chunks = 1);

struct RunOutput {
  RunState state = RunState::Ready;
  std::string error;
  Trace trace;  // measured events, memory samples and step metrics
  std::vector<std::string> messages;
  std::vector<double> losses() const;  // per step
};

// Builds, starts and waits for the run; drains everything it reported.
RunOutput run_experiment(const Experiment& experiment, const ExecutorOptions& options = {});

// Polls until the executor reports Paused, or has ended (Finished, Stopped,
// Failed); fails the test after 10 s.
void wait_for_pause(const Executor& executor);

// Drains `sink` into `output`.
void drain_into(EventSink& sink, RunOutput& output);

}  // namespace pipelab::testing
