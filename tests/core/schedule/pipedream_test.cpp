#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/schedule_stats.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

TEST(PipeDream, OneFOneBOverTheWholeWindowWithoutFlush) {
  for (int pp : {1, 2, 4, 5})
    for (int m : {1, 3, 4}) {
      const int steps = 3;
      const Schedule schedule = generate_pipedream(pp, m, steps);
      EXPECT_EQ(schedule.steps, steps);
      const int total = steps * m;
      for (int stage = 0; stage < pp; ++stage) {
        const auto& ops = schedule.devices[stage];
        ASSERT_EQ(static_cast<int>(ops.size()), 2 * total);
        // Warm-up only at the window's start, cool-down only at its end.
        const int warmup = std::min(pp - stage - 1, total);
        int global_forward = 0, global_backward = 0;
        for (int i = 0; i < 2 * total; ++i) {
          const bool forward = i < warmup || (i < 2 * total - warmup && (i - warmup) % 2 == 0);
          EXPECT_EQ(ops[i].kind, forward ? OpKind::Forward : OpKind::Backward);
          // Global micro-batch g is micro-batch g % m of step g / m.
          const int g = forward ? global_forward++ : global_backward++;
          EXPECT_EQ(ops[i].step, g / m);
          EXPECT_EQ(ops[i].microbatch, g % m);
        }
      }
    }
}

TEST(PipeDream, ForwardReadsUpdatesSoFarAndBackwardReadsItsForwardsVersion) {
  const Schedule schedule = generate_pipedream(4, 2, 4);
  for (int stage = 0; stage < 4; ++stage) {
    int backwards_done = 0;
    std::map<std::pair<int, int>, int> forward_version;
    for (const Op& op : schedule.devices[stage]) {
      if (op.kind == OpKind::Forward) {
        EXPECT_EQ(op.weight_version, backwards_done);  // one update after every B
        forward_version[{op.step, op.microbatch}] = op.weight_version;
      } else {
        EXPECT_EQ(op.weight_version, (forward_version[{op.step, op.microbatch}]));
        ++backwards_done;
      }
    }
  }
}

TEST(PipeDream, StageSKeepsPMinusSWeightVersions) {
  for (int pp : {1, 2, 3, 4, 8, 16})
    for (int m : {1, 2, 4, 7, 16}) {
      const Schedule compute = generate_schedule({ScheduleKind::PipeDream, pp, m, 1, 0});
      ParallelPlan plan;
      plan.pp = pp;
      plan.microbatches = m;
      plan.schedule = ScheduleKind::PipeDream;
      const Schedule lowered = lower_schedule(compute, plan);
      for (int stage = 0; stage < pp; ++stage) {
        EXPECT_EQ(peak_live_weight_versions(compute, stage, stage), pp - stage)
            << "pp " << pp << " m " << m << " stage " << stage;
        EXPECT_EQ(peak_live_weight_versions(lowered, stage, stage), pp - stage)
            << "pp " << pp << " m " << m << " stage " << stage;
      }
    }
}

TEST(PipeDream, DefaultWindowReachesTheSteadyState) {
  for (int pp : {1, 2, 4, 8, 16})
    for (int m : {1, 2, 3, 8, 64}) {
      const int steps = default_steps(ScheduleKind::PipeDream, pp, m);
      EXPECT_GE(steps, 2);
      // Stage 0's warm-up (p - 1) plus a full pipeline (p) fit in the window
      // with a step to spare.
      EXPECT_GE(steps * m, 2 * pp + m - 1) << "pp " << pp << " m " << m;
      EXPECT_EQ(generate_schedule({ScheduleKind::PipeDream, pp, m, 1, 0}).steps, steps);
    }
}

TEST(PipeDream, LoweringUpdatesAfterEveryBackward) {
  ParallelPlan plan;
  plan.pp = 3;
  plan.microbatches = 2;
  plan.schedule = ScheduleKind::PipeDream;
  const Schedule lowered = build_schedule(plan);
  for (const auto& ops : lowered.devices) {
    int updates = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::Backward) continue;
      // The U follows the B (after the gradient send, if any).
      size_t j = i + 1;
      while (j < ops.size() && ops[j].kind == OpKind::SendGradient) ++j;
      ASSERT_LT(j, ops.size());
      EXPECT_EQ(ops[j].kind, OpKind::Update);
      EXPECT_EQ(ops[j].microbatch, ops[i].microbatch);
      EXPECT_EQ(ops[j].weight_version, ++updates);
    }
    EXPECT_EQ(updates, lowered.steps * plan.microbatches);
  }
}

}  // namespace
}  // namespace pipelab
