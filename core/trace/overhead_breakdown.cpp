#include "core/trace/overhead_breakdown.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace pipelab {
namespace {

struct Interval {
  double begin = 0;
  double end = 0;
};

// The length of the union of `intervals` (overlaps counted once).
double covered(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  double length = 0;
  double covered_until = -std::numeric_limits<double>::infinity();
  for (const Interval& interval : intervals) {
    const double from = std::max(covered_until, interval.begin);
    if (interval.end > from) length += interval.end - from;
    covered_until = std::max(covered_until, interval.end);
  }
  return length;
}

std::vector<Interval> joined(std::vector<Interval> a, const std::vector<Interval>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// One device's ops by what the breakdown makes of them.
struct DeviceOps {
  std::vector<Interval> compute;      // every compute op, recomputation included
  std::vector<Interval> recompute;
  std::vector<Interval> collectives;
};

}  // namespace

std::vector<OverheadShares> overhead_breakdown(const Trace& trace) {
  if (trace.events.empty()) return {};
  double first = trace.events.front().t_begin;
  double last = trace.events.front().t_end;
  for (const TraceEvent& event : trace.events) {
    first = std::min(first, event.t_begin);
    last = std::max(last, event.t_end);
  }
  const double span = last - first;
  if (!(span > 0)) return {};

  std::vector<DeviceOps> ops(static_cast<size_t>(device_count(trace)));
  for (const TraceEvent& event : trace.events) {
    assert(event.device >= 0 && event.device < static_cast<int>(ops.size()));
    DeviceOps& device = ops[static_cast<size_t>(event.device)];
    const Interval interval{event.t_begin, event.t_end};
    if (is_compute(event.op.kind)) device.compute.push_back(interval);
    if (event.op.kind == OpKind::Recompute) device.recompute.push_back(interval);
    if (is_collective(event.op.kind)) device.collectives.push_back(interval);
  }

  // Shares of the window. Busy: computing or in a collective; a collective
  // inside a compute op counts as the collective's.
  std::vector<OverheadShares> shares(ops.size());
  std::vector<double> busy(ops.size());
  double busiest = 0;
  for (size_t d = 0; d < ops.size(); ++d) {
    const DeviceOps& device = ops[d];
    const double collectives = covered(device.collectives);
    busy[d] = covered(joined(device.compute, device.collectives)) / span;
    busiest = std::max(busiest, busy[d]);
    OverheadShares& share = shares[d];
    share.device = static_cast<int>(d);
    share.collectives = collectives / span;
    share.recompute = (covered(joined(device.recompute, device.collectives)) - collectives) / span;
    share.compute = std::max(0.0, busy[d] - share.collectives - share.recompute);
  }
  for (size_t d = 0; d < ops.size(); ++d) {
    shares[d].load_imbalance = busiest - busy[d];
    shares[d].bubble = 1.0 - busiest;
  }
  return shares;
}

}  // namespace pipelab
