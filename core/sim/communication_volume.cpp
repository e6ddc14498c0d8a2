#include "core/sim/communication_volume.h"

#include <algorithm>

namespace pipelab {
namespace {

int group_size(const Schedule& schedule, CommGroup group) {
  switch (group) {
    case CommGroup::DataParallel: return schedule.data_parallel_size();
    case CommGroup::ContextParallel: return schedule.cp;
    case CommGroup::TensorParallel: return schedule.tp;
    case CommGroup::ExpertParallel: return schedule.ep;
    default: return 1;
  }
}

// What one member sends of a collective over n members with a buffer of `bytes`.
double sent_by_member(OpKind kind, double bytes, int n) {
  if (n <= 1) return 0;
  const double share = (n - 1.0) / n * bytes;
  return kind == OpKind::AllReduce ? 2 * share : share;
}

}  // namespace

CommunicationVolume communication_per_step(const Schedule& lowered, int device) {
  CommunicationVolume volume;
  if (device < 0 || device >= lowered.device_count()) return volume;
  for (const Op& op : lowered.devices[device]) {
    const double bytes = static_cast<double>(op.bytes);
    if (op.kind == OpKind::SendActivation || op.kind == OpKind::SendGradient) {
      volume.pipeline += bytes;
      continue;
    }
    if (!is_collective(op.kind)) continue;
    const double sent = sent_by_member(op.kind, bytes, group_size(lowered, op.group));
    if (op.group == CommGroup::DataParallel)
      volume.data_parallel += sent;
    else if (op.group == CommGroup::TensorParallel)
      volume.tensor_parallel += sent;
    else if (op.group == CommGroup::ExpertParallel)
      volume.expert_parallel += sent;
    else if (op.group == CommGroup::ContextParallel)
      volume.context_parallel += sent;
  }
  const double steps = std::max(1, lowered.steps);
  volume.data_parallel /= steps;
  volume.tensor_parallel /= steps;
  volume.expert_parallel /= steps;
  volume.context_parallel /= steps;
  volume.pipeline /= steps;
  return volume;
}

}  // namespace pipelab
