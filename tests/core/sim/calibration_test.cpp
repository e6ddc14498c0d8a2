// Calibration fits the simulator's device profile to measured ops.
#include "core/sim/calibration.h"

#include <gtest/gtest.h>

#include "core/io/hardware_catalogue.h"

namespace pipelab {
namespace {

TEST(Calibration, FitsComputeRateAndLinkFromOps) {
  std::vector<StageProfile> stages(2);
  stages[0].forward_flops = 2e6;
  stages[0].backward_input_flops = 1e6;
  stages[0].backward_weight_flops = 3e6;
  stages[1].forward_flops = 5e6;
  stages[1].backward_input_flops = 4e6;
  stages[1].backward_weight_flops = 6e6;
  const double rate = 4e9, bandwidth = 2e9, latency = 3e-6;
  Trace trace;
  auto add = [&](OpKind kind, int stage, double seconds, int64_t bytes) {
    Op op;
    op.kind = kind;
    op.stage = stage;
    trace.events.push_back({0, op, 1.0, 1.0 + seconds, bytes});
  };
  add(OpKind::Forward, 0, 2e6 / rate, 0);
  add(OpKind::Backward, 0, 4e6 / rate, 0);
  add(OpKind::BackwardInput, 1, 4e6 / rate, 0);
  add(OpKind::BackwardWeight, 1, 6e6 / rate, 0);
  add(OpKind::SendActivation, 0, latency + 1000 / bandwidth, 1000);
  add(OpKind::SendGradient, 1, latency + 9000 / bandwidth, 9000);
  const DeviceProfile base = *find_device_profile("cpu-core");
  const CalibrationResult fitted = calibrate_profile(trace, stages, base);
  EXPECT_EQ(fitted.compute_samples, 4);
  EXPECT_EQ(fitted.message_samples, 2);
  EXPECT_NEAR(fitted.profile.flops_per_s, rate, rate * 1e-9);
  EXPECT_NEAR(fitted.profile.link_bandwidth, bandwidth, bandwidth * 1e-6);
  EXPECT_NEAR(fitted.profile.link_latency_s, latency, 1e-12);
  EXPECT_EQ(fitted.profile.memory_bandwidth, base.memory_bandwidth);
  EXPECT_EQ(fitted.profile.name, "cpu-core-measured");
}

}  // namespace
}  // namespace pipelab
