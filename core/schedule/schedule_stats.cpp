#include "core/schedule/schedule_stats.h"

#include <algorithm>
#include <map>
#include <vector>

namespace pipelab {

int peak_inflight_microbatches(const Schedule& schedule, int device, InflightUntil until) {
  const auto ends_inflight =
      until == InflightUntil::LastBackward ? computes_weight_gradient : computes_input_gradient;
  int inflight = 0;
  int peak = 0;
  for (const Op& op : schedule.devices[device]) {
    if (op.kind == OpKind::Forward) peak = std::max(peak, ++inflight);
    if (ends_inflight(op.kind)) --inflight;
  }
  return peak;
}

int forwards_before_first_backward(const Schedule& schedule, int device) {
  int forwards = 0;
  for (const Op& op : schedule.devices[device]) {
    if (computes_input_gradient(op.kind)) break;
    if (op.kind == OpKind::Forward) ++forwards;
  }
  return forwards;
}

int peak_live_weight_versions(const Schedule& schedule, int device, int stage) {
  const int m = schedule.microbatches;
  // The version each in-flight micro-batch's F read, by step * m + micro-batch.
  std::vector<int> forward_version(static_cast<size_t>(schedule.steps) * m, -1);
  std::map<int, int> inflight_per_version;
  int newest = 0;
  int peak = 1;
  for (const Op& op : schedule.devices[device]) {
    if (op.stage != stage) continue;
    auto key = [&] { return static_cast<size_t>(op.step) * m + op.microbatch; };
    switch (op.kind) {
      case OpKind::Forward:
        forward_version[key()] = op.weight_version;
        ++inflight_per_version[op.weight_version];
        newest = std::max(newest, op.weight_version);
        break;
      case OpKind::Backward:
      case OpKind::BackwardWeight: {
        auto it = inflight_per_version.find(forward_version[key()]);
        if (it != inflight_per_version.end() && --it->second == 0) inflight_per_version.erase(it);
        break;
      }
      case OpKind::Update:
      case OpKind::PullWeights:
        newest = std::max(newest, op.weight_version);
        break;
      default:
        break;
    }
    const int live = static_cast<int>(inflight_per_version.size()) +
                     (inflight_per_version.count(newest) ? 0 : 1);
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace pipelab
