#include <gtest/gtest.h>

#include <algorithm>

#include "core/schedule/generators.h"
#include "core/schedule/schedule_stats.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

TEST(ZeroBubbleH1, SplitsEveryBackwardIntoBIAndBW) {
  const Schedule schedule = generate_zb_h1(4, 6);
  for (int stage = 0; stage < 4; ++stage) {
    const auto& ops = schedule.devices[stage];
    EXPECT_TRUE(testing::ops_of_kind(ops, OpKind::Backward).empty());
    EXPECT_EQ(testing::ops_of_kind(ops, OpKind::Forward).size(), 6u);
    EXPECT_EQ(testing::ops_of_kind(ops, OpKind::BackwardInput).size(), 6u);
    EXPECT_EQ(testing::ops_of_kind(ops, OpKind::BackwardWeight).size(), 6u);
  }
}

TEST(ZeroBubbleH1, KeepsOneFOneBOrderForForwardsAndInputGradients) {
  // Dropping the BWs leaves exactly 1F1B's sequence (BI in place of B).
  for (int pp : {1, 2, 4, 6})
    for (int m : {1, 3, 6, 12}) {
      const Schedule zb = generate_zb_h1(pp, m);
      const Schedule plain = generate_1f1b(pp, m);
      for (int stage = 0; stage < pp; ++stage) {
        std::vector<Op> without_bw;
        for (const Op& op : zb.devices[stage])
          if (op.kind != OpKind::BackwardWeight) without_bw.push_back(op);
        ASSERT_EQ(without_bw.size(), plain.devices[stage].size());
        for (size_t i = 0; i < without_bw.size(); ++i) {
          const bool forward = plain.devices[stage][i].kind == OpKind::Forward;
          EXPECT_EQ(without_bw[i].kind, forward ? OpKind::Forward : OpKind::BackwardInput);
          EXPECT_EQ(without_bw[i].microbatch, plain.devices[stage][i].microbatch);
        }
      }
    }
}

TEST(ZeroBubbleH1, StageSDefersEachBWBySMicrobatches) {
  // Steady state (BI of micro-batch i, i < m - warm-up): the next op is the BW
  // of micro-batch i - s, or the next F while i < s. Cool-down: each BI is
  // followed by the oldest pending BW. BWs run in micro-batch order.
  for (int pp : {2, 4, 8})
    for (int m : {1, 4, 8, 16}) {
      const Schedule schedule = generate_zb_h1(pp, m);
      for (int stage = 0; stage < pp; ++stage) {
        const auto& ops = schedule.devices[stage];
        const int warmup = std::min(pp - stage - 1, m);
        int weight_grads_done = 0;
        for (size_t i = 0; i < ops.size(); ++i) {
          if (ops[i].kind == OpKind::BackwardWeight) {
            EXPECT_EQ(ops[i].microbatch, weight_grads_done++);
          }
          if (ops[i].kind != OpKind::BackwardInput) continue;
          const int mb = ops[i].microbatch;
          ASSERT_LT(i + 1, ops.size());
          const Op& next = ops[i + 1];
          const bool steady = mb < m - warmup;
          const bool last_steady = mb == m - warmup - 1;
          if (steady && mb < stage) {
            // Not deferred yet: the next F (or, after the last steady BI, the
            // cool-down or the deferred BWs).
            if (!last_steady) {
              EXPECT_EQ(next.kind, OpKind::Forward);
            }
          } else {
            EXPECT_EQ(next.kind, OpKind::BackwardWeight);
            if (steady) {
              EXPECT_EQ(next.microbatch, mb - stage);
            }
          }
        }
      }
    }
}

TEST(ZeroBubbleH1, SamePeakMemoryAs1F1B) {
  // In flight until BW: every stage holds min(p, m), 1F1B's peak (its stage 0).
  // In flight until BI: stage s holds min(p - s, m), exactly as in 1F1B.
  for (int pp : {1, 2, 4, 8, 16})
    for (int m : {1, 3, 8, 16, 64}) {
      const Schedule zb = generate_zb_h1(pp, m);
      const Schedule plain = generate_1f1b(pp, m);
      for (int stage = 0; stage < pp; ++stage) {
        EXPECT_EQ(peak_inflight_microbatches(zb, stage, InflightUntil::LastBackward),
                  peak_inflight_microbatches(plain, 0));
        EXPECT_EQ(peak_inflight_microbatches(zb, stage, InflightUntil::InputGradient),
                  std::min(pp - stage, m));
      }
    }
}

TEST(ZeroBubbleH1, BubbleIsAThirdOf1F1BsWithUnitCosts) {
  // The paper's figures: 1F1B (p - 1)(F + B + W), ZB-H1 (p - 1)(F + B - W).
  for (int pp : {2, 3, 4, 8})
    for (int m : {pp, 2 * pp, 24}) {
      const double work = 3.0 * m;
      const double zb = testing::unit_time_makespan(generate_zb_h1(pp, m), 1, 1, 1);
      const double plain = testing::unit_time_makespan(generate_1f1b(pp, m), 1, 1, 1);
      EXPECT_DOUBLE_EQ(plain - work, 3.0 * (pp - 1));
      EXPECT_DOUBLE_EQ(zb - work, 1.0 * (pp - 1)) << "pp " << pp << " m " << m;
    }
}

}  // namespace
}  // namespace pipelab
