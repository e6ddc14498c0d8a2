#include <gtest/gtest.h>

#include "core/schedule/generators.h"
#include "core/schedule/schedule_stats.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

TEST(GPipe, AllForwardsThenAllBackwardsOnEveryStage) {
  for (int pp : {1, 2, 4, 7}) {
    for (int m : {1, 3, 8}) {
      const Schedule schedule = generate_gpipe(pp, m);
      ASSERT_EQ(schedule.device_count(), pp);
      EXPECT_EQ(schedule.kind, ScheduleKind::GPipe);
      EXPECT_FALSE(schedule.lowered);
      for (int stage = 0; stage < pp; ++stage) {
        const auto& ops = schedule.devices[stage];
        ASSERT_EQ(static_cast<int>(ops.size()), 2 * m);
        for (int i = 0; i < m; ++i) {
          EXPECT_EQ(ops[i].kind, OpKind::Forward);
          EXPECT_EQ(ops[i].microbatch, i);
          EXPECT_EQ(ops[m + i].kind, OpKind::Backward);
          EXPECT_EQ(ops[m + i].microbatch, i);
        }
        for (const Op& op : ops) {
          EXPECT_EQ(op.stage, stage);
          EXPECT_EQ(op.device, stage);
          EXPECT_EQ(op.weight_version, 0);
        }
      }
    }
  }
}

TEST(GPipe, HoldsEveryMicrobatchInFlight) {
  for (int pp : {1, 3, 8})
    for (int m : {1, 4, 16})
      for (int stage = 0; stage < pp; ++stage)
        EXPECT_EQ(peak_inflight_microbatches(generate_gpipe(pp, m), stage), m);
}

TEST(GPipe, OneMicrobatchIsNaiveModelParallelism) {
  // One device works at a time: the makespan is the sum of all the work.
  const int pp = 4;
  const Schedule schedule = generate_gpipe(pp, 1);
  EXPECT_DOUBLE_EQ(testing::unit_time_makespan(schedule, 1, 1, 1), pp * 3.0);
}

}  // namespace
}  // namespace pipelab
