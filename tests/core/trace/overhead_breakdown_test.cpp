// The overhead breakdown splits each device's window into compute,
// recomputation, collectives, load imbalance and bubble, summing to 1; on
// balanced GPipe stages the bubble share is the textbook formula.
#include "core/trace/overhead_breakdown.h"

#include <gtest/gtest.h>

#include "core/io/hardware_catalogue.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/lowering.h"
#include "core/sim/bubble_formula.h"
#include "core/sim/simulator.h"
#include "core/trace/bubbles.h"
#include "tests/core/trace/trace_test_helpers.h"

namespace pipelab {
namespace {

double sum(const OverheadShares& s) {
  return s.compute + s.recompute + s.collectives + s.load_imbalance + s.bubble;
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
        EXPECT_EQ(share.collectives, 0.0);
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

TEST(OverheadBreakdown, PointToPointWaitsStayIdle) {
  // make_two_device_trace's send and receive [2, 2.5] are not collectives.
  for (const OverheadShares& share : overhead_breakdown(test::make_two_device_trace()))
    EXPECT_EQ(share.collectives, 0.0);
}

// Tensor parallelism, as the simulator lists it (the all-reduce after its
// compute op) and as an executor measures it (inside the op): either way the
// all-reduce's time is the collectives' share, not compute or bubble.
TEST(OverheadBreakdown, CollectivesAreTheirOwnShareWhetherAfterOrInsideTheirOp) {
  Trace listed;
  listed.devices = describe_devices(1, 1, 1, 2);
  Trace inside = listed;
  for (int d = 0; d < 2; ++d) {
    // F [0, 1], all-reduce [1, 2], B [2, 4], all-reduce [4, 5], U [5, 6].
    listed.events.push_back(test::make_event(d, OpKind::Forward, 0, 0.0, 1.0));
    listed.events.push_back(test::make_event(d, OpKind::AllReduce, 0, 1.0, 2.0));
    listed.events.push_back(test::make_event(d, OpKind::Backward, 0, 2.0, 4.0));
    listed.events.push_back(test::make_event(d, OpKind::AllReduce, 0, 4.0, 5.0));
    listed.events.push_back(test::make_event(d, OpKind::Update, -1, 5.0, 6.0));
    // F [0, 2] with its all-reduce [1, 2] inside, B [2, 5] with [4, 5].
    inside.events.push_back(test::make_event(d, OpKind::Forward, 0, 0.0, 2.0));
    inside.events.push_back(test::make_event(d, OpKind::AllReduce, 0, 1.0, 2.0));
    inside.events.push_back(test::make_event(d, OpKind::Backward, 0, 2.0, 5.0));
    inside.events.push_back(test::make_event(d, OpKind::AllReduce, 0, 4.0, 5.0));
    inside.events.push_back(test::make_event(d, OpKind::Update, -1, 5.0, 6.0));
  }
  for (const Trace* trace : {&listed, &inside}) {
    const std::vector<OverheadShares> shares = overhead_breakdown(*trace);
    ASSERT_EQ(shares.size(), 2u);
    for (const OverheadShares& share : shares) {
      EXPECT_DOUBLE_EQ(share.collectives, 2.0 / 6.0);
      EXPECT_DOUBLE_EQ(share.compute, 4.0 / 6.0);
      EXPECT_DOUBLE_EQ(share.bubble, 0.0);
      EXPECT_DOUBLE_EQ(share.load_imbalance, 0.0);
    }
  }
  // A device waiting longer in its collective is not imbalanced: the wait is
  // communication (a slower peer, a skewed start).
  listed.events[1].t_begin = 0.5;
  listed.events[0].t_end = 0.5;
  const std::vector<OverheadShares> shares = overhead_breakdown(listed);
  EXPECT_DOUBLE_EQ(shares[0].collectives, 2.5 / 6.0);
  EXPECT_DOUBLE_EQ(shares[0].compute, 3.5 / 6.0);
  EXPECT_DOUBLE_EQ(shares[0].load_imbalance, 0.0);
}

// Tensor parallelism on one stage: all the simulated idle time (which the
// pipeline formula does not predict, pp being 1) is communication.
TEST(OverheadBreakdown, SimulatedTensorParallelCommunicationIsNotABubble) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::OneFOneB;
  plan.pp = 1;
  plan.tp = 2;
  plan.microbatches = 4;
  // A column- then a row-parallel layer: an all-reduce each way per micro-batch.
  ModelSpec model;
  model.input = {1024};
  model.layers = {LayerSpec{}, LayerSpec{}};
  for (LayerSpec& layer : model.layers) {
    layer.type = LayerType::Linear;
    layer.out = 1024;
  }
  const std::vector<StageProfile> stages = profile_stages(model, plan, 64, Precision::Fp32);
  ASSERT_FALSE(stages[0].tp_allreduces.empty());
  const SimulationResult result = simulate(
      build_schedule(plan, stages), CostModel::from_profiles(stages, *find_device_profile("cpu-core"), 1));
  const std::vector<OverheadShares> shares = overhead_breakdown(result.trace);
  // What Statistics calls the bubble (communication is idle there).
  const std::vector<double> idle = bubble_fraction_per_device(result.trace);
  ASSERT_EQ(shares.size(), 2u);
  for (const OverheadShares& share : shares) {
    EXPECT_NEAR(sum(share), 1.0, 1e-12);
    EXPECT_GT(share.collectives, 0.0);
    EXPECT_NEAR(share.collectives, idle[static_cast<size_t>(share.device)], 1e-12);
    EXPECT_NEAR(share.bubble + share.load_imbalance, 0.0, 1e-9);  // pp 1: no pipeline bubble
  }
}

TEST(OverheadBreakdown, EmptyTraceHasNoShares) { EXPECT_TRUE(overhead_breakdown(Trace{}).empty()); }

}  // namespace
}  // namespace pipelab
