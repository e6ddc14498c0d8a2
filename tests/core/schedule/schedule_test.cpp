#include "core/schedule/schedule.h"

#include <gtest/gtest.h>

#include "core/schedule/generators.h"

namespace pipelab {
namespace {

TEST(Schedule, DeviceOfStageFollowsThePlanLayout) {
  Schedule schedule;
  schedule.pp = 3;
  schedule.dp = 2;
  schedule.tp = 2;
  schedule.chunks = 2;
  const ParallelPlan plan = schedule.plan();
  for (int stage = 0; stage < schedule.stages(); ++stage)
    for (int replica = 0; replica < 2; ++replica)
      for (int shard = 0; shard < 2; ++shard) {
        const int device = schedule.device_of_stage(stage, replica, shard);
        const DeviceCoord coord = device_coord(plan, device);
        EXPECT_EQ(coord.pipeline_rank, stage % 3);  // stage s on rank s % pp
        EXPECT_EQ(coord.replica, replica);
        EXPECT_EQ(coord.shard, shard);
      }
}

TEST(Schedule, PlanCarriesTheScheduleFields) {
  Schedule schedule;
  schedule.kind = ScheduleKind::Interleaved1F1B;
  schedule.pp = 4;
  schedule.dp = 3;
  schedule.tp = 2;
  schedule.chunks = 2;
  schedule.microbatches = 8;
  schedule.update = UpdateMode::Async;
  schedule.recompute = true;
  schedule.staleness = 5;
  const ParallelPlan plan = schedule.plan();
  EXPECT_EQ(plan.schedule, ScheduleKind::Interleaved1F1B);
  EXPECT_EQ(plan.pp, 4);
  EXPECT_EQ(plan.dp, 3);
  EXPECT_EQ(plan.tp, 2);
  EXPECT_EQ(plan.chunks, 2);
  EXPECT_EQ(plan.microbatches, 8);
  EXPECT_EQ(plan.update, UpdateMode::Async);
  EXPECT_TRUE(plan.recompute);
  EXPECT_EQ(plan.staleness, 5);
  EXPECT_EQ(plan.devices(), 24);
}

TEST(Schedule, AsyncDataParallelNeedsReplicas) {
  Schedule schedule;
  schedule.update = UpdateMode::Async;
  EXPECT_FALSE(schedule.async_data_parallel());
  schedule.dp = 2;
  EXPECT_TRUE(schedule.async_data_parallel());
  schedule.update = UpdateMode::Sync;
  EXPECT_FALSE(schedule.async_data_parallel());
}

}  // namespace
}  // namespace pipelab
