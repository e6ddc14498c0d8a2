// Bubbles and makespans of the pipeline schedules under unit costs, checked
// against the textbook formulas derived by hand.
#include <gtest/gtest.h>

#include <vector>

#include "core/schedule/generators.h"
#include "core/io/hardware_catalogue.h"
#include "core/schedule/lowering.h"
#include "core/sim/bubble_formula.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

SimulationResult run_unit(ScheduleKind kind, int p, int m, const UnitCosts& costs, int chunks = 1) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.pp = p;
  plan.microbatches = m;
  plan.chunks = chunks;
  return simulate(build_schedule(plan), CostModel::unit(costs));
}

const UnitCosts kCostSets[] = {
    {1, 1, 1, 0, 0}, {2, 3, 1, 0, 0}, {1, 2, 0.5, 0, 0}, {1, 1, 0, 0, 0}};

TEST(SimulatorBubbleTest, GPipeAndOneFOneBBubbleIsTextbookFormula) {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (int p : {1, 2, 4, 7})
      for (int m : {1, 3, 8, 16})
        for (const UnitCosts& c : kCostSets) {
          SCOPED_TRACE(std::string(schedule_name(kind)) + " p=" + std::to_string(p) +
                       " m=" + std::to_string(m) + " f=" + std::to_string(c.f) +
                       " b=" + std::to_string(c.b) + " w=" + std::to_string(c.w));
          const SimulationResult result = run_unit(kind, p, m, c);
          const double expected = double(p - 1) / double(m + p - 1);
          EXPECT_NEAR(result.bubble_fraction, expected, 1e-9);
          EXPECT_NEAR(result.bubble_fraction_theory, expected, 1e-12);
          // Fill and drain: m + p - 1 slots of f + b + w.
          EXPECT_NEAR(result.makespan, (m + p - 1) * (c.f + c.b + c.w), 1e-9);
          ASSERT_EQ(static_cast<int>(result.per_device.size()), p);
          for (const DeviceSimStats& device : result.per_device) {
            EXPECT_NEAR(device.busy, m * (c.f + c.b + c.w), 1e-9);
            EXPECT_NEAR(device.bubble_fraction, expected, 1e-9);
          }
        }
}

TEST(SimulatorBubbleTest, InterleavedAndZeroBubbleBeatOneFOneB) {
  for (auto [p, m] : {std::pair{4, 8}, {2, 4}, {8, 16}}) {
    SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
    const UnitCosts c{1, 1, 1, 0, 0};
    const double one_f_one_b = run_unit(ScheduleKind::OneFOneB, p, m, c).bubble_fraction;
    const SimulationResult interleaved = run_unit(ScheduleKind::Interleaved1F1B, p, m, c, 2);
    const SimulationResult zero_bubble = run_unit(ScheduleKind::ZeroBubbleH1, p, m, c);
    EXPECT_LT(interleaved.bubble_fraction, one_f_one_b);
    EXPECT_LT(zero_bubble.bubble_fraction, one_f_one_b);
    // Interleaving v = 2 chunks: (p-1)/(v*m+p-1).
    EXPECT_NEAR(interleaved.bubble_fraction, double(p - 1) / (2 * m + p - 1), 1e-9);
    // ZB-H1 with f = b = w idles (p-1) units per device beside 3m busy ones.
    EXPECT_NEAR(zero_bubble.bubble_fraction, double(p - 1) / (3 * m + p - 1), 1e-9);
    EXPECT_NEAR(zero_bubble.makespan, 3 * m + p - 1, 1e-9);
  }
}

// The exact zb-h1 makespan (bubble_formula.h) against the simulator over the
// grid it was derived on, including m < p and w > f + b.
TEST(SimulatorBubbleTest, ZeroBubbleH1MatchesItsFormulaOverAGrid) {
  std::vector<UnitCosts> costs;
  for (double f : {1, 2, 3})
    for (double b : {1, 2, 3})
      for (double w : {1, 2, 3}) costs.push_back({f, b, w, 0, 0});
  for (const UnitCosts& c : kCostSets) costs.push_back(c);
  for (int p = 2; p <= 8; ++p)
    for (int m = 1; m <= 3 * p; ++m)
      for (const UnitCosts& c : costs) {
        const SimulationResult result = run_unit(ScheduleKind::ZeroBubbleH1, p, m, c);
        ASSERT_NEAR(result.bubble_fraction_theory, result.bubble_fraction, 1e-9)
            << "p=" << p << " m=" << m << " f=" << c.f << " b=" << c.b << " w=" << c.w;
      }
}

// Profile-based costs: uniform GPT blocks timed on an H100 profile, fed to the
// formula as unit costs f, b, w (the formula assumes uniform stages).
TEST(SimulatorBubbleTest, ZeroBubbleH1FormulaWithProfileCosts) {
  DeviceProfile device = *find_device_profile("h100");
  device.link_latency_s = 0;  // the formula takes communication as free
  // Forward, input-gradient and weight-gradient FLOPs, w below and above f + b.
  const double flops[][3] = {{2e12, 4e12, 2e12}, {2e12, 1e12, 7e12}, {3e12, 1e12, 2e12}};
  for (const auto& stage_flops : flops)
    for (int p : {2, 4, 5})
      for (int m : {1, 3, 4, 9}) {
        StageProfile stage;
        stage.forward_flops = stage_flops[0];
        stage.backward_input_flops = stage_flops[1];
        stage.backward_weight_flops = stage_flops[2];
        const std::vector<StageProfile> stages(p, stage);
        ParallelPlan plan;
        plan.schedule = ScheduleKind::ZeroBubbleH1;
        plan.pp = p;
        plan.microbatches = m;
        const SimulationResult result = simulate(build_schedule(plan, stages),
                                                 CostModel::from_profiles(stages, device, 0));
        EXPECT_GT(result.formula_costs.f, 0);
        EXPECT_NEAR(result.bubble_fraction_theory, result.bubble_fraction, 1e-9)
            << "p=" << p << " m=" << m << " f=" << result.formula_costs.f
            << " b=" << result.formula_costs.b << " w=" << result.formula_costs.w;
      }
}

TEST(SimulatorBubbleTest, ZeroBubbleVBeatsZbH1AndOneFOneB) {
  // Per-chunk costs f = b = w = 1 for zb-v's half-size stages; the one-chunk
  // schedules get a device's worth (2 each) so every device does 6m units.
  for (auto [p, m] : {std::pair{4, 8}, {2, 4}, {8, 16}, {4, 16}}) {
    SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
    const SimulationResult zb_v = run_unit(ScheduleKind::ZeroBubbleV, p, m, {1, 1, 1, 0, 0}, 2);
    const UnitCosts device{2, 2, 2, 0, 0};
    const SimulationResult zb_h1 = run_unit(ScheduleKind::ZeroBubbleH1, p, m, device);
    const SimulationResult one_f_one_b = run_unit(ScheduleKind::OneFOneB, p, m, device);
    EXPECT_LT(zb_v.bubble_fraction, zb_h1.bubble_fraction);
    EXPECT_LT(zb_v.bubble_fraction, one_f_one_b.bubble_fraction);
    EXPECT_LT(zb_v.makespan, zb_h1.makespan);
    // The formula with f = b = w: no bubble in the steady state.
    EXPECT_NEAR(zb_v.bubble_fraction_theory, 0.0, 1e-12);
  }
}

// The interleaved formula (bubble_formula.h) against the simulator for every
// micro-batch count the rounds accept, multiples of p or not, below p too.
TEST(SimulatorBubbleTest, InterleavedMatchesItsFormulaForEveryAcceptedMicrobatchCount) {
  for (int p = 1; p <= 6; ++p)
    for (int v : {2, 3})
      for (int m = 1; m <= 3 * p + 1; ++m) {
        if (!interleaved_microbatches_problem(p, m).empty()) continue;
        for (const UnitCosts& c : kCostSets) {
          const SimulationResult result = run_unit(ScheduleKind::Interleaved1F1B, p, m, c, v);
          ASSERT_NEAR(result.bubble_fraction_theory, result.bubble_fraction, 1e-9)
              << "p=" << p << " v=" << v << " m=" << m << " f=" << c.f << " b=" << c.b
              << " w=" << c.w;
        }
      }
}

// The exact dualpipev idle time (bubble_formula.h) against the simulator, over
// costs where each of its six terms is the longest and b > f or b < f.
TEST(SimulatorBubbleTest, DualPipeVMatchesItsFormulaOverAGrid) {
  std::vector<UnitCosts> costs;
  for (double f : {0.5, 1.0, 2.0, 4.0})
    for (double b : {0.5, 1.0, 3.0, 4.0})
      for (double w : {0.0, 1.0, 2.0, 3.0}) costs.push_back({f, b, w, 0, 0});
  for (int p = 1; p <= 6; ++p)
    for (int m : {2 * p, 2 * p + 1, 3 * p + 2})
      for (const UnitCosts& c : costs) {
        const SimulationResult result = run_unit(ScheduleKind::DualPipeV, p, m, c, 2);
        ASSERT_NEAR(result.bubble_fraction_theory, result.bubble_fraction, 1e-9)
            << "p=" << p << " m=" << m << " f=" << c.f << " b=" << c.b << " w=" << c.w;
      }
}

// At equal work (per-chunk costs for the V schedules, a device's worth, twice
// them, for 1f1b's one stage per device), dualpipev idles less than 1f1b. Beside
// zb-v: the same bubble with f = b = w; torch's order keeps fused backwards in
// its steady phase, so it idles more than zb-v when BW is cheap (w < b) and
// less when BW is dear (w > b), as zb-v holds more BWs back.
TEST(SimulatorBubbleTest, DualPipeVBesideZbVAndOneFOneB) {
  for (const auto& p_and_m : {std::pair{4, 8}, {4, 16}, {8, 16}}) {
    // Plain names, not structured bindings: clang 14 cannot capture those in a lambda.
    const int p = p_and_m.first;
    const int m = p_and_m.second;
    SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
    auto both = [&](const UnitCosts& chunk) {
      return std::pair{run_unit(ScheduleKind::DualPipeV, p, m, chunk, 2).bubble_fraction,
                       run_unit(ScheduleKind::ZeroBubbleV, p, m, chunk, 2).bubble_fraction};
    };
    const SimulationResult dualpipe_v = run_unit(ScheduleKind::DualPipeV, p, m, {1, 1, 1, 0, 0}, 2);
    const SimulationResult one_f_one_b = run_unit(ScheduleKind::OneFOneB, p, m, {2, 2, 2, 0, 0});
    EXPECT_LT(dualpipe_v.bubble_fraction, one_f_one_b.bubble_fraction);
    EXPECT_LT(dualpipe_v.makespan, one_f_one_b.makespan);
    const auto [equal_dualpipe_v, equal_zb_v] = both({1, 1, 1, 0, 0});
    EXPECT_NEAR(equal_dualpipe_v, equal_zb_v, 1e-12);
    const auto [cheap_w_dualpipe_v, cheap_w_zb_v] = both({1, 2, 1, 0, 0});
    EXPECT_GT(cheap_w_dualpipe_v, cheap_w_zb_v);
    const auto [dear_w_dualpipe_v, dear_w_zb_v] = both({1, 1, 2, 0, 0});
    EXPECT_LT(dear_w_dualpipe_v, dear_w_zb_v);
  }
}

TEST(SimulatorBubbleTest, CommunicationTimeLengthensTheRun) {
  const UnitCosts free_comm{1, 1, 1, 0, 0};
  const UnitCosts slow_comm{1, 1, 1, 0.5, 0};
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
    const SimulationResult fast = run_unit(kind, 4, 8, free_comm);
    const SimulationResult slow = run_unit(kind, 4, 8, slow_comm);
    EXPECT_GT(slow.makespan, fast.makespan);
    EXPECT_GT(slow.bubble_fraction, fast.bubble_fraction);
  }
  // GPipe: each of the p-1 hops adds comm once on the way forward and once
  // on the way back; the pipeline rate is set by compute.
  const SimulationResult gpipe = run_unit(ScheduleKind::GPipe, 4, 8, slow_comm);
  EXPECT_NEAR(gpipe.makespan, (8 + 4 - 1) * 3 + 2 * (4 - 1) * 0.5, 1e-9);
}

TEST(SimulatorBubbleTest, OptimizerStepAddsToEveryDevice) {
  const SimulationResult result = run_unit(ScheduleKind::OneFOneB, 4, 8, UnitCosts{1, 1, 1, 0, 2});
  EXPECT_NEAR(result.makespan, 11 * 3 + 2, 1e-9);
  for (const DeviceSimStats& device : result.per_device) EXPECT_NEAR(device.busy, 8 * 3 + 2, 1e-9);
}

TEST(SimulatorBubbleTest, AsynchronousWindowsKeepDevicesBusy) {
  // No flush inside the window: only its start and end idle, so the bubble
  // is well below 1F1B's for one step with the same m.
  const UnitCosts c{1, 1, 1, 0, 0};
  const double one_f_one_b = run_unit(ScheduleKind::OneFOneB, 4, 4, c).bubble_fraction;
  for (ScheduleKind kind : {ScheduleKind::PipeDream, ScheduleKind::PipeDream2BW}) {
    const SimulationResult result = run_unit(kind, 4, 4, c);
    EXPECT_LT(result.bubble_fraction, one_f_one_b) << schedule_name(kind);
    EXPECT_DOUBLE_EQ(result.bubble_fraction_theory, 0.0);
  }
}

TEST(SimulatorBubbleTest, ThroughputCountsEveryMicrobatch) {
  const SimulationResult result = run_unit(ScheduleKind::OneFOneB, 4, 8, UnitCosts{});
  EXPECT_NEAR(result.microbatches_per_time, 8 / result.makespan, 1e-12);
}

}  // namespace
}  // namespace pipelab
