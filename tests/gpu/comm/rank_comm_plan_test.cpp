// Which groups and links of a run over processes use NCCL between ranks, and
// the communicators they get: pure arithmetic, checked without a GPU.
#include "gpu/comm/rank_comm_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/schedule/lowering.h"
#include "gpu/executor/device_mapping.h"

namespace pipelab::gpu {
namespace {

// pp 2 x dp 2 under 1f1b: devices 0, 1 are replica 0's stages, 2, 3 replica 1's.
ParallelPlan pp2_dp2() {
  ParallelPlan plan;
  plan.pp = 2;
  plan.dp = 2;
  plan.microbatches = 4;
  return plan;
}

RankCommPlan plan_for(const ParallelPlan& plan, const std::vector<int>& rank_of_device,
                      const std::vector<std::string>& gpu_of_rank, bool nccl = true) {
  return plan_rank_communicators(build_schedule(plan),
                                 collective_groups(plan, false).with_collectives(false),
                                 rank_of_device, gpu_of_rank, nccl);
}

TEST(RankCommPlanTest, OneDevicePerRankOnItsOwnGpuPutsEverythingOnNccl) {
  const RankCommPlan plan = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:1", "b:0", "b:1"});
  ASSERT_EQ(plan.groups.size(), 2u);  // data parallel {0, 2} and {1, 3}
  for (const RankRoute& group : plan.groups) EXPECT_EQ(group.path, RankPath::Nccl);
  ASSERT_EQ(plan.links.size(), 4u);  // 0 -> 1, 1 -> 0, 2 -> 3, 3 -> 2
  for (const auto& [link, route] : plan.links) EXPECT_EQ(route.path, RankPath::Nccl);
  // One communicator per group and per direction, none shared.
  EXPECT_EQ(plan.communicators.size(), 6u);
  EXPECT_TRUE(plan.needs_world());
  const RankCommunicator& forward = plan.communicators[plan.links.at({0, 1}).communicator];
  EXPECT_EQ(forward.ranks, (std::vector<int>{0, 1}));
  EXPECT_NE(plan.links.at({0, 1}).communicator, plan.links.at({1, 0}).communicator);
  EXPECT_EQ(plan.communicators[plan.links.at({1, 0}).communicator].ranks,
            (std::vector<int>{1, 0}));
  // A link's communicator carries its messages; a data-parallel group's its all-reduce.
  EXPECT_TRUE(forward.point_to_point);
  EXPECT_TRUE(forward.collectives.empty());
  const RankCommunicator& group = plan.communicators[plan.groups[0].communicator];
  EXPECT_FALSE(group.point_to_point);
  EXPECT_EQ(group.collectives, std::vector{GroupCollective::AllReduce});
}

TEST(RankCommPlanTest, SplitColorAndKeyFollowTheCommunicatorsRankOrder) {
  const RankCommPlan plan = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:1", "b:0", "b:1"});
  const int group = plan.groups[0].communicator;
  ASSERT_EQ(plan.communicators[group].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(plan.communicators[group].devices, (std::vector<int>{0, 2}));
  EXPECT_EQ(split_color(plan, group, 0), 0);
  EXPECT_EQ(split_color(plan, group, 1), kNoColor);
  EXPECT_EQ(split_color(plan, group, 2), 0);
  EXPECT_EQ(split_key(plan, group, 0), 0);
  EXPECT_EQ(split_key(plan, group, 2), 1);
  const int backward = plan.links.at({1, 0}).communicator;
  EXPECT_EQ(split_key(plan, backward, 1), 0);  // the sender is NCCL rank 0
  EXPECT_EQ(split_key(plan, backward, 0), 1);
}

TEST(RankCommPlanTest, GroupsWithTheSameRanksStillGetTheirOwnCommunicator) {
  // Two devices per rank: the pipeline links stay in each process; the two
  // data-parallel groups both span ranks 0 and 1 but are driven by different
  // worker threads, so they must not share a communicator.
  const RankCommPlan plan = plan_for(pp2_dp2(), {0, 0, 1, 1}, {"a:0", "b:0"});
  for (const auto& [link, route] : plan.links) EXPECT_EQ(route.path, RankPath::InProcess);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].path, RankPath::Nccl);
  EXPECT_EQ(plan.groups[1].path, RankPath::Nccl);
  EXPECT_NE(plan.groups[0].communicator, plan.groups[1].communicator);
  EXPECT_EQ(plan.communicators.size(), 2u);
}

TEST(RankCommPlanTest, RanksSharingAGpuOrNoNcclStageThroughTheHost) {
  // All four ranks on one GPU (the lent machines): NCCL would refuse.
  const RankCommPlan shared = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:0", "a:0", "a:0"});
  for (const RankRoute& group : shared.groups) EXPECT_EQ(group.path, RankPath::HostStaging);
  for (const auto& [link, route] : shared.links) EXPECT_EQ(route.path, RankPath::HostStaging);
  EXPECT_FALSE(shared.needs_world());
  // Two of the four share one (four ranks on two GPUs, say): NCCL would
  // refuse the world over all four, so even the groups and links between
  // ranks with GPUs of their own are staged.
  const RankCommPlan half = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:1", "a:0", "b:0"});
  EXPECT_EQ(half.groups[0].path, RankPath::HostStaging);  // ranks 0 and 2
  EXPECT_EQ(half.groups[1].path, RankPath::HostStaging);  // ranks 1 and 3
  EXPECT_EQ(half.links.at({0, 1}).path, RankPath::HostStaging);
  EXPECT_FALSE(half.needs_world());
  // Distinct GPUs but NCCL not built in.
  const RankCommPlan without =
      plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:1", "b:0", "b:1"}, false);
  EXPECT_EQ(without.groups[0].path, RankPath::HostStaging);
  EXPECT_FALSE(without.needs_world());
}

TEST(RankCommPlanTest, AGroupWithTwoMembersOnOneRankIsStaged) {
  const Schedule none;  // no messages
  const RankCommPlan plan = plan_rank_communicators(none, {{{0, 1, 2}, {}}, {{0, 1}, {}}},
                                                    {0, 0, 1}, {"a:0", "b:0"}, true);
  EXPECT_EQ(plan.groups[0].path, RankPath::HostStaging);
  EXPECT_EQ(plan.groups[1].path, RankPath::InProcess);
  EXPECT_FALSE(plan.needs_world());
  EXPECT_EQ(describe_rank_paths(plan),
            "between ranks: 0 groups on NCCL, 1 group staged through host memory");
}

Schedule schedule_of(ScheduleKind kind) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.pp = 4;
  plan.microbatches = 8;
  plan.chunks = kind == ScheduleKind::Interleaved1F1B || uses_v_placement(kind) ? 2 : 1;
  return build_schedule(plan);
}

TEST(RankCommPlanTest, SchedulesOnALineReceiveEachLinksMessagesInSendOrder) {
  // The point-to-point design needs this; the plan falls back to host
  // staging for a link without it.
  for (ScheduleKind kind :
       {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved1F1B,
        ScheduleKind::ZeroBubbleH1, ScheduleKind::PipeDream, ScheduleKind::PipeDream2BW,
        ScheduleKind::PipeMare}) {
    const Schedule schedule = schedule_of(kind);
    const auto links = directed_message_links(schedule);
    EXPECT_FALSE(links.empty()) << schedule_name(kind);
    for (const auto& [from, to] : links)
      EXPECT_TRUE(in_order_link(schedule, from, to))
          << schedule_name(kind) << " link " << from << " -> " << to;
  }
}

TEST(RankCommPlanTest, VSchedulesReceiveSomeLinksOutOfOrderAndStageOnlyThose) {
  // zb-v and dualpipev send both chunks' messages on one link, and a device
  // may take them in another order than they left: those links stay staged.
  for (ScheduleKind kind : {ScheduleKind::ZeroBubbleV, ScheduleKind::DualPipeV}) {
    const Schedule schedule = schedule_of(kind);
    const int devices = static_cast<int>(schedule.devices.size());
    std::vector<int> rank_of_device(static_cast<size_t>(devices));
    std::vector<std::string> gpu_of_rank;
    for (int d = 0; d < devices; ++d) {
      rank_of_device[static_cast<size_t>(d)] = d;
      gpu_of_rank.push_back("host:" + std::to_string(d));
    }
    const RankCommPlan plan =
        plan_rank_communicators(schedule, {}, rank_of_device, gpu_of_rank, true);
    int out_of_order = 0;
    for (const auto& [link, route] : plan.links) {
      const bool in_order = in_order_link(schedule, link.first, link.second);
      out_of_order += !in_order;
      EXPECT_EQ(route.path, in_order ? RankPath::Nccl : RankPath::HostStaging)
          << schedule_name(kind) << " link " << link.first << " -> " << link.second;
    }
    EXPECT_GT(out_of_order, 0) << schedule_name(kind);
  }
}

TEST(RankCommPlanTest, ALinkReceivedOutOfOrderIsStaged) {
  ParallelPlan parallel;
  parallel.pp = 2;
  parallel.microbatches = 4;
  Schedule schedule = build_schedule(parallel);
  // Swap device 1's first two receives of activations from device 0.
  std::vector<Op>& ops = schedule.devices[1];
  std::vector<size_t> receives;
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::RecvActivation) receives.push_back(i);
  ASSERT_GE(receives.size(), 2u);
  std::swap(ops[receives[0]], ops[receives[1]]);
  EXPECT_FALSE(in_order_link(schedule, 0, 1));
  EXPECT_TRUE(in_order_link(schedule, 1, 0));
  const RankCommPlan plan = plan_rank_communicators(schedule, {}, {0, 1}, {"a:0", "b:0"}, true);
  EXPECT_EQ(plan.links.at({0, 1}).path, RankPath::HostStaging);
  EXPECT_EQ(plan.links.at({1, 0}).path, RankPath::Nccl);
  EXPECT_EQ(describe_rank_paths(plan),
            "between ranks: 0 groups and 1 link on NCCL, 0 groups and 1 link staged through "
            "host memory");
}

TEST(RankCommPlanTest, EachRankKeepsTheNcclLinksWithAnEndOnIt) {
  const RankCommPlan plan = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:1", "b:0", "b:1"});
  const auto rank1 = nccl_links_of(plan, 1, 1);
  ASSERT_EQ(rank1.size(), 2u);  // it receives on 0 -> 1 and sends on 1 -> 0
  EXPECT_EQ(rank1.at({0, 1}), plan.links.at({0, 1}).communicator);
  EXPECT_EQ(rank1.at({1, 0}), plan.links.at({1, 0}).communicator);
  const auto rank2 = nccl_links_of(plan, 2, 1);
  EXPECT_EQ(rank2.size(), 2u);
  EXPECT_EQ(rank2.count({2, 3}), 1u);
  // Ranks sharing one GPU: every link staged, none on NCCL.
  const RankCommPlan shared = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:0", "a:0", "a:0"});
  EXPECT_TRUE(nccl_links_of(shared, 0, 4).empty());
}

TEST(RankCommPlanTest, EachRankWarmsUpItsCommunicatorsInPlanOrder) {
  // pp 2 x dp 2, a rank each: communicators 0 and 1 are the data-parallel
  // groups {0, 2} and {1, 3}, then the links 0 -> 1, 1 -> 0, 2 -> 3, 3 -> 2.
  const RankCommPlan plan = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:1", "b:0", "b:1"});
  using Kind = RankWarmUp::Kind;
  const int group = plan.groups[0].communicator;
  const int forward = plan.links.at({0, 1}).communicator;
  const int backward = plan.links.at({1, 0}).communicator;
  ASSERT_LT(group, forward);
  ASSERT_LT(forward, backward);
  EXPECT_EQ(rank_warm_ups(plan, 0),
            (std::vector<RankWarmUp>{{group, Kind::Collective, GroupCollective::AllReduce},
                                     {forward, Kind::Send},
                                     {backward, Kind::Receive}}));
  const std::vector<RankWarmUp> rank1 = rank_warm_ups(plan, 1);
  ASSERT_EQ(rank1.size(), 3u);
  EXPECT_EQ(rank1[1], (RankWarmUp{forward, Kind::Receive}));
  EXPECT_EQ(rank1[2], (RankWarmUp{backward, Kind::Send}));
  EXPECT_EQ(describe_warm_up(plan, rank1[0]), "warming up communicator " +
                                                  std::to_string(plan.groups[1].communicator) +
                                                  " (the all-reduce of ranks 1, 3)");
  EXPECT_EQ(describe_warm_up(plan, rank1[1]), "warming up communicator " + std::to_string(forward) +
                                                  " (the link from rank 0 to rank 1)");
  // Ranks sharing a GPU: nothing on NCCL, nothing to warm up.
  const RankCommPlan shared = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:0", "a:0", "a:0"});
  EXPECT_TRUE(rank_warm_ups(shared, 0).empty());
}

// dp 2 x tp 2 x pp 2 under sequence parallelism with experts at ep 2, a
// device per rank: every kind of group and link crosses ranks.
RankCommPlan every_kind_plan() {
  ParallelPlan parallel;
  parallel.dp = 2;
  parallel.tp = 2;
  parallel.pp = 2;
  parallel.ep = 2;
  parallel.sequence_parallel = true;
  parallel.microbatches = 4;
  std::vector<int> rank_of_device;
  std::vector<std::string> gpu_of_rank;
  for (int d = 0; d < parallel.devices(); ++d) {
    rank_of_device.push_back(d);
    gpu_of_rank.push_back("host:" + std::to_string(d));
  }
  return plan_rank_communicators(build_schedule(parallel),
                                 collective_groups(parallel, true).with_collectives(true),
                                 rank_of_device, gpu_of_rank, true);
}

TEST(RankCommPlanTest, EveryRankMeetsEachWarmUpInTheSameOrder) {
  // What makes the warm-up deadlock-free (rank_comm_plan.h): any two ranks
  // take the steps of the communicators they share in one order, and each
  // communicator's members all take each of its steps.
  const RankCommPlan plan = every_kind_plan();
  const int ranks = 8;
  std::vector<std::vector<RankWarmUp>> steps;
  for (int rank = 0; rank < ranks; ++rank) steps.push_back(rank_warm_ups(plan, rank));
  std::set<GroupCollective> kinds;
  for (int a = 0; a < ranks; ++a) {
    for (const RankWarmUp& step : steps[a]) {
      if (step.kind == RankWarmUp::Kind::Collective) kinds.insert(step.collective);
      const std::vector<int>& members =
          plan.communicators[static_cast<size_t>(step.communicator)].ranks;
      EXPECT_NE(std::find(members.begin(), members.end(), a), members.end());
    }
    for (int b = a + 1; b < ranks; ++b) {
      auto shared = [&](int rank, int other) {
        std::vector<std::pair<int, GroupCollective>> order;
        for (const RankWarmUp& step : steps[rank])
          if (split_color(plan, step.communicator, other) != kNoColor)
            order.push_back({step.communicator, step.collective});
        return order;
      };
      EXPECT_EQ(shared(a, b), shared(b, a)) << "ranks " << a << " and " << b;
    }
  }
  // Tensor parallelism under sequence parallelism runs three kinds, the
  // experts an all-to-all: all four get warmed up.
  EXPECT_EQ(kinds.size(), 4u);
  for (size_t index = 0; index < plan.communicators.size(); ++index) {
    const RankCommunicator& communicator = plan.communicators[index];
    int sends = 0, receives = 0, collectives = 0;
    for (int rank : communicator.ranks)
      for (const RankWarmUp& step : steps[static_cast<size_t>(rank)]) {
        if (step.communicator != static_cast<int>(index)) continue;
        sends += step.kind == RankWarmUp::Kind::Send;
        receives += step.kind == RankWarmUp::Kind::Receive;
        collectives += step.kind == RankWarmUp::Kind::Collective;
      }
    if (communicator.point_to_point) {
      EXPECT_EQ(sends, 1) << "link communicator " << index;
      EXPECT_EQ(receives, 1) << "link communicator " << index;
    } else {
      EXPECT_EQ(collectives,
                static_cast<int>(communicator.ranks.size() * communicator.collectives.size()))
          << "group communicator " << index;
    }
  }
}

TEST(RankCommPlanTest, ARankHoldsTheWorldAndTheCommunicatorsItIsIn) {
  // pp 2 x dp 2, a rank each: rank 0 is in the data-parallel group {0, 2}
  // and both links with rank 1, plus the world.
  const RankCommPlan plan = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:1", "b:0", "b:1"});
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(communicators_on_rank(plan, rank), 4) << rank;
  // Staged through the host: no NCCL, no world.
  const RankCommPlan shared = plan_for(pp2_dp2(), {0, 1, 2, 3}, {"a:0", "a:0", "a:0", "a:0"});
  EXPECT_EQ(communicators_on_rank(shared, 0), 0);
}

TEST(RankCommPlanTest, AShapeMessageCarriesRowsAndColumnsExactly) {
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 0}, {8, 512}, {(int64_t{1} << 24) - 1, 3}, {1, int64_t{1} << 24}}) {
    const std::array<float, 2> message = shape_message(rows, cols);
    EXPECT_EQ(message_shape(message), std::make_pair(rows, cols));
  }
  EXPECT_THROW(shape_message((int64_t{1} << 24) + 1, 1), std::invalid_argument);
  EXPECT_THROW(shape_message(-1, 1), std::invalid_argument);
  const std::vector<float> three{1, 2, 3}, fraction{1.5f, 2}, negative{-1, 2};
  EXPECT_THROW(message_shape(three), std::invalid_argument);
  EXPECT_THROW(message_shape(fraction), std::invalid_argument);
  EXPECT_THROW(message_shape(negative), std::invalid_argument);
}

TEST(RankCommPlanTest, ADeviceOrRankOutOfRangeIsRefused) {
  const Schedule none;
  EXPECT_THROW(plan_rank_communicators(none, {{{0, 5}, {}}}, {0, 1}, {"a:0", "b:0"}, true),
               std::invalid_argument);
  EXPECT_THROW(plan_rank_communicators(none, {{{0, 1}, {}}}, {0, 2}, {"a:0", "b:0"}, true),
               std::invalid_argument);
}

}  // namespace
}  // namespace pipelab::gpu
