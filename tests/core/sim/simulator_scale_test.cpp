// A large plan simulates (sanity of the result only; bench/sim_scaling.cpp
// measures the speed).
#include <gtest/gtest.h>

#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

TEST(SimulatorScaleTest, DataParallel8ByPipeline64With1024Microbatches) {
  ParallelPlan plan;
  plan.dp = 8;
  plan.pp = 64;
  plan.microbatches = 1024;
  const Schedule schedule = build_schedule(plan);
  const SimulationResult result = simulate(schedule, CostModel::unit(UnitCosts{1, 1, 1, 0, 0}));

  size_t ops = 0;
  for (const auto& device : schedule.devices) ops += device.size();
  EXPECT_EQ(result.trace.events.size(), ops);
  ASSERT_EQ(result.per_device.size(), 8u * 64u);
  const double p = 64, m = 1024;
  EXPECT_NEAR(result.makespan, (m + p - 1) * 3, 1e-6);
  EXPECT_NEAR(result.bubble_fraction, (p - 1) / (m + p - 1), 1e-9);
  for (const DeviceSimStats& device : result.per_device) {
    EXPECT_NEAR(device.busy, m * 3, 1e-6);
    EXPECT_EQ(device.peak_inflight_microbatches, 64 - device.device % 64);
  }
  EXPECT_NEAR(result.microbatches_per_time, 8 * m / result.makespan, 1e-9);
}

}  // namespace
}  // namespace pipelab
