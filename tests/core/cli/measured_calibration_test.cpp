// Calibration on this machine: a short measured run on the cpu backend, fitted.
#include "core/cli/measured_calibration.h"

#include <gtest/gtest.h>

#include "core/io/experiment_io.h"

namespace pipelab {
namespace {

TEST(Calibration, ShortRunGivesAPlausibleRateForThisMachine) {
  Experiment experiment = default_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {linear(256), relu, linear(256), relu, linear(3)};
  experiment.training.batch_size = 64;
  experiment.data.samples = 200;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.parallel.pp = 2;
  experiment.parallel.microbatches = 2;
  const CalibrationResult fitted = calibrate_measured_profile(experiment, 3);
  EXPECT_GT(fitted.compute_samples, 0);
  EXPECT_GT(fitted.message_samples, 0);
  // One core does between 0.1 and 1000 GFLOP/s on any machine this runs on.
  const double rate = fitted.cluster.device.sustained_gemm_flops("fp32");
  EXPECT_GT(rate, 1e8);
  EXPECT_LT(rate, 1e12);
  EXPECT_GE(fitted.cluster.device.op_overhead_s, 0.0);
  EXPECT_GT(fitted.cluster.node.device_link.bandwidth, 0.0);
  // The experiment's 2 micro-batches, then 8 (4x), which separates each op's fixed cost from its
  // FLOPs.
  EXPECT_EQ(fitted.microbatches, (std::vector<int>{2, 8}));
  ASSERT_EQ(fitted.measured_step_s.size(), 2u);
  EXPECT_GT(fitted.measured_step_s[1], 0.0);
}

}  // namespace
}  // namespace pipelab
