#include "core/schedule/lowering.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/schedule/generators.h"
#include "core/schedule/validator.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

ParallelPlan make_plan(ScheduleKind kind, int dp, int tp, int pp, int m, int chunks = 1) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.dp = dp;
  plan.tp = tp;
  plan.pp = pp;
  plan.microbatches = m;
  plan.chunks = chunks;
  return plan;
}

// Hand-made profiles: stage s sends 1000 + s activation bytes, takes 100 + s
// gradient bytes, holds 10 * (s + 1) parameters, and has one forward and two
// backward tensor-parallel all-reduces.
std::vector<StageProfile> make_profiles(int stages) {
  std::vector<StageProfile> profiles(stages);
  for (int s = 0; s < stages; ++s) {
    profiles[s].output_bytes = 1000 + s;
    profiles[s].input_bytes = 100 + s;
    profiles[s].params = 10 * (s + 1);
    profiles[s].tp_allreduces = {
        {10 * s + 1, 7, true}, {10 * s + 2, 8, false}, {10 * s + 3, 9, false}};
  }
  return profiles;
}

bool is_compute_pass(OpKind kind) {
  return kind == OpKind::Forward || kind == OpKind::Backward || kind == OpKind::BackwardInput ||
         kind == OpKind::BackwardWeight;
}

TEST(Lowering, EveryDeviceRunsItsRanksComputeOpsInOrder) {
  const ParallelPlan plan = make_plan(ScheduleKind::OneFOneB, 2, 3, 4, 6);
  const Schedule compute = generate_schedule({plan.schedule, plan.pp, plan.microbatches, 1, 0});
  const Schedule lowered = lower_schedule(compute, plan);
  EXPECT_TRUE(lowered.lowered);
  EXPECT_EQ(lowered.dp, 2);
  EXPECT_EQ(lowered.tp, 3);
  ASSERT_EQ(lowered.device_count(), 24);
  for (int device = 0; device < 24; ++device) {
    const DeviceCoord coord = device_coord(plan, device);
    std::vector<Op> passes;
    for (const Op& op : lowered.devices[device]) {
      EXPECT_EQ(op.device, device);
      if (is_compute_pass(op.kind)) passes.push_back(op);
    }
    const auto& expected = compute.devices[coord.pipeline_rank];
    ASSERT_EQ(passes.size(), expected.size());
    for (size_t i = 0; i < passes.size(); ++i) {
      EXPECT_EQ(passes[i].kind, expected[i].kind);
      EXPECT_EQ(passes[i].stage, expected[i].stage);
      EXPECT_EQ(passes[i].microbatch, expected[i].microbatch);
    }
  }
}

TEST(Lowering, ReceivesBeforeAndSendsAfterWithProfileBytes) {
  const ParallelPlan plan = make_plan(ScheduleKind::GPipe, 2, 1, 3, 2);
  const Schedule lowered = build_schedule(plan, make_profiles(3));
  for (int device = 0; device < lowered.device_count(); ++device) {
    const auto& ops = lowered.devices[device];
    const DeviceCoord coord = device_coord(plan, device);
    const int stage = coord.pipeline_rank;
    const int previous = stage > 0 ? device_id(plan, {coord.replica, stage - 1, 0}) : -1;
    const int next = stage < 2 ? device_id(plan, {coord.replica, stage + 1, 0}) : -1;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.kind == OpKind::Forward) {
        if (stage > 0) {
          ASSERT_GT(i, 0u);
          const Op& recv = ops[i - 1];
          EXPECT_EQ(recv.kind, OpKind::RecvActivation);
          EXPECT_EQ(recv.peer, previous);
          EXPECT_EQ(recv.microbatch, op.microbatch);
          EXPECT_EQ(recv.stage, stage);
          EXPECT_EQ(recv.bytes, 1000 + stage - 1);  // the previous stage's output
        }
        if (stage < 2) {
          const Op& send = ops[i + 1];
          EXPECT_EQ(send.kind, OpKind::SendActivation);
          EXPECT_EQ(send.peer, next);
          EXPECT_EQ(send.stage, stage);
          EXPECT_EQ(send.bytes, 1000 + stage);
        }
      }
      if (op.kind == OpKind::Backward) {
        if (stage < 2) {
          const Op& recv = ops[i - 1];
          EXPECT_EQ(recv.kind, OpKind::RecvGradient);
          EXPECT_EQ(recv.peer, next);
          EXPECT_EQ(recv.bytes, 100 + stage + 1);  // the next stage's input
        }
        if (stage > 0) {
          const Op& send = ops[i + 1];
          EXPECT_EQ(send.kind, OpKind::SendGradient);
          EXPECT_EQ(send.peer, previous);
          EXPECT_EQ(send.bytes, 100 + stage);
        }
      }
    }
  }
  EXPECT_TRUE(validate_schedule(lowered).ok()) << testing::errors_text(validate_schedule(lowered));
}

TEST(Lowering, NoMessagesWithoutProfilesCarryBytes) {
  const Schedule lowered = build_schedule(make_plan(ScheduleKind::OneFOneB, 1, 1, 2, 2));
  for (const auto& ops : lowered.devices)
    for (const Op& op : ops) EXPECT_EQ(op.bytes, 0);
}

TEST(Lowering, StagesSharingADeviceExchangeNoMessages) {
  const Schedule lowered = build_schedule(make_plan(ScheduleKind::Interleaved1F1B, 1, 1, 1, 3, 4));
  ASSERT_EQ(lowered.device_count(), 1);
  for (const Op& op : lowered.devices[0]) {
    EXPECT_NE(op.kind, OpKind::SendActivation);
    EXPECT_NE(op.kind, OpKind::RecvActivation);
    EXPECT_NE(op.kind, OpKind::SendGradient);
    EXPECT_NE(op.kind, OpKind::RecvGradient);
  }
  // One U per chunk.
  EXPECT_EQ(testing::ops_of_kind(lowered.devices[0], OpKind::Update).size(), 4u);
  EXPECT_TRUE(validate_schedule(lowered).ok()) << testing::errors_text(validate_schedule(lowered));
}

TEST(Lowering, RecomputeRightBeforeEachBackward) {
  ParallelPlan plan = make_plan(ScheduleKind::ZeroBubbleH1, 1, 1, 3, 4);
  plan.recompute = true;
  const Schedule lowered = build_schedule(plan);
  EXPECT_TRUE(lowered.recompute);
  for (const auto& ops : lowered.devices) {
    int recomputes = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::BackwardInput) continue;
      const Op& before = ops[i - 1];
      EXPECT_EQ(before.kind, OpKind::Recompute);
      EXPECT_EQ(before.stage, ops[i].stage);
      EXPECT_EQ(before.microbatch, ops[i].microbatch);
      ++recomputes;
    }
    EXPECT_EQ(recomputes, 4);
    EXPECT_EQ(testing::ops_of_kind(ops, OpKind::Recompute).size(), 4u);
  }
}

TEST(Lowering, TensorParallelAllReducesFromProfiles) {
  const ParallelPlan plan = make_plan(ScheduleKind::OneFOneB, 1, 2, 2, 3);
  const Schedule lowered = build_schedule(plan, make_profiles(2));
  for (int device = 0; device < lowered.device_count(); ++device) {
    const auto& ops = lowered.devices[device];
    const int stage = device_coord(plan, device).pipeline_rank;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == OpKind::Forward) {
        EXPECT_EQ(ops[i + 1].kind, OpKind::AllReduce);
        EXPECT_EQ(ops[i + 1].group, CommGroup::TensorParallel);
        EXPECT_EQ(ops[i + 1].layer, 10 * stage + 1);
        EXPECT_EQ(ops[i + 1].bytes, 7);
        EXPECT_NE(ops[i + 2].kind, OpKind::AllReduce);
      }
      if (ops[i].kind == OpKind::Backward) {
        EXPECT_EQ(ops[i + 1].layer, 10 * stage + 2);
        EXPECT_EQ(ops[i + 2].layer, 10 * stage + 3);
        EXPECT_EQ(ops[i + 2].group, CommGroup::TensorParallel);
        EXPECT_EQ(ops[i + 2].microbatch, ops[i].microbatch);
      }
    }
  }
  // Members of a tensor-parallel group run the same program.
  for (int device = 0; device < lowered.device_count(); device += 2) {
    const auto& a = lowered.devices[device];
    const auto& b = lowered.devices[device + 1];
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].kind, b[i].kind);
      EXPECT_EQ(a[i].microbatch, b[i].microbatch);
      EXPECT_EQ(a[i].layer, b[i].layer);
    }
  }
  EXPECT_TRUE(validate_schedule(lowered).ok()) << testing::errors_text(validate_schedule(lowered));
}

TEST(Lowering, TensorParallelWithoutProfilesHasOneAllReducePerPass) {
  const Schedule lowered = build_schedule(make_plan(ScheduleKind::ZeroBubbleH1, 1, 2, 2, 3));
  for (const auto& ops : lowered.devices) {
    const auto reduces = testing::ops_of_kind(ops, OpKind::AllReduce);
    EXPECT_EQ(reduces.size(), 6u);  // after 3 F and 3 BI, none after BW
    for (const Op& op : reduces) {
      EXPECT_EQ(op.group, CommGroup::TensorParallel);
      EXPECT_EQ(op.layer, -1);
    }
  }
}

TEST(Lowering, SyncUpdateAfterTheStagesLastBackwardOfEachStep) {
  const ParallelPlan plan = make_plan(ScheduleKind::ZeroBubbleH1, 2, 1, 3, 4);
  const auto profiles = make_profiles(3);
  const Schedule lowered = build_schedule(plan, profiles, 2);
  for (int device = 0; device < lowered.device_count(); ++device) {
    const auto& ops = lowered.devices[device];
    const int stage = device_coord(plan, device).pipeline_rank;
    int updates = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::Update) continue;
      // ALLREDUCE dp right before, the step's last BW right before that.
      const Op& reduce = ops[i - 1];
      EXPECT_EQ(reduce.kind, OpKind::AllReduce);
      EXPECT_EQ(reduce.group, CommGroup::DataParallel);
      EXPECT_EQ(reduce.microbatch, -1);
      EXPECT_EQ(reduce.bytes, profiles[stage].params * 4);
      EXPECT_EQ(ops[i - 2].kind, OpKind::BackwardWeight);
      EXPECT_EQ(ops[i - 2].microbatch, 3);
      EXPECT_EQ(ops[i].microbatch, -1);
      EXPECT_EQ(ops[i].step, updates);
      EXPECT_EQ(ops[i].weight_version, updates + 1);  // U of step t writes t + 1
      for (size_t j = i + 1; j < ops.size(); ++j)
        if (is_compute_pass(ops[j].kind)) {
          EXPECT_EQ(ops[j].weight_version, updates + 1);
        }
      ++updates;
    }
    EXPECT_EQ(updates, 2);
  }
  EXPECT_TRUE(validate_schedule(lowered).ok()) << testing::errors_text(validate_schedule(lowered));
}

TEST(Lowering, InterleavedUpdatesEachChunk) {
  const Schedule lowered = build_schedule(make_plan(ScheduleKind::Interleaved1F1B, 1, 1, 2, 4, 3));
  for (int device = 0; device < 2; ++device) {
    const auto updates = testing::ops_of_kind(lowered.devices[device], OpKind::Update);
    ASSERT_EQ(updates.size(), 3u);
    std::vector<int> chunks;
    for (const Op& op : updates) chunks.push_back(op.chunk);
    std::sort(chunks.begin(), chunks.end());
    EXPECT_EQ(chunks, (std::vector<int>{0, 1, 2}));
  }
}

TEST(Lowering, AsyncDataParallelPushesAndPullsWithBoundedStaleness) {
  ParallelPlan plan = make_plan(ScheduleKind::OneFOneB, 3, 1, 2, 2);
  plan.update = UpdateMode::Async;
  plan.staleness = 1;
  const Schedule lowered = build_schedule(plan);
  EXPECT_TRUE(lowered.async_data_parallel());
  EXPECT_EQ(lowered.staleness, 1);
  EXPECT_EQ(lowered.steps, 3);  // staleness + 2
  for (const auto& ops : lowered.devices) {
    EXPECT_TRUE(testing::ops_of_kind(ops, OpKind::Update).empty());
    for (const Op& op : ops) {
      if (op.kind == OpKind::AllReduce) {
        EXPECT_NE(op.group, CommGroup::DataParallel);
      }
      if (is_compute_pass(op.kind)) {
        EXPECT_EQ(op.weight_version, std::max(0, op.step - 1));
      }
    }
    const auto pushes = testing::ops_of_kind(ops, OpKind::PushGradient);
    const auto pulls = testing::ops_of_kind(ops, OpKind::PullWeights);
    ASSERT_EQ(pushes.size(), 3u);
    ASSERT_EQ(pulls.size(), 3u);
    for (int t = 0; t < 3; ++t) {
      EXPECT_EQ(pushes[t].step, t);
      EXPECT_EQ(pushes[t].group, CommGroup::DataParallel);
      EXPECT_EQ(pulls[t].step, t);
      EXPECT_EQ(pulls[t].weight_version, t);  // max(0, t + 1 - staleness)
    }
  }
  EXPECT_TRUE(validate_schedule(lowered).ok()) << testing::errors_text(validate_schedule(lowered));
}

TEST(Lowering, AsyncWithOneReplicaIsSynchronous) {
  ParallelPlan plan = make_plan(ScheduleKind::OneFOneB, 1, 1, 2, 2);
  plan.update = UpdateMode::Async;
  const Schedule lowered = build_schedule(plan);
  EXPECT_FALSE(lowered.async_data_parallel());
  EXPECT_EQ(testing::ops_of_kind(lowered.devices[0], OpKind::Update).size(), 1u);
  EXPECT_TRUE(validate_schedule(lowered).ok()) << testing::errors_text(validate_schedule(lowered));
}

std::string lowering_error(const Schedule& compute, const ParallelPlan& plan,
                           const std::vector<StageProfile>& profiles = {}) {
  try {
    lower_schedule(compute, plan, profiles);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(Lowering, RejectsInputsThatDoNotFit) {
  const ParallelPlan plan = make_plan(ScheduleKind::OneFOneB, 2, 1, 2, 4);
  const Schedule compute = generate_schedule({ScheduleKind::OneFOneB, 2, 4, 1, 0});

  ParallelPlan other_pp = plan;
  other_pp.pp = 4;
  EXPECT_EQ(lowering_error(compute, other_pp),
            "plan.pp (4) differs from the compute schedule's pp (2); generate the schedule from "
            "the same plan");
  ParallelPlan no_dp = plan;
  no_dp.dp = 0;
  EXPECT_EQ(lowering_error(compute, no_dp),
            "dp must be at least 1 (got 0); use dp = 1 for no data parallelism");
  EXPECT_EQ(lowering_error(compute, plan, make_profiles(3)),
            "got 3 stage profiles for 2 stages; pass one StageProfile per stage, or none");
  EXPECT_EQ(lowering_error(lower_schedule(compute, plan), plan),
            "lower_schedule needs a compute schedule, but this one is already lowered; lower "
            "the generator's output");

  ParallelPlan async = plan;
  async.update = UpdateMode::Async;
  EXPECT_EQ(lowering_error(compute, async),
            "async data parallel with staleness 2 needs a window of at least 4 steps (got 1); "
            "generate with steps = 0 (the default) or steps >= 4");
  ParallelPlan negative = async;
  negative.staleness = -1;
  EXPECT_EQ(lowering_error(compute, negative),
            "staleness must be 0 or more (got -1); use staleness = 2");

  ParallelPlan pipedream = make_plan(ScheduleKind::PipeDream, 2, 1, 2, 4);
  pipedream.update = UpdateMode::Async;
  EXPECT_THROW(build_schedule(pipedream), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab

namespace pipelab {
namespace {

TEST(ScheduleSize, OversizedPlansAreRefusedBeforeBuilding) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::OneFOneB;
  plan.pp = 1024;
  plan.dp = 1024;
  plan.microbatches = 65536;
  try {
    build_schedule(plan);
    FAIL() << "a schedule of half a trillion ops was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("1024 x 1 x 1 x 1024 x 1 x 65536"), std::string::npos)
        << error.what();
  }
  plan.dp = 8;
  plan.pp = 64;
  plan.microbatches = 1024;  // the scale the simulator is asked to handle
  EXPECT_NO_THROW(check_schedule_size(plan, 1));
}

TEST(ScheduleSize, ASynchronousPlanIsCountedByTheReplicaThatStandsForAll) {
  // Megatron-LM's 529.6B row: 9 replicas of tp 8 x pp 35 x 3 chunks x 280
  // micro-batches, 16.9 M ops in all, 1.9 M in replica 0.
  ParallelPlan plan;
  plan.schedule = ScheduleKind::Interleaved1F1B;
  plan.dp = 9;
  plan.tp = 8;
  plan.pp = 35;
  plan.chunks = 3;
  plan.microbatches = 280;
  ASSERT_TRUE(replicas_run_alike(plan));
  EXPECT_NO_THROW(check_schedule_size(plan, 0, true));
  try {
    check_schedule_size(plan, 0);
    FAIL() << "every replica's 16.9 M ops were accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("simulate one replica for all"), std::string::npos)
        << error.what();
  }
  plan.update = UpdateMode::Async;  // a parameter server's replicas drift apart
  EXPECT_FALSE(replicas_run_alike(plan));
  plan.update = UpdateMode::Sync;
  plan.dp = 1;
  EXPECT_FALSE(replicas_run_alike(plan));
}

TEST(ScheduleSize, TheDefaultWindowCountsEveryStepItHolds) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.pp = 4;
  plan.microbatches = 1024;
  plan.update = UpdateMode::Async;
  plan.staleness = 1000;  // a window of 1002 steps
  EXPECT_EQ(window_steps(plan, 0), 1002);
  EXPECT_EQ(window_steps(plan, 5), 5);
  EXPECT_THROW(check_schedule_size(plan, 0), std::invalid_argument);
  EXPECT_NO_THROW(check_schedule_size(plan, 1));
  plan.update = UpdateMode::Sync;
  EXPECT_EQ(window_steps(plan, 0), 1);
}

}  // namespace
}  // namespace pipelab
