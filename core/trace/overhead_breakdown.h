// GPipe's overhead breakdown (Huang et al., "GPipe", 2019, section 5): where
// each device's time goes, read off a trace (simulated or measured alike), as
// shares of the run's window that sum to 1:
//
//   compute         F, B, BI, BW and U, outside any collective
//   recomputation   RECOMPUTE: the forwards run again before their backwards
//   collectives     all-reduce, reduce-scatter, all-gather and all-to-all in
//                   flight on the device (tensor, sequence, data and expert
//                   parallelism's communication), whether the simulator
//                   lists it after its compute op or a measured op ran it
//                   inside its own (the CPU and CUDA executors run tensor
//                   parallelism's collectives inside F and B)
//   load imbalance  the rest of the idle time while the busiest device still
//                   computes or communicates: its busy time minus this one's
//                   (0 on balanced stages)
//   bubble          the rest: the window minus the busiest device's busy time,
//                   what the pipeline's fill and drain leave even there
//
// The window is the whole run, as in bubbles.h. Statistics' bubble fraction
// (bubbles.h) counts communication as idle; here the collectives are taken
// out of it, so a tensor-parallel split shows its communication instead of a
// bubble the pipeline formula does not predict. Point-to-point messages stay
// idle time: a receive's event covers its wait for the sender, which is the
// pipeline's bubble. On balanced GPipe stages with free communication the
// bubble share is the formula's (p-1)/(m+p-1).
#pragma once

#include <vector>

#include "core/trace/trace_events.h"

namespace pipelab {

struct OverheadShares {
  int device = 0;
  double compute = 0;
  double recompute = 0;
  double collectives = 0;
  double load_imbalance = 0;
  double bubble = 0;
};

// One entry per device (device_count(trace) entries, in device order); empty
// for a trace without events or with a zero-length window.
std::vector<OverheadShares> overhead_breakdown(const Trace& trace);

}  // namespace pipelab
