#include "core/schedule/op_matching.h"

#include <gtest/gtest.h>

#include "core/schedule/lowering.h"

namespace pipelab {
namespace {

Op op_of(OpKind kind, int stage) {
  Op op;
  op.kind = kind;
  op.stage = stage;
  return op;
}

TEST(OpMatching, MessagesGoToTheNeighbouringStage) {
  EXPECT_EQ(message_peer_stage(op_of(OpKind::SendActivation, 2)), 3);
  EXPECT_EQ(message_peer_stage(op_of(OpKind::RecvActivation, 2)), 1);
  EXPECT_EQ(message_peer_stage(op_of(OpKind::SendGradient, 2)), 1);
  EXPECT_EQ(message_peer_stage(op_of(OpKind::RecvGradient, 2)), 3);
}

TEST(OpMatching, CollectiveGroupsHoldShardsOrReplicas) {
  const DeviceLayout layout{2, 2, 3};  // dp, tp, pp
  const auto tensor = collective_groups(layout, CommGroup::TensorParallel);
  const auto data = collective_groups(layout, CommGroup::DataParallel);
  ASSERT_EQ(tensor.size(), 6u);  // one per replica and rank
  ASSERT_EQ(data.size(), 6u);    // one per rank and shard
  for (size_t g = 0; g < tensor.size(); ++g) {
    ASSERT_EQ(tensor[g].size(), 2u);  // tp shards
    for (int device : tensor[g]) {
      EXPECT_EQ(collective_group_of(layout, CommGroup::TensorParallel, device), int(g));
      const DeviceCoord first = layout.coord_of(tensor[g][0]);
      EXPECT_EQ(layout.coord_of(device).replica, first.replica);
      EXPECT_EQ(layout.coord_of(device).pipeline_rank, first.pipeline_rank);
    }
  }
  for (size_t g = 0; g < data.size(); ++g) {
    ASSERT_EQ(data[g].size(), 2u);  // dp replicas
    EXPECT_LT(data[g][0], data[g][1]);
    for (int device : data[g]) {
      EXPECT_EQ(collective_group_of(layout, CommGroup::DataParallel, device), int(6 + g));
      const DeviceCoord first = layout.coord_of(data[g][0]);
      EXPECT_EQ(layout.coord_of(device).pipeline_rank, first.pipeline_rank);
      EXPECT_EQ(layout.coord_of(device).shard, first.shard);
    }
  }
}

TEST(OpMatching, EverySendFindsItsReceive) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::OneFOneB;
  plan.dp = 2;
  plan.pp = 3;
  plan.microbatches = 4;
  const Schedule lowered = build_schedule(plan);
  const ScheduleMatching matching = match_schedule_ops(lowered);
  int sends = 0;
  for (int d = 0; d < lowered.device_count(); ++d) {
    for (size_t i = 0; i < lowered.devices[d].size(); ++i) {
      const Op& send = lowered.devices[d][i];
      if (!is_send(send.kind)) continue;
      ++sends;
      const int recv = matching.partner[matching.first_op[d] + int(i)];  // global index
      ASSERT_GE(recv, matching.first_op[send.peer]);
      ASSERT_LT(recv, matching.first_op[send.peer + 1]);
      const Op& receive = lowered.devices[send.peer][recv - matching.first_op[send.peer]];
      EXPECT_EQ(receive.kind, op_kind_facts(send.kind).other_end);
      EXPECT_EQ(receive.stage, message_peer_stage(send));
      EXPECT_EQ(receive.microbatch, send.microbatch);
      EXPECT_EQ(receive.peer, d);
    }
  }
  EXPECT_EQ(sends, 2 * 2 * 2 * 4);  // replicas x boundaries x directions x micro-batches
  EXPECT_EQ(matching.message_count, sends);
  EXPECT_EQ(matching.groups.size(), 2u * 3u + 3u * 1u);  // tp groups (dp x pp), dp groups (pp x tp)
}

}  // namespace
}  // namespace pipelab
