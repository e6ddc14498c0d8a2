#include <gtest/gtest.h>

#include <map>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "core/schedule/validator.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

// Everything about an op but the weight version and delay.
bool same_place(const Op& a, const Op& b) {
  return a.kind == b.kind && a.device == b.device && a.stage == b.stage && a.chunk == b.chunk &&
         a.microbatch == b.microbatch && a.step == b.step;
}

TEST(PipeMare, OrderIsPipeDreams) {
  for (int pp : {1, 2, 4, 5})
    for (int m : {1, 3, 4})
      for (int steps : {0, 3}) {
        const Schedule mare = generate_schedule({ScheduleKind::PipeMare, pp, m, 1, steps});
        const Schedule dream = generate_schedule({ScheduleKind::PipeDream, pp, m, 1, steps});
        EXPECT_EQ(mare.kind, ScheduleKind::PipeMare);
        ASSERT_EQ(mare.steps, dream.steps);
        ASSERT_EQ(mare.devices.size(), dream.devices.size());
        for (size_t d = 0; d < mare.devices.size(); ++d) {
          ASSERT_EQ(mare.devices[d].size(), dream.devices[d].size());
          for (size_t i = 0; i < mare.devices[d].size(); ++i) {
            const Op& a = mare.devices[d][i];
            const Op& b = dream.devices[d][i];
            EXPECT_TRUE(same_place(a, b))
                << "pp " << pp << " m " << m << " device " << d << " op " << i;
            // Forwards read what pipedream's read: the updates done so far.
            if (a.kind == OpKind::Forward) {
              EXPECT_EQ(a.weight_version, b.weight_version);
            }
          }
        }
      }
}

TEST(PipeMare, BackwardReadsTheNewestVersionAndRecordsItsDelay) {
  const int pp = 4, m = 2;
  const Schedule schedule = generate_pipemare(pp, m, 4);
  for (int stage = 0; stage < pp; ++stage) {
    int backwards_done = 0;
    std::map<std::pair<int, int>, int> forward_version;
    int steady_delay = -1;
    for (const Op& op : schedule.devices[stage]) {
      if (op.kind == OpKind::Forward) {
        EXPECT_EQ(op.weight_delay, 0);
        forward_version[{op.step, op.microbatch}] = op.weight_version;
        continue;
      }
      EXPECT_EQ(op.weight_version, backwards_done);  // one update after every earlier B
      EXPECT_EQ(op.weight_delay, op.weight_version - forward_version.at({op.step, op.microbatch}));
      steady_delay = std::max(steady_delay, op.weight_delay);
      ++backwards_done;
    }
    // In the steady state, p - s - 1 backwards (and updates) run between a
    // micro-batch's F and its B; the last stage runs its B right after its F.
    EXPECT_EQ(steady_delay, pp - stage - 1) << "stage " << stage;
  }
}

TEST(PipeMare, ValidatorAcceptsItOverAGridAndLoweredWithRecompute) {
  for (int pp : {1, 2, 3, 4, 8})
    for (int m : {1, 2, 4, 7, 16}) {
      const Schedule compute = generate_schedule({ScheduleKind::PipeMare, pp, m, 1, 0});
      const ValidationReport report = validate_schedule(compute);
      EXPECT_TRUE(report.ok()) << "pp " << pp << " m " << m << "\n" << testing::errors_text(report);
      for (int dp : {1, 2})
        for (bool recompute : {false, true}) {
          ParallelPlan plan;
          plan.schedule = ScheduleKind::PipeMare;
          plan.pp = pp;
          plan.microbatches = m;
          plan.dp = dp;
          plan.recompute = recompute;
          const Schedule lowered = lower_schedule(compute, plan);
          const ValidationReport lowered_report = validate_schedule(lowered);
          EXPECT_TRUE(lowered_report.ok()) << "pp " << pp << " m " << m << " dp " << dp << "\n"
                                           << testing::errors_text(lowered_report);
          for (const auto& ops : lowered.devices) {
            int updates = 0, backwards = 0;
            for (const Op& op : ops) {
              updates += op.kind == OpKind::Update;
              backwards += op.kind == OpKind::Backward;
            }
            EXPECT_EQ(updates, backwards);  // one U per B, as pipedream
          }
        }
    }
}

TEST(PipeMare, ValidatorRefusesABackwardOnItsForwardsVersionOrAWrongDelay) {
  Schedule stale = generate_pipemare(3, 2, 3);
  Schedule wrong_delay = stale;
  for (Op& op : stale.devices[0])
    if (op.kind == OpKind::Backward && op.weight_delay > 0) {
      op.weight_version -= op.weight_delay;  // what pipedream's stash would give
      op.weight_delay = 0;
      break;
    }
  EXPECT_TRUE(testing::has_error(validate_schedule(stale), {"expected the stage's newest"}));
  for (Op& op : wrong_delay.devices[0])
    if (op.kind == OpKind::Backward && op.weight_delay > 0) {
      ++op.weight_delay;
      break;
    }
  EXPECT_TRUE(testing::has_error(validate_schedule(wrong_delay), {"records a delay of"}));
}

}  // namespace
}  // namespace pipelab
