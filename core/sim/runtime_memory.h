// Runtime memory: what a GPU's software holds beside the model, in the
// simulator's "workspace" category from the start of a run. Real runs hold it
// whatever they train, and at scale it is gigabytes a device:
//
//   the CUDA context and the GEMM library's workspace (the device file's
//   runtime_memory_mib), plus NCCL's buffers: one set per communicator the
//   device takes part in, and one per peer of an all-to-all (the node file's
//   communicator_memory_mib).
//
// A device takes part in a communicator per group it belongs to, as
// Megatron-LM makes them: tensor-parallel (tp > 1), context-parallel
// (cp > 1, the ring), pipeline (pp > 1, sends to its neighbours), the
// gradients' data-parallel group (dp x cp > 1), and under expert parallelism
// the expert-parallel group (its all-to-all with ep - 1 peers) and the
// experts' own data-parallel group (dp x cp / ep > 1).
//
// CPU devices hold none (their files give none); unit-cost runs count none.
#pragma once

#include <cstdint>

#include "core/hardware/device_profile.h"
#include "core/plan/parallel_plan.h"
#include "core/schedule/schedule.h"

namespace pipelab {

struct DeviceCommunicators {
  int groups = 0;            // communicators a device takes part in
  int all_to_all_peers = 0;  // devices it exchanges with in an all-to-all
};

// The same for every device of a plan (its degrees; dp counts replicas).
DeviceCommunicators device_communicators(int tp, int cp, int pp, int dp, int ep);

// Bytes of runtime memory each device of the plan holds on `device`.
int64_t runtime_memory_bytes(const DeviceProfile& device, const DeviceCommunicators& communicators);
int64_t runtime_memory_bytes(const Schedule& schedule, const DeviceProfile& device);
int64_t runtime_memory_bytes(const ParallelPlan& plan, const DeviceProfile& device);

}  // namespace pipelab
