// The overhead breakdown splits each device's window into compute,
// recomputation, load imbalance and bubble, summing to 1; on balanced GPipe
// stages the bubble share is the textbook formula.
#include "core/trace/overhead_breakdown.h"

#include <gtest/gtest.h>

#include "core/schedule/lowering.h"
#include "core/sim/bubble_formula.h"
#include "core/sim/simulator.h"
#include "tests/core/trace/trace_test_helpers.h"

namespace pipelab {
namespace {

double sum(const OverheadShares& s) {
  return s.compute + s.recompute + s.load_imbalance + s.bubble;
}

ParallelPlan gpipe_plan(int pp, int microbatches, bool recompute) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::GPipe;
  plan.pp = pp;
  plan.microbatches = microbatches;
  plan.recompute = recompute;
  return plan;
}

TEST(OverheadBreakdown, BalancedGPipeBubbleShareIsTheFormula) {
  UnitCosts costs;
  costs.f = 1.0;
  costs.b = 2.0;
  costs.w = 0.0;
  for (int pp : {2, 4}) {
    for (int m : {1, 4, 8}) {
      SCOPED_TRACE("pp " + std::to_string(pp) + ", m " + std::to_string(m));
      const SimulationResult result =
          simulate(build_schedule(gpipe_plan(pp, m, false)), CostModel::unit(costs));
      const std::vector<OverheadShares> shares = overhead_breakdown(result.trace);
      ASSERT_EQ(shares.size(), static_cast<size_t>(pp));
      const double formula = theoretical_bubble(ScheduleKind::GPipe, pp, m, 1, costs);
      for (const OverheadShares& share : shares) {
        EXPECT_NEAR(sum(share), 1.0, 1e-12);
        EXPECT_NEAR(share.bubble, formula, 1e-9);
        EXPECT_NEAR(share.load_imbalance, 0.0, 1e-9);
        EXPECT_EQ(share.recompute, 0.0);
        EXPECT_NEAR(share.compute, 1.0 - formula, 1e-9);
      }
    }
  }
}

TEST(OverheadBreakdown, RecomputationIsItsOwnShare) {
  UnitCosts costs;
  costs.w = 0.0;
  const SimulationResult result =
      simulate(build_schedule(gpipe_plan(4, 8, true)), CostModel::unit(costs));
  const std::vector<OverheadShares> shares = overhead_breakdown(result.trace);
  ASSERT_EQ(shares.size(), 4u);
  for (const OverheadShares& share : shares) {
    EXPECT_NEAR(sum(share), 1.0, 1e-12);
    // Each backward is preceded by its forward again, as long as the forward
    // (f = 1): recomputation is half as long as F and B together.
    EXPECT_GT(share.recompute, 0.0);
    EXPECT_NEAR(share.recompute * 3.0, share.compute + share.recompute, 1e-9);
  }
}

TEST(OverheadBreakdown, LighterDevicesShowLoadImbalance) {
  // Device 0 computes 6 of the 8 seconds, device 1 only 4.
  const std::vector<OverheadShares> shares = overhead_breakdown(test::make_two_device_trace());
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0].compute, 0.75);
  EXPECT_DOUBLE_EQ(shares[0].load_imbalance, 0.0);
  EXPECT_DOUBLE_EQ(shares[0].bubble, 0.25);
  EXPECT_DOUBLE_EQ(shares[1].compute, 0.5);
  EXPECT_DOUBLE_EQ(shares[1].load_imbalance, 0.25);
  EXPECT_DOUBLE_EQ(shares[1].bubble, 0.25);
}

TEST(OverheadBreakdown, EmptyTraceHasNoShares) { EXPECT_TRUE(overhead_breakdown(Trace{}).empty()); }

}  // namespace
}  // namespace pipelab
