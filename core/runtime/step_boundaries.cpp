#include "core/runtime/step_boundaries.h"

#include <algorithm>
#include <map>

#include "core/schedule/op_matching.h"

namespace pipelab {

StepBoundaries::StepBoundaries(const Schedule& window) : window_(window), steps_(window.steps) {
  const ScheduleMatching matching = match_schedule_ops(window);
  first_op_ = matching.first_op;
  const int devices = window.device_count();
  waits_for_.assign(matching.op_count(), {});

  std::map<int, std::vector<int>> collective_members;  // instance -> its ops
  std::map<int, std::vector<int>> slot_pushes;         // push slot -> its pushes
  for (int d = 0; d < devices; ++d) {
    const std::vector<Op>& ops = window.devices[d];
    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
      const int global = first_op_[d] + i;
      const OpKind kind = ops[i].kind;
      if (is_send(kind))
        waits_for_[matching.partner[global]].push_back(global);  // the receive waits for it
      else if (is_collective(kind))
        collective_members[matching.partner[global]].push_back(global);
      else if (kind == OpKind::PushGradient)
        slot_pushes[matching.partner[global]].push_back(global);
    }
  }
  for (const auto& [instance, members] : collective_members)
    for (int member : members) waits_for_[member] = members;
  for (int d = 0; d < devices; ++d) {
    const std::vector<Op>& ops = window.devices[d];
    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
      const int global = first_op_[d] + i;
      if (ops[i].kind == OpKind::PullWeights && matching.partner[global] >= 0)
        waits_for_[global] = slot_pushes[matching.partner[global]];
    }
  }

  last_op_.assign(devices, std::vector<int>(steps_, -1));
  for (int d = 0; d < devices; ++d) {
    const std::vector<Op>& ops = window.devices[d];
    for (int i = 0; i < static_cast<int>(ops.size()); ++i)
      if (ops[i].step < steps_) last_op_[d][ops[i].step] = i;
  }
}

std::vector<int> StepBoundaries::after_step(int step) const {
  const int devices = window_.device_count();
  std::vector<int> limit(devices, 0);
  for (int d = 0; d < devices; ++d)
    for (int s = 0; s <= step && s < steps_; ++s) limit[d] = std::max(limit[d], last_op_[d][s] + 1);

  // Grow the prefixes until nothing inside waits for an op outside.
  std::vector<int> scanned(devices, 0);
  std::vector<int> pending;
  for (int d = 0; d < devices; ++d) pending.push_back(d);
  while (!pending.empty()) {
    const int d = pending.back();
    pending.pop_back();
    for (; scanned[d] < limit[d]; ++scanned[d]) {
      for (int needed : waits_for_[first_op_[d] + scanned[d]]) {
        const int owner = static_cast<int>(
            std::upper_bound(first_op_.begin(), first_op_.end(), needed) - first_op_.begin() - 1);
        const int index = needed - first_op_[owner];
        if (limit[owner] <= index) {
          limit[owner] = index + 1;
          pending.push_back(owner);
        }
      }
    }
  }
  return limit;
}

}  // namespace pipelab
