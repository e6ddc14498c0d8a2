#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/schedule/generators.h"
#include "core/schedule/schedule_stats.h"
#include "core/schedule/validator.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

// Per-device compute orders of PyTorch's ScheduleInterleaved1F1B
// (torch/distributed/pipelining/schedules.py: R = max(1, m / p) rounds of
// k = m / R micro-batches, warm-up (v-1)k + 2(p-1-rank) capped at m v,
// _get_1f1b_rank_ops without its idle slots), worked out by hand from that
// algorithm. "F4.1" is the forward of stage 4, micro-batch 1.
struct TorchOrder {
  int pp, chunks, microbatches;
  std::vector<std::string> devices;
};

std::string order_text(const std::vector<Op>& ops) {
  std::string text;
  for (const Op& op : ops) {
    if (!text.empty()) text += ' ';
    text += op.kind == OpKind::Forward ? 'F' : 'B';
    text += std::to_string(op.stage) + "." + std::to_string(op.microbatch);
  }
  return text;
}

TEST(Interleaved1F1B, MicrobatchesNotAMultipleOfPpFollowTorchsOrder) {
  const TorchOrder cases[] = {
      {4, 2, 6, {
           "F0.0 F0.1 F0.2 F0.3 F0.4 F0.5 F4.0 F4.1 F4.2 F4.3 F4.4 F4.5 B4.0 B4.1 B4.2 B4.3 B4.4 B4.5 B0.0 B0.1 B0.2 B0.3 B0.4 B0.5",
           "F1.0 F1.1 F1.2 F1.3 F1.4 F1.5 F5.0 F5.1 F5.2 F5.3 F5.4 B5.0 F5.5 B5.1 B5.2 B5.3 B5.4 B5.5 B1.0 B1.1 B1.2 B1.3 B1.4 B1.5",
           "F2.0 F2.1 F2.2 F2.3 F2.4 F2.5 F6.0 F6.1 F6.2 B6.0 F6.3 B6.1 F6.4 B6.2 F6.5 B6.3 B6.4 B6.5 B2.0 B2.1 B2.2 B2.3 B2.4 B2.5",
           "F3.0 F3.1 F3.2 F3.3 F3.4 F3.5 F7.0 B7.0 F7.1 B7.1 F7.2 B7.2 F7.3 B7.3 F7.4 B7.4 F7.5 B7.5 B3.0 B3.1 B3.2 B3.3 B3.4 B3.5",
       }},
      {3, 2, 5, {
           "F0.0 F0.1 F0.2 F0.3 F0.4 F3.0 F3.1 F3.2 F3.3 F3.4 B3.0 B3.1 B3.2 B3.3 B3.4 B0.0 B0.1 B0.2 B0.3 B0.4",
           "F1.0 F1.1 F1.2 F1.3 F1.4 F4.0 F4.1 F4.2 B4.0 F4.3 B4.1 F4.4 B4.2 B4.3 B4.4 B1.0 B1.1 B1.2 B1.3 B1.4",
           "F2.0 F2.1 F2.2 F2.3 F2.4 F5.0 B5.0 F5.1 B5.1 F5.2 B5.2 F5.3 B5.3 F5.4 B5.4 B2.0 B2.1 B2.2 B2.3 B2.4",
       }},
      {2, 3, 3, {
           "F0.0 F0.1 F0.2 F2.0 F2.1 F2.2 F4.0 F4.1 F4.2 B4.0 B4.1 B4.2 B2.0 B2.1 B2.2 B0.0 B0.1 B0.2",
           "F1.0 F1.1 F1.2 F3.0 F3.1 F3.2 F5.0 B5.0 F5.1 B5.1 F5.2 B5.2 B3.0 B3.1 B3.2 B1.0 B1.1 B1.2",
       }},
      {4, 2, 10, {
           "F0.0 F0.1 F0.2 F0.3 F0.4 F4.0 F4.1 F4.2 F4.3 F4.4 F0.5 F0.6 B4.0 F0.7 B4.1 F0.8 B4.2 F0.9 B4.3 F4.5 B4.4 F4.6 B0.0 F4.7 B0.1 F4.8 B0.2 F4.9 B0.3 B0.4 B4.5 B4.6 B4.7 B4.8 B4.9 B0.5 B0.6 B0.7 B0.8 B0.9",
           "F1.0 F1.1 F1.2 F1.3 F1.4 F5.0 F5.1 F5.2 F5.3 F5.4 B5.0 F1.5 B5.1 F1.6 B5.2 F1.7 B5.3 F1.8 B5.4 F1.9 B1.0 F5.5 B1.1 F5.6 B1.2 F5.7 B1.3 F5.8 B1.4 F5.9 B5.5 B5.6 B5.7 B5.8 B5.9 B1.5 B1.6 B1.7 B1.8 B1.9",
           "F2.0 F2.1 F2.2 F2.3 F2.4 F6.0 F6.1 F6.2 B6.0 F6.3 B6.1 F6.4 B6.2 F2.5 B6.3 F2.6 B6.4 F2.7 B2.0 F2.8 B2.1 F2.9 B2.2 F6.5 B2.3 F6.6 B2.4 F6.7 B6.5 F6.8 B6.6 F6.9 B6.7 B6.8 B6.9 B2.5 B2.6 B2.7 B2.8 B2.9",
           "F3.0 F3.1 F3.2 F3.3 F3.4 F7.0 B7.0 F7.1 B7.1 F7.2 B7.2 F7.3 B7.3 F7.4 B7.4 F3.5 B3.0 F3.6 B3.1 F3.7 B3.2 F3.8 B3.3 F3.9 B3.4 F7.5 B7.5 F7.6 B7.6 F7.7 B7.7 F7.8 B7.8 F7.9 B7.9 B3.5 B3.6 B3.7 B3.8 B3.9",
       }},
  };
  for (const TorchOrder& c : cases) {
    SCOPED_TRACE("p=" + std::to_string(c.pp) + " v=" + std::to_string(c.chunks) +
                 " m=" + std::to_string(c.microbatches));
    const Schedule schedule = generate_interleaved_1f1b(c.pp, c.microbatches, c.chunks);
    for (int device = 0; device < c.pp; ++device)
      EXPECT_EQ(order_text(schedule.devices[device]), c.devices[device]) << "device " << device;
    EXPECT_TRUE(validate_schedule(schedule).ok()) << testing::errors_text(validate_schedule(schedule));
    EXPECT_GT(testing::unit_time_makespan(schedule, 1, 1, 1), 0);  // no deadlock
  }
}

TEST(Interleaved1F1B, RefusesMicrobatchesThatAreNotAMultipleOfTheRounds) {
  // p = 4, m = 9: 2 rounds, 9 % 2 != 0 (torch refuses it too).
  EXPECT_EQ(interleaved_microbatches_problem(4, 9),
            "interleaved-1f1b needs microbatches (9) to be a multiple of its round count "
            "max(1, microbatches / pp) = 2 (as PyTorch's ScheduleInterleaved1F1B); every m < 2 * pp "
            "(8) and every multiple of pp works; try microbatches = 8 or 10");
  EXPECT_THROW(generate_interleaved_1f1b(4, 9, 2), std::invalid_argument);
  for (int m = 1; m < 8; ++m) EXPECT_EQ(interleaved_microbatches_problem(4, m), "");
  EXPECT_EQ(interleaved_microbatches_problem(4, 10), "");
}

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
