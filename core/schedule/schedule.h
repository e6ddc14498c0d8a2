// Schedule: the plain value every interpreter reads. For each device, the
// ordered ops of one training step (synchronous schedules) or of a steady-state
// window of several steps (asynchronous ones).
#pragma once

#include <string>
#include <vector>

#include "core/plan/parallel_plan.h"
#include "core/schedule/op.h"

namespace pipelab {

struct Schedule {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int pp = 1;             // pipeline devices
  int dp = 1;             // data-parallel replicas
  int tp = 1;             // tensor-parallel shards
  int chunks = 1;         // virtual stages per pipeline device
  int microbatches = 1;   // per step and replica
  int steps = 1;          // training steps the window covers
  UpdateMode update = UpdateMode::Sync;
  bool recompute = false;
  OffloadMode offload = OffloadMode::None;
  // Async data parallel: the PullWeights of step t waits for the PushGradient of
  // step t - staleness of every replica (see lowering.h).
  int staleness = 2;
  int ep = 1;             // expert-parallel group size (divides dp)
  int zero = 0;           // ZeRO stage (parallel_plan.h)
  bool reshard_after_forward = true;  // zero 3 (parallel_plan.h)
  int cp = 1;             // context-parallel ranks per replica and stage
  bool lowered = false;   // true once sends, receives, all-reduces and updates are in
  std::vector<std::vector<Op>> devices;  // devices[d] = device d's ops, in order
  // Only replica 0's devices have programs (the others are empty): a
  // synchronous run's replicas are alike, so the split search lowers and
  // simulates one (SimulationOptions::first_replica_only).
  bool first_replica_only = false;

  int stages() const { return pp * chunks; }
  int device_count() const { return static_cast<int>(devices.size()); }
  // True when replicas exchange gradients through a parameter server
  // (PushGradient / PullWeights) instead of an all-reduce and U.
  bool async_data_parallel() const { return update == UpdateMode::Async && dp > 1; }
  // Devices that hold the same weights and sum their gradients (dp x cp).
  int data_parallel_size() const { return dp * cp; }
  DeviceLayout layout() const { return {dp, tp, pp, uses_v_placement(kind), ep, cp}; }
  // The device that runs pipeline stage `stage` in the given replica, shard
  // and context rank.
  int device_of_stage(int stage, int replica = 0, int shard = 0, int context = 0) const;
  ParallelPlan plan() const;  // the dp/tp/pp/chunks/... fields as a plan
};

}  // namespace pipelab
