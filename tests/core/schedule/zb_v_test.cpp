#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/schedule/generators.h"
#include "core/schedule/validator.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

// Derived from torch.distributed.pipelining's ScheduleZBVZeroBubble
// (_calculate_single_rank_operations) by running its algorithm for these
// (p, m), its empty slots left out. p = 2, m = 2 is below torch's 2p - 1:
// torch builds the order for 3 micro-batches and drops micro-batch 2.
const testing::TorchOrder kTorchOrders[] = {
    {2, 2,
     {"0F0 0F1 3F0 3I0 3W0 3F1 3I1 3W1 0I0 0W0 0I1 0W1",
      "1F0 2F0 1F1 2F1 2I0 2W0 1I0 1W0 2I1 2W1 1I1 1W1"}},
    {2, 4,
     {"0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 3W1 0F3 0I0 0W0 3F2 3I2 3W2 0I1 0W1 3F3 3I3 3W3 0I2 0W2 "
      "0I3 0W3",
      "1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1F3 1I1 1W1 2F3 2I2 2W2 1I2 2I3 1I3 1W2 "
      "2W3 1W3"}},
    {3, 5,
     {"0F0 0F1 0F2 0F3 0F4 5F0 5I0 5W0 5F1 5I1 5W1 5F2 5I2 5W2 0I0 0W0 5F3 5I3 5W3 0I1 0W1 5F4 "
      "5I4 5W4 0I2 0W2 0I3 0W3 0I4 0W4",
      "1F0 1F1 1F2 4F0 1F3 4F1 4I0 4W0 4F2 4I1 4W1 1F4 1I0 1W0 4F3 4I2 4W2 1I1 1W1 4F4 4I3 4W3 "
      "1I2 4I4 1I3 1W2 1I4 1W3 4W4 1W4",
      "2F0 3F0 2F1 3F1 2F2 3F2 3I0 3W0 2F3 2I0 2W0 3F3 3I1 3W1 2F4 2I1 2W1 3F4 3I2 3W2 2I2 3I3 "
      "2I3 3I4 2I4 2W2 3W3 3W4 2W3 2W4"}},
    {4, 8,
     {"0F0 0F1 0F2 0F3 0F4 0F5 0F6 7F0 7I0 7W0 7F1 7I1 7W1 7F2 7I2 7W2 7F3 7I3 7W3 0F7 0I0 0W0 "
      "7F4 7I4 7W4 0I1 0W1 7F5 7I5 7W5 0I2 0W2 7F6 7I6 7W6 0I3 0W3 7F7 7I7 7W7 0I4 0W4 0I5 0W5 "
      "0I6 0W6 0I7 0W7",
      "1F0 1F1 1F2 1F3 1F4 6F0 1F5 6F1 6I0 6W0 6F2 6I1 6W1 6F3 6I2 6W2 1F6 1I0 1W0 6F4 6I3 6W3 "
      "1F7 1I1 1W1 6F5 6I4 6W4 1I2 1W2 6F6 6I5 6W5 1I3 1W3 6F7 6I6 6W6 1I4 6I7 1I5 1W4 1I6 1W5 "
      "1I7 1W6 6W7 1W7",
      "2F0 2F1 2F2 5F0 2F3 5F1 2F4 5F2 5I0 5W0 5F3 5I1 5W1 2F5 2I0 2W0 5F4 5I2 5W2 2F6 2I1 2W1 "
      "5F5 5I3 5W3 2F7 2I2 2W2 5F6 5I4 5W4 2I3 2W3 5F7 5I5 5W5 2I4 5I6 2I5 5I7 2I6 2W4 2I7 2W5 "
      "5W6 5W7 2W6 2W7",
      "3F0 4F0 3F1 4F1 3F2 4F2 3F3 4F3 4I0 4W0 3F4 3I0 3W0 4F4 4I1 4W1 3F5 3I1 3W1 4F5 4I2 4W2 "
      "3F6 3I2 3W2 4F6 4I3 4W3 3F7 3I3 3W3 4F7 4I4 4W4 3I4 4I5 3I5 4I6 3I6 4I7 3I7 3W4 4W5 4W6 "
      "4W7 3W5 3W6 3W7"}},
};

TEST(ZeroBubbleV, OrderEqualsTorchScheduleZBVZeroBubble) {
  testing::expect_torch_orders(generate_zb_v, kTorchOrders);
}

TEST(ZeroBubbleV, PlacesTheStagesInAV) {
  const Schedule schedule = generate_zb_v(4, 8);
  EXPECT_EQ(schedule.chunks, 2);
  EXPECT_EQ(schedule.stages(), 8);
  const DeviceLayout layout = schedule.layout();
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(layout.stage_of(rank, 0), rank);
    EXPECT_EQ(layout.stage_of(rank, 1), 7 - rank);
    EXPECT_EQ(layout.rank_of_stage(rank), rank);
    EXPECT_EQ(layout.rank_of_stage(7 - rank), rank);
    EXPECT_EQ(layout.chunk_of_stage(7 - rank), 1);
    for (const Op& op : schedule.devices[rank]) {
      EXPECT_EQ(op.device, rank);
      EXPECT_EQ(op.stage, layout.stage_of(rank, op.chunk));
    }
  }
}

TEST(ZeroBubbleV, EveryMicrobatchHasForwardAndSplitBackwardOnBothChunks) {
  for (int pp : {1, 2, 3, 4, 8})
    for (int m : {1, 2, 3, 5, 8, 16}) {
      const Schedule schedule = generate_zb_v(pp, m);
      for (int rank = 0; rank < pp; ++rank) {
        const auto& ops = schedule.devices[rank];
        EXPECT_TRUE(testing::ops_of_kind(ops, OpKind::Backward).empty());
        for (OpKind kind : {OpKind::Forward, OpKind::BackwardInput, OpKind::BackwardWeight}) {
          std::vector<std::vector<int>> seen(2, std::vector<int>(m, 0));
          for (const Op& op : testing::ops_of_kind(ops, kind)) {
            ASSERT_GE(op.chunk, 0);
            ASSERT_LT(op.chunk, 2);
            ASSERT_LT(op.microbatch, m);
            ++seen[op.chunk][op.microbatch];
          }
          for (int chunk = 0; chunk < 2; ++chunk)
            for (int mb = 0; mb < m; ++mb)
              EXPECT_EQ(seen[chunk][mb], 1) << "pp " << pp << " m " << m << " rank " << rank
                                            << " chunk " << chunk << " mb " << mb;
        }
      }
    }
}

TEST(ZeroBubbleV, PassesTheValidator) {
  for (int pp : {1, 2, 3, 4, 6, 8})
    for (int m : {1, 2, 3, 4, 7, 8, 16, 32}) {
      const ValidationReport report = validate_schedule(generate_zb_v(pp, m));
      EXPECT_TRUE(report.ok()) << "pp " << pp << " m " << m << "\n" << testing::errors_text(report);
    }
}

TEST(ZeroBubbleV, HasLessBubbleThanZbH1And1F1BWithUnitCosts) {
  // Unit costs per chunk (F = BI = BW = 1); zb-h1 and 1f1b get a device's worth
  // (both chunks: 2 each) so every schedule does the same work per device.
  for (int pp : {2, 4, 8})
    for (int m : {2 * pp, 4 * pp}) {
      const double zb_v = testing::unit_time_makespan(generate_zb_v(pp, m), 1, 1, 1);
      const double zb_h1 = testing::unit_time_makespan(generate_zb_h1(pp, m), 2, 2, 2);
      const double one_f_one_b = testing::unit_time_makespan(generate_1f1b(pp, m), 2, 2, 2);
      ASSERT_GT(zb_v, 0) << "zb-v deadlocks at pp " << pp << " m " << m;
      const double busy = 6.0 * m;  // per device
      EXPECT_LT(zb_v, zb_h1) << "pp " << pp << " m " << m;
      EXPECT_LT(zb_v, one_f_one_b) << "pp " << pp << " m " << m;
      // The bubble is a small start-up cost: below zb-h1's (p - 1)(f + b - w).
      EXPECT_LT(zb_v - busy, (pp - 1) * 2.0) << "pp " << pp << " m " << m;
    }
}

TEST(ZeroBubbleV, NeedsTwoChunks) {
  EXPECT_THROW(generate_schedule({ScheduleKind::ZeroBubbleV, 4, 8, 1, 0}), std::invalid_argument);
  EXPECT_THROW(generate_schedule({ScheduleKind::ZeroBubbleV, 4, 8, 3, 0}), std::invalid_argument);
  EXPECT_NO_THROW(generate_schedule({ScheduleKind::ZeroBubbleV, 4, 8, 2, 0}));
}

}  // namespace
}  // namespace pipelab
