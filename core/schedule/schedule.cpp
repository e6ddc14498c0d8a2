#include "core/schedule/schedule.h"

#include <cassert>

namespace pipelab {

int Schedule::device_of_stage(int stage, int replica, int shard, int context) const {
  assert(stage >= 0 && stage < stages());
  assert(replica >= 0 && replica < dp && shard >= 0 && shard < tp && context >= 0 && context < cp);
  const DeviceLayout grid = layout();
  return grid.device_of(replica, grid.rank_of_stage(stage), shard, context);
}

ParallelPlan Schedule::plan() const {
  ParallelPlan plan;
  plan.dp = dp;
  plan.tp = tp;
  plan.pp = pp;
  plan.microbatches = microbatches;
  plan.schedule = kind;
  plan.update = update;
  plan.recompute = recompute;
  plan.offload = offload;
  plan.chunks = chunks;
  plan.staleness = staleness;
  plan.ep = ep;
  plan.zero = zero;
  plan.cp = cp;
  return plan;
}

}  // namespace pipelab
