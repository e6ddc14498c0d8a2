#include "core/sim/runtime_memory.h"

namespace pipelab {

DeviceCommunicators device_communicators(int tp, int cp, int pp, int dp, int ep) {
  DeviceCommunicators communicators;
  const int gradient_group = dp * cp;
  for (const int members : {tp, cp, pp, gradient_group})
    if (members > 1) ++communicators.groups;
  if (ep > 1) {
    ++communicators.groups;
    communicators.all_to_all_peers = ep - 1;
    if (gradient_group / ep > 1) ++communicators.groups;  // the experts' data-parallel group
  }
  return communicators;
}

int64_t runtime_memory_bytes(const DeviceProfile& device,
                             const DeviceCommunicators& communicators) {
  return device.runtime_bytes + communicators.groups * device.collective_group_bytes +
         communicators.all_to_all_peers * device.all_to_all_peer_bytes;
}

int64_t runtime_memory_bytes(const Schedule& schedule, const DeviceProfile& device) {
  return runtime_memory_bytes(device, device_communicators(schedule.tp, schedule.cp, schedule.pp,
                                                           schedule.dp, schedule.ep));
}

int64_t runtime_memory_bytes(const ParallelPlan& plan, const DeviceProfile& device) {
  return runtime_memory_bytes(device,
                              device_communicators(plan.tp, plan.cp, plan.pp, plan.dp, plan.ep));
}

}  // namespace pipelab
