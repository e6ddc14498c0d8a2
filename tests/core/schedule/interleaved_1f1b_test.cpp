#include <gtest/gtest.h>

#include <algorithm>

#include "core/schedule/generators.h"
#include "core/schedule/schedule_stats.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

TEST(Interleaved1F1B, DeviceHoldsEveryPthStage) {
  const int pp = 4, chunks = 3, m = 8;
  const Schedule schedule = generate_interleaved_1f1b(pp, m, chunks);
  EXPECT_EQ(schedule.stages(), 12);
  for (int device = 0; device < pp; ++device) {
    std::vector<int> forwards_per_stage(schedule.stages(), 0);
    for (const Op& op : schedule.devices[device]) {
      EXPECT_EQ(op.stage % pp, device);
      EXPECT_EQ(op.chunk, op.stage / pp);
      EXPECT_EQ(op.device, device);
      if (op.kind == OpKind::Forward) ++forwards_per_stage[op.stage];
    }
    // Stages d, d + p, d + 2p, each with all m forwards.
    for (int stage = 0; stage < schedule.stages(); ++stage)
      EXPECT_EQ(forwards_per_stage[stage], stage % pp == device ? m : 0);
  }
}

TEST(Interleaved1F1B, MicrobatchesGoThroughEachChunkInGroupsOfP) {
  for (int pp : {2, 3, 4}) {
    for (int chunks : {2, 3}) {
      for (int m : {pp, 2 * pp, 3 * pp}) {
        const Schedule schedule = generate_interleaved_1f1b(pp, m, chunks);
        for (int device = 0; device < pp; ++device) {
          const auto forwards = testing::ops_of_kind(schedule.devices[device], OpKind::Forward);
          const auto backwards = testing::ops_of_kind(schedule.devices[device], OpKind::Backward);
          ASSERT_EQ(static_cast<int>(forwards.size()), m * chunks);
          ASSERT_EQ(static_cast<int>(backwards.size()), m * chunks);
          int k = 0;
          for (int group = 0; group < m / pp; ++group)
            for (int chunk = 0; chunk < chunks; ++chunk)
              for (int i = 0; i < pp; ++i, ++k) {
                EXPECT_EQ(forwards[k].chunk, chunk);
                EXPECT_EQ(forwards[k].microbatch, group * pp + i);
                EXPECT_EQ(backwards[k].chunk, chunks - 1 - chunk);  // back through the chunks
                EXPECT_EQ(backwards[k].microbatch, group * pp + i);
              }
        }
      }
    }
  }
}

TEST(Interleaved1F1B, MegatronWarmupCount) {
  for (int pp : {1, 2, 4, 8}) {
    for (int chunks : {2, 3}) {
      for (int m : {pp, 2 * pp, 4 * pp}) {
        const Schedule schedule = generate_interleaved_1f1b(pp, m, chunks);
        for (int device = 0; device < pp; ++device) {
          const int warmup = std::min((pp - device - 1) * 2 + (chunks - 1) * pp, m * chunks);
          // The warm-up forwards, then (if any forward is left) one more
          // forward before the first backward.
          const int expected = warmup < m * chunks ? warmup + 1 : warmup;
          EXPECT_EQ(forwards_before_first_backward(schedule, device), expected)
              << "pp " << pp << " chunks " << chunks << " m " << m << " device " << device;
        }
      }
    }
  }
}

TEST(Interleaved1F1B, OneChunkIsPlain1F1B) {
  const Schedule interleaved = generate_interleaved_1f1b(4, 6, 1);
  const Schedule plain = generate_1f1b(4, 6);
  EXPECT_EQ(interleaved.kind, ScheduleKind::Interleaved1F1B);
  for (int device = 0; device < 4; ++device) {
    ASSERT_EQ(interleaved.devices[device].size(), plain.devices[device].size());
    for (size_t i = 0; i < plain.devices[device].size(); ++i) {
      EXPECT_EQ(interleaved.devices[device][i].kind, plain.devices[device][i].kind);
      EXPECT_EQ(interleaved.devices[device][i].microbatch, plain.devices[device][i].microbatch);
    }
  }
}

TEST(Interleaved1F1B, BubbleShrinksByTheChunkCount) {
  // A device's work is split over its chunks: each virtual stage costs 1/v.
  // 1F1B's bubble is (p - 1)(f + b + w); interleaving divides it by about v.
  for (int pp : {2, 4, 8}) {
    const int m = 2 * pp;
    const double work = 3.0 * m;
    const double plain_bubble = testing::unit_time_makespan(generate_1f1b(pp, m), 1, 1, 1) - work;
    EXPECT_DOUBLE_EQ(plain_bubble, 3.0 * (pp - 1));
    for (int chunks : {2, 4}) {
      const double cost = 1.0 / chunks;
      const double bubble =
          testing::unit_time_makespan(generate_interleaved_1f1b(pp, m, chunks), cost, cost, cost) -
          work;
      EXPECT_LT(bubble, plain_bubble) << "pp " << pp << " chunks " << chunks;
      EXPECT_NEAR(bubble, plain_bubble / chunks, 1e-9) << "pp " << pp << " chunks " << chunks;
    }
  }
}

}  // namespace
}  // namespace pipelab
