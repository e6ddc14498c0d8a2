#include "core/sim/op_durations.h"

#include <algorithm>
#include <map>

namespace pipelab {

std::vector<double> own_durations(const Trace& trace) {
  const std::vector<TraceEvent>& events = trace.events;
  std::vector<double> seconds(events.size());
  // Per device, the communication intervals that can sit inside a compute op.
  std::map<int, std::vector<std::pair<double, double>>> nested;
  for (size_t i = 0; i < events.size(); ++i) {
    seconds[i] = events[i].t_end - events[i].t_begin;
    // Tensor-parallel collectives and all-to-alls run inside a compute op.
    const CommGroup group = events[i].op.group;
    if (is_collective(events[i].op.kind) && (group == CommGroup::TensorParallel || group == CommGroup::ExpertParallel))
      nested[events[i].device].push_back({events[i].t_begin, events[i].t_end});
  }
  for (auto& [device, intervals] : nested) std::sort(intervals.begin(), intervals.end());
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& event = events[i];
    if (!is_compute(event.op.kind)) continue;
    const auto found = nested.find(event.device);
    if (found == nested.end()) continue;
    const auto& intervals = found->second;
    auto inside = std::lower_bound(intervals.begin(), intervals.end(),
                                   std::make_pair(event.t_begin, event.t_begin));
    for (; inside != intervals.end() && inside->first < event.t_end; ++inside)
      if (inside->second <= event.t_end) seconds[i] -= inside->second - inside->first;
    seconds[i] = std::max(0.0, seconds[i]);
  }
  return seconds;
}

}  // namespace pipelab
