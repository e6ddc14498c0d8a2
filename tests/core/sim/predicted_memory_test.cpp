#include "core/sim/predicted_memory.h"

#include <gtest/gtest.h>

#include "core/io/experiment_io.h"

namespace pipelab {
namespace {

TEST(PredictedMemory, OnePeakPerDeviceInBytes) {
  const Experiment experiment = default_experiment();
  const std::vector<int64_t> peaks = predicted_peak_bytes(experiment);
  ASSERT_EQ(static_cast<int>(peaks.size()), experiment.parallel.devices());
  for (int64_t peak : peaks) EXPECT_GT(peak, 1000);  // weights of 256-wide layers, not units
}

TEST(PredictedMemory, UnitExperimentsArePredictedOnCpuCore) {
  Experiment in_units = default_experiment();
  in_units.simulation.profile = "unit";
  Experiment on_cpu = in_units;
  on_cpu.simulation.profile = "cpu-core";
  EXPECT_EQ(predicted_peak_bytes(in_units), predicted_peak_bytes(on_cpu));
}

}  // namespace
}  // namespace pipelab
