// The statistics of a measured run (step time, throughput, bubble, per device
// utilisation and peak memory), computed once here for the statistics panel,
// the run comparison and anything else that sums a run up.
//
// Warm-up: the first training step pays for allocations, page faults and cold
// caches, so it is left out whenever a later step finished. Statistics then
// cover the steps after it and, for the timeline's numbers (utilisation,
// memory), the time after the warm-up step ended. A run of one step has only
// warm-up; its statistics include it and say so (includes_warmup).
#pragma once

#include <cstdint>
#include <vector>

#include "core/trace/trace_events.h"

namespace pipelab {

// Training steps counted as warm-up at the start of a run.
inline constexpr int kWarmupSteps = 1;

// When the warm-up that the statistics leave out ended: the first step's t_end
// once a later step finished; NaN before (timelines mark [0, this time]).
double warmup_end_time(const Trace& trace);

struct RunStatistics {
  int steps_counted = 0;         // steps the step time and bubble are averaged over
  bool includes_warmup = false;  // too few steps to leave warm-up out
  double step_time_s = 0;        // mean over the counted steps (NaN without steps)
  double samples_per_s = 0;      // samples of the counted steps / their time
  double bubble_fraction = 0;    // mean of the counted steps' measured bubbles,
                                 // else read off the counted events (bubbles.h)
  double final_loss = 0;         // the last finite training loss (NaN without one)
  // Per device (device_count entries): 1 - bubble fraction over the counted
  // events, and the highest total memory from the warm-up's end on (the level
  // the device carried into that window counts).
  std::vector<double> utilisation_per_device;
  std::vector<int64_t> peak_bytes_per_device;
};

RunStatistics run_statistics(const Trace& trace);

}  // namespace pipelab
