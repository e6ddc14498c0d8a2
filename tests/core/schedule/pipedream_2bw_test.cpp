#include <gtest/gtest.h>

#include <map>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/schedule_stats.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

TEST(PipeDream2BW, SameOrderAsPipeDream) {
  const Schedule two_bw = generate_pipedream_2bw(4, 4, 3);
  const Schedule pipedream = generate_pipedream(4, 4, 3);
  for (int stage = 0; stage < 4; ++stage) {
    ASSERT_EQ(two_bw.devices[stage].size(), pipedream.devices[stage].size());
    for (size_t i = 0; i < two_bw.devices[stage].size(); ++i) {
      EXPECT_EQ(two_bw.devices[stage][i].kind, pipedream.devices[stage][i].kind);
      EXPECT_EQ(two_bw.devices[stage][i].step, pipedream.devices[stage][i].step);
      EXPECT_EQ(two_bw.devices[stage][i].microbatch, pipedream.devices[stage][i].microbatch);
    }
  }
}

TEST(PipeDream2BW, ForwardReadsStepsFinishedAndBackwardItsForwardsVersion) {
  const int m = 4;
  const Schedule schedule = generate_pipedream_2bw(4, m, 4);
  for (int stage = 0; stage < 4; ++stage) {
    int backwards_done = 0;
    std::map<std::pair<int, int>, int> forward_version;
    for (const Op& op : schedule.devices[stage]) {
      if (op.kind == OpKind::Forward) {
        EXPECT_EQ(op.weight_version, backwards_done / m);  // one update per m backwards
        forward_version[{op.step, op.microbatch}] = op.weight_version;
      } else {
        EXPECT_EQ(op.weight_version, (forward_version[{op.step, op.microbatch}]));
        ++backwards_done;
      }
    }
  }
}

TEST(PipeDream2BW, AtMostTwoWeightVersionsAlive) {
  for (int pp : {1, 2, 3, 4, 8, 16})
    for (int m : {pp, pp + 1, 2 * pp, 64}) {
      ParallelPlan plan;
      plan.pp = pp;
      plan.microbatches = m;
      plan.schedule = ScheduleKind::PipeDream2BW;
      const Schedule lowered = build_schedule(plan);
      const Schedule compute = generate_schedule({ScheduleKind::PipeDream2BW, pp, m, 1, 0});
      for (int stage = 0; stage < pp; ++stage) {
        // Two once the pipeline is deeper than one stage: the in-flight
        // micro-batches' version and the new one.
        const int expected = pp - stage >= 2 ? 2 : 1;
        EXPECT_EQ(peak_live_weight_versions(lowered, stage, stage), expected)
            << "pp " << pp << " m " << m << " stage " << stage;
        EXPECT_LE(peak_live_weight_versions(compute, stage, stage), 2);
      }
    }
}

TEST(PipeDream2BW, LoweringUpdatesAfterTheLastBackwardOfEachStep) {
  ParallelPlan plan;
  plan.pp = 3;
  plan.microbatches = 4;
  plan.schedule = ScheduleKind::PipeDream2BW;
  const Schedule lowered = build_schedule(plan, {}, 3);
  for (const auto& ops : lowered.devices) {
    int updates = 0;
    const Op* last_backward = nullptr;
    for (const Op& op : ops) {
      if (op.kind == OpKind::Backward) last_backward = &op;
      if (op.kind != OpKind::Update) continue;
      ASSERT_NE(last_backward, nullptr);
      EXPECT_EQ(last_backward->microbatch, plan.microbatches - 1);
      EXPECT_EQ(op.step, last_backward->step);
      EXPECT_EQ(op.microbatch, -1);
      EXPECT_EQ(op.weight_version, ++updates);
    }
    EXPECT_EQ(updates, 3);
  }
}

TEST(PipeDream2BW, NeedsAtLeastPMicrobatches) {
  try {
    generate_schedule({ScheduleKind::PipeDream2BW, 4, 2, 1, 0});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(),
                 "pipedream-2bw needs microbatches (2) >= pp (4) so that two weight versions "
                 "suffice; try microbatches = 4");
  }
}

}  // namespace
}  // namespace pipelab
