// DualPipeV: the order against PyTorch's ScheduleDualPipeV, the V placement,
// the micro-batch rule, and its place beside zb-v and 1f1b at equal work.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/schedule/generators.h"
#include "core/schedule/validator.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

// Derived from torch.distributed.pipelining's ScheduleDualPipeV
// (_calculate_single_rank_operations) by running its algorithm for these
// (p, m). An overlapped pair, torch's "(0F3;3B1)OVERLAP_F_B", is written as its
// two sub-actions in order, "0F3 3B1", as PipeLab lists it. B is a fused
// backward, I a BI, W a BW.
const testing::TorchOrder kTorchOrders[] = {
    {1, 2,
     {"0F0 1F0 0F1 1B0 1F1 0B0 1B1 0I1 0W1"}},
    {2, 4,
     {"0F0 0F1 0F2 3F0 3I0 3W0 3F1 0F3 3B1 3F2 0B0 3B2 3F3 0B1 3B3 0I2 0W2 0I3 0W3",
      "1F0 2F0 1F1 2F1 1F2 2B0 2F2 1B0 1F3 2B1 2F3 1B1 2B2 1B2 2I3 1I3 2W3 1W3"}},
    {2, 5,
     {"0F0 0F1 0F2 3F0 3I0 3W0 3F1 0F3 3B1 3F2 0B0 0F4 3B2 3F3 0B1 3B3 3F4 0B2 3B4 0I3 0W3 0I4 0W4",
      "1F0 2F0 1F1 2F1 1F2 2B0 2F2 1B0 1F3 2B1 2F3 1B1 1F4 2B2 2F4 1B2 2B3 1B3 2I4 1I4 2W4 1W4"}},
    {3, 6,
     {"0F0 0F1 0F2 0F3 0F4 5F0 5I0 5W0 5F1 5I1 5W1 5F2 0F5 5B2 5F3 0B0 5B3 5F4 0B1 5B4 5F5 0B2 "
      "5B5 0I3 0W3 0I4 0W4 0I5 0W5",
      "1F0 1F1 1F2 4F0 1F3 4F1 4I0 4W0 4F2 1F4 4B1 4F3 1B0 1F5 4B2 4F4 1B1 4B3 4F5 1B2 4B4 1B3 "
      "4I5 1I4 4W5 1I5 1W4 1W5",
      "2F0 3F0 2F1 3F1 2F2 3F2 2F3 3B0 3F3 2B0 2F4 3B1 3F4 2B1 2F5 3B2 3F5 2B2 3B3 2B3 3B4 2I4 "
      "3I5 2I5 2W4 3W5 2W5"}},
    {3, 8,
     {"0F0 0F1 0F2 0F3 0F4 5F0 5I0 5W0 5F1 5I1 5W1 5F2 0F5 5B2 5F3 0B0 0F6 5B3 5F4 0B1 0F7 5B4 "
      "5F5 0B2 5B5 5F6 0B3 5B6 5F7 0B4 5B7 0I5 0W5 0I6 0W6 0I7 0W7",
      "1F0 1F1 1F2 4F0 1F3 4F1 4I0 4W0 4F2 1F4 4B1 4F3 1B0 1F5 4B2 4F4 1B1 1F6 4B3 4F5 1B2 1F7 "
      "4B4 4F6 1B3 4B5 4F7 1B4 4B6 1B5 4I7 1I6 4W7 1I7 1W6 1W7",
      "2F0 3F0 2F1 3F1 2F2 3F2 2F3 3B0 3F3 2B0 2F4 3B1 3F4 2B1 2F5 3B2 3F5 2B2 2F6 3B3 3F6 2B3 "
      "2F7 3B4 3F7 2B4 3B5 2B5 3B6 2I6 3I7 2I7 2W6 3W7 2W7"}},
    {4, 8,
     {"0F0 0F1 0F2 0F3 0F4 0F5 0F6 7F0 7I0 7W0 7F1 7I1 7W1 7F2 7I2 7W2 7F3 0F7 7B3 7F4 0B0 7B4 "
      "7F5 0B1 7B5 7F6 0B2 7B6 7F7 0B3 7B7 0I4 0W4 0I5 0W5 0I6 0W6 0I7 0W7",
      "1F0 1F1 1F2 1F3 1F4 6F0 1F5 6F1 6I0 6W0 6F2 6I1 6W1 6F3 1F6 6B2 6F4 1B0 1F7 6B3 6F5 1B1 "
      "6B4 6F6 1B2 6B5 6F7 1B3 6B6 1B4 6I7 1I5 6W7 1I6 1W5 1I7 1W6 1W7",
      "2F0 2F1 2F2 5F0 2F3 5F1 2F4 5F2 5I0 5W0 5F3 2F5 5B1 5F4 2B0 2F6 5B2 5F5 2B1 2F7 5B3 5F6 "
      "2B2 5B4 5F7 2B3 5B5 2B4 5B6 2I5 5I7 2I6 2W5 2I7 5W7 2W6 2W7",
      "3F0 4F0 3F1 4F1 3F2 4F2 3F3 4F3 3F4 4B0 4F4 3B0 3F5 4B1 4F5 3B1 3F6 4B2 4F6 3B2 3F7 4B3 "
      "4F7 3B3 4B4 3B4 4B5 3B5 4I6 3I6 4I7 3I7 4W6 3W6 4W7 3W7"}},
    {4, 10,
     {"0F0 0F1 0F2 0F3 0F4 0F5 0F6 7F0 7I0 7W0 7F1 7I1 7W1 7F2 7I2 7W2 7F3 0F7 7B3 7F4 0B0 0F8 "
      "7B4 7F5 0B1 0F9 7B5 7F6 0B2 7B6 7F7 0B3 7B7 7F8 0B4 7B8 7F9 0B5 7B9 0I6 0W6 0I7 0W7 0I8 "
      "0W8 0I9 0W9",
      "1F0 1F1 1F2 1F3 1F4 6F0 1F5 6F1 6I0 6W0 6F2 6I1 6W1 6F3 1F6 6B2 6F4 1B0 1F7 6B3 6F5 1B1 "
      "1F8 6B4 6F6 1B2 1F9 6B5 6F7 1B3 6B6 6F8 1B4 6B7 6F9 1B5 6B8 1B6 6I9 1I7 6W9 1I8 1W7 1I9 "
      "1W8 1W9",
      "2F0 2F1 2F2 5F0 2F3 5F1 2F4 5F2 5I0 5W0 5F3 2F5 5B1 5F4 2B0 2F6 5B2 5F5 2B1 2F7 5B3 5F6 "
      "2B2 2F8 5B4 5F7 2B3 2F9 5B5 5F8 2B4 5B6 5F9 2B5 5B7 2B6 5B8 2I7 5I9 2I8 2W7 2I9 5W9 2W8 "
      "2W9",
      "3F0 4F0 3F1 4F1 3F2 4F2 3F3 4F3 3F4 4B0 4F4 3B0 3F5 4B1 4F5 3B1 3F6 4B2 4F6 3B2 3F7 4B3 "
      "4F7 3B3 3F8 4B4 4F8 3B4 3F9 4B5 4F9 3B5 4B6 3B6 4B7 3B7 4I8 3I8 4I9 3I9 4W8 3W8 4W9 3W9"}},
};

TEST(DualPipeV, OrderEqualsTorchScheduleDualPipeV) {
  testing::expect_torch_orders(generate_dualpipe_v, kTorchOrders);
}

TEST(DualPipeV, PlacesTheStagesInAV) {
  const Schedule schedule = generate_dualpipe_v(4, 8);
  EXPECT_EQ(schedule.chunks, 2);
  EXPECT_TRUE(schedule.layout().v_shape);
  for (int rank = 0; rank < 4; ++rank)
    for (const Op& op : schedule.devices[rank]) {
      EXPECT_EQ(op.device, rank);
      EXPECT_EQ(op.stage, op.chunk == 0 ? rank : 7 - rank);
    }
}

// Every micro-batch runs F once per chunk and its backward once: as a fused B
// or as a BI followed later by its BW.
TEST(DualPipeV, EveryMicrobatchHasOneForwardAndOneBackwardPerChunk) {
  for (int pp : {1, 2, 3, 4, 8})
    for (int m : {2 * pp, 2 * pp + 1, 3 * pp, 4 * pp + 3}) {
      const Schedule schedule = generate_dualpipe_v(pp, m);
      for (int rank = 0; rank < pp; ++rank) {
        std::vector<std::vector<int>> forwards(2, std::vector<int>(m, 0));
        std::vector<std::vector<int>> backwards(2, std::vector<int>(m, 0));
        std::vector<std::vector<int>> pending_weight(2, std::vector<int>(m, 0));
        for (const Op& op : schedule.devices[rank]) {
          ASSERT_LT(op.microbatch, m);
          if (op.kind == OpKind::Forward) ++forwards[op.chunk][op.microbatch];
          if (op.kind == OpKind::Backward || op.kind == OpKind::BackwardInput)
            ++backwards[op.chunk][op.microbatch];
          if (op.kind == OpKind::BackwardInput) ++pending_weight[op.chunk][op.microbatch];
          if (op.kind == OpKind::BackwardWeight) {
            EXPECT_EQ(pending_weight[op.chunk][op.microbatch], 1) << "BW before its BI";
            --pending_weight[op.chunk][op.microbatch];
          }
        }
        for (int chunk = 0; chunk < 2; ++chunk)
          for (int mb = 0; mb < m; ++mb) {
            SCOPED_TRACE("pp " + std::to_string(pp) + " m " + std::to_string(m) + " rank " +
                         std::to_string(rank) + " chunk " + std::to_string(chunk) + " mb " +
                         std::to_string(mb));
            EXPECT_EQ(forwards[chunk][mb], 1);
            EXPECT_EQ(backwards[chunk][mb], 1);
            EXPECT_EQ(pending_weight[chunk][mb], 0);
          }
      }
    }
}

TEST(DualPipeV, PassesTheValidator) {
  for (int pp : {1, 2, 3, 4, 6, 8})
    for (int m : {2 * pp, 2 * pp + 1, 3 * pp, 4 * pp, 32}) {
      if (m < 2 * pp) continue;
      const ValidationReport report = validate_schedule(generate_dualpipe_v(pp, m));
      EXPECT_TRUE(report.ok()) << "pp " << pp << " m " << m << "\n" << testing::errors_text(report);
    }
}

TEST(DualPipeV, RefusesFewerMicrobatchesThanStagesNamingTheSmallestThatWorks) {
  EXPECT_EQ(dualpipe_v_microbatches_problem(4, 8), "");
  EXPECT_EQ(dualpipe_v_microbatches_problem(4, 7),
            "dualpipev needs microbatches (7) >= its stage count 2 * pp = 8 (as PyTorch's "
            "ScheduleDualPipeV); try microbatches = 8");
  EXPECT_THROW(generate_dualpipe_v(4, 7), std::invalid_argument);
  EXPECT_THROW(generate_dualpipe_v(2, 1), std::invalid_argument);
}

TEST(DualPipeV, NeedsTwoChunks) {
  EXPECT_THROW(generate_schedule({ScheduleKind::DualPipeV, 4, 8, 1, 0}), std::invalid_argument);
  EXPECT_THROW(generate_schedule({ScheduleKind::DualPipeV, 4, 8, 3, 0}), std::invalid_argument);
  EXPECT_NO_THROW(generate_schedule({ScheduleKind::DualPipeV, 4, 8, 2, 0}));
}

}  // namespace
}  // namespace pipelab
