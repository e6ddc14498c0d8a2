// GPipe's overhead breakdown (Huang et al., "GPipe", 2019, section 5): where
// each device's time goes, read off a trace (simulated or measured alike), as
// shares of the run's window that sum to 1:
//
//   compute         F, B, BI, BW and U
//   recomputation   RECOMPUTE: the forwards run again before their backwards
//   load imbalance  idle while the busiest device still computes: the busiest
//                   device's busy time minus this one's (0 on balanced stages)
//   bubble          the rest of the idle time: the window minus the busiest
//                   device's busy time, what the pipeline's fill and drain
//                   leave even on the busiest device
//
// Busy and idle follow bubbles.h (communication is idle time, the window is
// the whole run), so on balanced GPipe stages with free communication the
// bubble share is the formula's (p-1)/(m+p-1).
#pragma once

#include <vector>

#include "core/trace/trace_events.h"

namespace pipelab {

struct OverheadShares {
  int device = 0;
  double compute = 0;
  double recompute = 0;
  double load_imbalance = 0;
  double bubble = 0;
};

// One entry per device (device_count(trace) entries, in device order); empty
// for a trace without events or with a zero-length window.
std::vector<OverheadShares> overhead_breakdown(const Trace& trace);

}  // namespace pipelab
