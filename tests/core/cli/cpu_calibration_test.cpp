// Calibration on this machine: a short measured CPU run, fitted.
#include "core/cli/cpu_calibration.h"

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
  const CalibrationResult fitted = calibrate_cpu_profile(experiment, 3);
  EXPECT_GT(fitted.compute_samples, 0);
  EXPECT_GT(fitted.message_samples, 0);
  // One core does between 0.1 and 1000 GFLOP/s on any machine this runs on.
  EXPECT_GT(fitted.profile.flops_per_s, 1e8);
  EXPECT_LT(fitted.profile.flops_per_s, 1e12);
  EXPECT_GT(fitted.profile.link_bandwidth, 0.0);
}

}  // namespace
}  // namespace pipelab
