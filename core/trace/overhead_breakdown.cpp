#include "core/trace/overhead_breakdown.h"

#include <algorithm>
#include <cmath>

#include "core/trace/bubbles.h"

namespace pipelab {

std::vector<OverheadShares> overhead_breakdown(const Trace& trace) {
  const std::vector<double> idle = bubble_fraction_per_device(trace);
  if (idle.empty() || !std::isfinite(idle.front())) return {};

  // Shares of the window: busy is 1 - idle; one device's compute ops never
  // overlap, so its recomputation share is their summed length over the window.
  double first = trace.events.front().t_begin;
  double last = trace.events.front().t_end;
  for (const TraceEvent& event : trace.events) {
    first = std::min(first, event.t_begin);
    last = std::max(last, event.t_end);
  }
  const double span = last - first;
  std::vector<double> recompute(idle.size(), 0.0);
  for (const TraceEvent& event : trace.events)
    if (event.op.kind == OpKind::Recompute)
      recompute[static_cast<size_t>(event.device)] += (event.t_end - event.t_begin) / span;

  double busiest = 0;
  for (double device_idle : idle) busiest = std::max(busiest, 1.0 - device_idle);
  std::vector<OverheadShares> shares(idle.size());
  for (size_t device = 0; device < idle.size(); ++device) {
    const double busy = 1.0 - idle[device];
    OverheadShares& share = shares[device];
    share.device = static_cast<int>(device);
    share.recompute = std::min(recompute[device], busy);
    share.compute = busy - share.recompute;
    share.load_imbalance = busiest - busy;
    share.bubble = 1.0 - busiest;
  }
  return shares;
}

}  // namespace pipelab
