#include <gtest/gtest.h>

#include <algorithm>

#include "core/schedule/generators.h"
#include "core/schedule/schedule_stats.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

TEST(OneFOneB, WarmupThenAlternationThenCooldown) {
  for (int pp : {1, 2, 3, 4, 8}) {
    for (int m : {1, 2, 3, 5, 8, 13}) {
      const Schedule schedule = generate_1f1b(pp, m);
      for (int stage = 0; stage < pp; ++stage) {
        const auto& ops = schedule.devices[stage];
        const int warmup = std::min(pp - stage - 1, m);
        ASSERT_EQ(static_cast<int>(ops.size()), 2 * m);
        // Expected pattern: F x warmup, (F, B) x (m - warmup), B x warmup,
        // forwards and backwards each in micro-batch order.
        int next_forward = 0, next_backward = 0;
        for (int i = 0; i < 2 * m; ++i) {
          bool forward;
          if (i < warmup) {
            forward = true;
          } else if (i < 2 * m - warmup) {
            forward = (i - warmup) % 2 == 0;
          } else {
            forward = false;
          }
          EXPECT_EQ(ops[i].kind, forward ? OpKind::Forward : OpKind::Backward)
              << "pp " << pp << " m " << m << " stage " << stage << " op " << i;
          EXPECT_EQ(ops[i].microbatch, forward ? next_forward++ : next_backward++);
        }
      }
    }
  }
}

TEST(OneFOneB, PeakInFlightIsPipelineDepthLeftOrM) {
  for (int pp : {1, 2, 4, 8, 16})
    for (int m : {1, 3, 4, 8, 32}) {
      const Schedule schedule = generate_1f1b(pp, m);
      for (int stage = 0; stage < pp; ++stage) {
        EXPECT_EQ(peak_inflight_microbatches(schedule, stage), std::min(pp - stage, m));
        EXPECT_EQ(forwards_before_first_backward(schedule, stage), std::min(pp - stage, m));
      }
    }
}

TEST(OneFOneB, SameMakespanAsGPipeWithUnitCosts) {
  // Both pay (p - 1)(f + b + w) of bubble; 1F1B only saves memory.
  for (int pp : {1, 2, 4})
    for (int m : {1, 4, 8}) {
      const double expected = 3.0 * (m + pp - 1);
      EXPECT_DOUBLE_EQ(testing::unit_time_makespan(generate_1f1b(pp, m), 1, 1, 1), expected);
      EXPECT_DOUBLE_EQ(testing::unit_time_makespan(generate_gpipe(pp, m), 1, 1, 1), expected);
    }
}

}  // namespace
}  // namespace pipelab
