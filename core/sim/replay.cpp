#include "core/sim/replay.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "core/schedule/op_matching.h"
#include "core/sim/op_durations.h"

namespace pipelab {
MeasuredDurations::Key MeasuredDurations::key_of(const Op& op, int device) const {
  const int step = window_steps_ > 0 ? op.step % window_steps_ : op.step;
  return {device,   static_cast<int>(op.kind), op.stage, op.chunk, op.microbatch, step,
          op.layer, static_cast<int>(op.group)};
}

MeasuredDurations::MeasuredDurations(const Trace& measured, const Schedule& window)
    : window_steps_(std::max(1, window.steps)) {
  struct Sum {
    double seconds = 0;
    int count = 0;
  };
  std::map<Key, Sum> sums;
  const std::vector<double> own = own_durations(measured);
  for (size_t i = 0; i < measured.events.size(); ++i) {
    const TraceEvent& event = measured.events[i];
    Sum& sum = sums[key_of(event.op, event.device)];
    sum.seconds += own[i];
    ++sum.count;
  }
  for (const auto& [key, sum] : sums) seconds_[key] = sum.seconds / sum.count;

  // A collective's members share its length: the shortest wait-free one.
  std::map<Key, double> shortest;  // key with the device replaced by the group
  auto group_key = [&](const Key& key) {
    Key shared = key;
    const int device = std::get<0>(key);
    if (device >= window.device_count()) return shared;
    // Pulls wait on their data-parallel group, all-reduces on the group they name.
    const CommGroup named = static_cast<CommGroup>(std::get<7>(key));
    const CommGroup group = named == CommGroup::None ? CommGroup::DataParallel : named;
    std::get<0>(shared) = -1 - collective_group_of(window.layout(), group, device);
    return shared;
  };
  for (const auto& [key, seconds] : seconds_) {
    if (!op_kind_facts(static_cast<OpKind>(std::get<1>(key))).waits_for_group) continue;
    const Key shared = group_key(key);
    const auto found = shortest.find(shared);
    shortest[shared] = found == shortest.end() ? seconds : std::min(found->second, seconds);
  }
  for (auto& [key, seconds] : seconds_)
    if (op_kind_facts(static_cast<OpKind>(std::get<1>(key))).waits_for_group)
      seconds = shortest[group_key(key)];
}

std::optional<double> MeasuredDurations::lookup(const Op& op) const {
  const auto found = seconds_.find(key_of(op, op.device));
  if (found == seconds_.end()) return std::nullopt;
  return found->second;
}

SimulationResult replay_measured(const Schedule& window, const Trace& measured,
                                 const CostModel& fallback) {
  auto durations = std::make_shared<MeasuredDurations>(measured, window);
  const CostModel cost = CostModel::from_durations(
      fallback, [durations](const Op& op) { return durations->lookup(op); });
  return simulate(window, cost);
}

}  // namespace pipelab
