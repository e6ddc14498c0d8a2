// Simulator: a discrete-event run of a lowered schedule under a cost model.
// Produces the same event stream a real executor does, plus summary metrics.
#pragma once

#include <vector>

#include "core/schedule/schedule.h"
#include "core/sim/cost_model.h"
#include "core/trace/trace_events.h"

namespace pipelab {

struct DeviceSimStats {
  int device = 0;
  double busy = 0;                 // time in compute ops
  double comm = 0;                 // time in communication ops
  double bubble_fraction = 0;      // 1 - busy / makespan
  MemoryBytes peak_bytes{};        // each category's peak
  int64_t peak_total_bytes = 0;    // peak of the sum (not the sum of peaks)
  int peak_inflight_microbatches = 0;  // forwards whose backward has not finished
  int weight_versions = 1;         // most weight versions alive at once
};

struct SimulationResult {
  Trace trace;                     // events (and memory samples) on the simulated clock
  double makespan = 0;
  double bubble_fraction = 0;      // 1 - sum(busy) / (devices x makespan)
  double bubble_fraction_theory = 0;  // the schedule's textbook formula (NaN if none)
  std::vector<DeviceSimStats> per_device;
  double microbatches_per_time = 0;   // throughput: micro-batches (all replicas) per unit time
};

// Throws std::invalid_argument if the schedule is not lowered or deadlocks.
SimulationResult simulate(const Schedule& lowered, const CostModel& cost);

}  // namespace pipelab
