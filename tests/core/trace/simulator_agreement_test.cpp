// The trace-side bubble rule must agree with the simulator's own numbers, so a
// measured run and its prediction are compared by one definition.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"
#include "core/trace/bubbles.h"
#include "core/trace/chrome_trace.h"

namespace pipelab {
namespace {

ParallelPlan make_plan(ScheduleKind kind, int dp, int pp, int microbatches, int chunks) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.dp = dp;
  plan.pp = pp;
  plan.microbatches = microbatches;
  plan.chunks = chunks;
  return plan;
}

TEST(SimulatorAgreement, BubbleFractionOfTheSimulatedTraceMatchesTheSimulator) {
  UnitCosts costs;
  costs.f = 1.0;
  costs.b = 1.0;
  costs.w = 1.0;
  costs.comm = 0.25;  // communication must not count as busy on either side
  costs.u = 0.5;
  const CostModel cost = CostModel::unit(costs);
  const ParallelPlan plans[] = {
      make_plan(ScheduleKind::GPipe, 1, 4, 8, 1),
      make_plan(ScheduleKind::OneFOneB, 2, 3, 6, 1),
      make_plan(ScheduleKind::Interleaved1F1B, 1, 2, 4, 2),
      make_plan(ScheduleKind::ZeroBubbleH1, 1, 4, 8, 1),
      make_plan(ScheduleKind::PipeDream, 2, 3, 4, 1),
      make_plan(ScheduleKind::PipeDream2BW, 1, 3, 4, 1),
  };
  for (const ParallelPlan& plan : plans) {
    SCOPED_TRACE(schedule_name(plan.schedule));
    const SimulationResult result = simulate(build_schedule(plan), cost);
    ASSERT_FALSE(result.trace.events.empty());
    EXPECT_NEAR(bubble_fraction(result.trace), result.bubble_fraction, 1e-9);
    const auto per_device = bubble_fraction_per_device(result.trace);
    ASSERT_EQ(per_device.size(), result.per_device.size());
    for (const DeviceSimStats& stats : result.per_device) {
      EXPECT_NEAR(per_device[static_cast<size_t>(stats.device)], stats.bubble_fraction, 1e-9)
          << "device " << stats.device;
    }

    // And the simulated trace exports as JSON viewers can read.
    std::ostringstream out;
    write_chrome_trace(result.trace, out);
    EXPECT_TRUE(nlohmann::json::accept(out.str()));
  }
}

}  // namespace
}  // namespace pipelab
