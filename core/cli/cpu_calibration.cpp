#include "core/cli/cpu_calibration.h"

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/runtime/cpu_executor.h"
#include "core/text/quoted_excerpt.h"

namespace pipelab {

CalibrationResult calibrate_cpu_profile(const Experiment& experiment, int steps) {
  Experiment short_run = experiment;
  short_run.backend.type = "cpu";
  short_run.training.eval_every = 0;
  EventSink sink;
  ExecutorOptions options;
  options.steps = steps;
  CpuExecutor executor(short_run, sink, options);
  executor.start();
  executor.wait();
  if (executor.state() != RunState::Finished)
    throw ExperimentError("calibration run failed: " + executor.error());
  Trace trace;
  append_batch(trace, sink.drain());
  const std::string name =
      experiment.simulation.profile == "unit" ? "cpu-core" : experiment.simulation.profile;
  const auto base = find_device_profile(name);
  if (!base) throw ExperimentError("simulation.profile = " + quoted_excerpt(name) + " is not a device profile");
  return calibrate_profile(trace, executor.stage_profiles(), *base);
}

}  // namespace pipelab
