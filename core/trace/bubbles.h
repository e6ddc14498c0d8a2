// Bubbles: the idle time of each device, read off a trace (simulated or
// measured alike), so predicted and measured runs are judged by one rule.
//
// A device is busy while it runs a compute op (F, B, BI, BW, U, Recompute; see
// is_compute). Communication does not count as busy: a device waiting on a
// send or an all-reduce is idle as far as the math is concerned. The window is
// the whole run, [first event's start, last event's end] over all devices, so a
// device that starts late or finishes early has bubbles at the ends too.
#pragma once

#include <vector>

#include "core/trace/trace_events.h"

namespace pipelab {

// One idle stretch of one device.
struct BubbleSlice {
  int device = 0;
  double t_begin = 0;
  double t_end = 0;
};

// Every gap between compute ops, per device in device order, then in time
// order. Gaps shorter than min_duration are left out (to hide timer jitter in
// measured traces); empty gaps never appear. Overlapping compute ops are
// merged first, so the slices never overlap a compute op.
std::vector<BubbleSlice> find_bubbles(const Trace& trace, double min_duration = 0);

// Per device (indexed by device id, device_count(trace) entries):
// 1 - busy / span, where busy is the time covered by compute ops and span the
// run's window. Same definition as the simulator's DeviceSimStats: when compute
// ops do not overlap (always true of one device's compute stream) busy is the
// sum of their durations. NaN for every device when the span is empty.
std::vector<double> bubble_fraction_per_device(const Trace& trace);

// 1 - sum(busy) / (devices x span): the simulator's SimulationResult formula.
// NaN for a trace without events (or with a zero-length span).
double bubble_fraction(const Trace& trace);

}  // namespace pipelab
