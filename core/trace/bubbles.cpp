#include "core/trace/bubbles.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace pipelab {

namespace {

struct Interval {
  double begin = 0;
  double end = 0;
};

// [first event's start, last event's end] over every event of every device.
Interval run_window(const Trace& trace) {
  assert(!trace.events.empty());
  Interval window{trace.events.front().t_begin, trace.events.front().t_end};
  for (const TraceEvent& event : trace.events) {
    window.begin = std::min(window.begin, event.t_begin);
    window.end = std::max(window.end, event.t_end);
  }
  return window;
}

std::vector<std::vector<Interval>> compute_intervals_by_device(const Trace& trace, int devices) {
  std::vector<std::vector<Interval>> intervals(static_cast<size_t>(devices));
  for (const TraceEvent& event : trace.events) {
    if (!is_compute(event.op.kind)) continue;
    assert(event.device >= 0 && event.device < devices);
    intervals[static_cast<size_t>(event.device)].push_back({event.t_begin, event.t_end});
  }
  for (std::vector<Interval>& list : intervals) {
    std::sort(list.begin(), list.end(),
              [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  }
  return intervals;
}

}  // namespace

std::vector<BubbleSlice> find_bubbles(const Trace& trace, double min_duration) {
  std::vector<BubbleSlice> bubbles;
  if (trace.events.empty()) return bubbles;
  const Interval window = run_window(trace);
  const int devices = device_count(trace);
  const auto intervals = compute_intervals_by_device(trace, devices);

  auto add_gap = [&](int device, double begin, double end) {
    const double length = end - begin;
    if (length > 0 && length >= min_duration) bubbles.push_back({device, begin, end});
  };
  for (int device = 0; device < devices; ++device) {
    // `covered_until` is the end of the compute seen so far; anything between it
    // and the next op's start is idle.
    double covered_until = window.begin;
    for (const Interval& op : intervals[static_cast<size_t>(device)]) {
      add_gap(device, covered_until, op.begin);
      covered_until = std::max(covered_until, op.end);
    }
    add_gap(device, covered_until, window.end);
  }
  return bubbles;
}

std::vector<double> bubble_fraction_per_device(const Trace& trace) {
  const int devices = device_count(trace);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (trace.events.empty()) return std::vector<double>(static_cast<size_t>(devices), nan);
  const Interval window = run_window(trace);
  const double span = window.end - window.begin;
  if (!(span > 0)) return std::vector<double>(static_cast<size_t>(devices), nan);

  // Idle time is exactly the bubbles' total, so busy = span - idle counts
  // overlapping compute once.
  std::vector<double> idle(static_cast<size_t>(devices), 0.0);
  for (const BubbleSlice& bubble : find_bubbles(trace)) {
    idle[static_cast<size_t>(bubble.device)] += bubble.t_end - bubble.t_begin;
  }
  std::vector<double> fractions(static_cast<size_t>(devices));
  for (int device = 0; device < devices; ++device) {
    fractions[static_cast<size_t>(device)] = idle[static_cast<size_t>(device)] / span;
  }
  return fractions;
}

double bubble_fraction(const Trace& trace) {
  const std::vector<double> per_device = bubble_fraction_per_device(trace);
  if (per_device.empty()) return std::numeric_limits<double>::quiet_NaN();
  // 1 - sum(busy) / (devices x span) is the mean of the per-device fractions.
  double sum = 0;
  for (double fraction : per_device) sum += fraction;
  return sum / static_cast<double>(per_device.size());
}

}  // namespace pipelab
