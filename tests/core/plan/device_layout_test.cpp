#include "core/plan/device_layout.h"

#include <gtest/gtest.h>

#include "core/plan/parallel_plan.h"

namespace pipelab {
namespace {

TEST(DeviceLayout, NumbersReplicaThenRankThenShard) {
  const DeviceLayout layout{2, 3, 4};  // dp, tp, pp
  ASSERT_EQ(layout.device_count(), 24);
  int expected = 0;
  for (int replica = 0; replica < 2; ++replica)
    for (int rank = 0; rank < 4; ++rank)
      for (int shard = 0; shard < 3; ++shard) {
        EXPECT_EQ(layout.device_of(replica, rank, shard), expected);
        const DeviceCoord coord = layout.coord_of(expected);
        EXPECT_EQ(coord.replica, replica);
        EXPECT_EQ(coord.pipeline_rank, rank);
        EXPECT_EQ(coord.shard, shard);
        EXPECT_EQ(layout.device_of(coord), expected);
        ++expected;
      }
}

TEST(DeviceLayout, PlacesStageSOnRankSModPp) {
  const DeviceLayout layout{1, 1, 3};
  for (int stage = 0; stage < 9; ++stage) {
    EXPECT_EQ(layout.rank_of_stage(stage), stage % 3);
    EXPECT_EQ(layout.chunk_of_stage(stage), stage / 3);
    EXPECT_EQ(layout.stage_of(layout.rank_of_stage(stage), layout.chunk_of_stage(stage)), stage);
  }
}

TEST(DeviceLayout, PipelinePeerKeepsReplicaAndShard) {
  const DeviceLayout layout{2, 2, 3};
  for (int device = 0; device < layout.device_count(); ++device)
    for (int stage = 0; stage < 6; ++stage) {
      const DeviceCoord from = layout.coord_of(device);
      const DeviceCoord peer = layout.coord_of(layout.pipeline_peer(device, stage));
      EXPECT_EQ(peer.replica, from.replica);
      EXPECT_EQ(peer.shard, from.shard);
      EXPECT_EQ(peer.pipeline_rank, stage % 3);
    }
}

TEST(DeviceLayout, PlanDeviceIdsFollowIt) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.tp = 2;
  plan.pp = 3;
  for (int device = 0; device < plan.devices(); ++device)
    EXPECT_EQ(device_id(plan, device_coord(plan, device)), device);
  EXPECT_EQ(device_id(plan, {1, 2, 1}), plan.layout().device_of(1, 2, 1));
}

}  // namespace
}  // namespace pipelab
