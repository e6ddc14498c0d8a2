#include "core/cli/measured_calibration.h"

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/plan/stage_profile.h"
#include "core/runtime/threaded_executor.h"
#include "core/schedule/lowering.h"

namespace pipelab {
namespace {

Experiment without_evaluation(const Experiment& experiment) {
  Experiment run = experiment;
  run.training.eval_every = 0;
  if (run.simulation.profile == "unit") run.simulation.profile = "cpu-core";
  return run;
}

// What the simulator needs besides the trace: the stages as the executor
// profiled them, and the experiment lowered.
void add_stages_and_schedule(MeasuredRun& run) {
  run.stages =
      profile_stages(run.experiment.model, run.experiment.parallel, microbatch_size(run.experiment),
                     run.experiment.training.precision, run.experiment.training.fp32_gradients);
  run.schedule = build_schedule(run.experiment.parallel, run.stages);
}

MeasuredRun measure(const Experiment& experiment, int steps) {
  MeasuredRun run;
  run.experiment = experiment;
  EventSink sink;
  ExecutorOptions options;
  options.steps = steps;
  const std::unique_ptr<Executor> built = make_executor(experiment, sink, options);
  // Every backend's executor is a ThreadedExecutor: its stage profiles are what it ran.
  auto& executor = dynamic_cast<ThreadedExecutor&>(*built);
  executor.start();
  executor.wait();
  if (executor.state() != RunState::Finished)
    throw ExperimentError("calibration run failed: " + executor.error());
  append_batch(run.trace, sink.drain());
  run.stages = executor.stage_profiles();
  run.schedule = build_schedule(experiment.parallel, run.stages);
  return run;
}

// The experiment's micro-batch count, then a second one when it allows one.
std::vector<int> calibration_microbatches(const Experiment& experiment) {
  const int m = experiment.parallel.microbatches;
  std::vector<int> counts = {m};
  for (const int other : {4 * m, 2 * m, m / 4, m / 2}) {
    if (other < 1 || other == m) continue;
    Experiment trial = experiment;
    trial.parallel.microbatches = other;
    if (validate_experiment(trial).empty()) {
      counts.push_back(other);
      break;
    }
  }
  return counts;
}

}  // namespace

CalibrationResult calibrate_measured_profile(const Experiment& experiment, int steps) {
  const Experiment base = without_evaluation(experiment);
  std::vector<MeasuredRun> runs;
  for (const int microbatches : calibration_microbatches(base)) {
    Experiment run = base;
    run.parallel.microbatches = microbatches;
    runs.push_back(measure(run, steps));
  }
  return calibrate_cluster(runs, experiment_cluster(base));
}

CalibrationResult calibrate_saved_runs(const std::vector<RunRecord>& records) {
  if (records.empty()) throw ExperimentError("calibration needs at least one run file");
  std::vector<MeasuredRun> runs;
  for (const RunRecord& record : records) {
    if (record.trace.source != "measured")
      throw ExperimentError("run '" + record.name + "' was " + record.trace.source +
                            ", not measured: calibrate from runs that trained (pipelab-cli train "
                            "--save-run, or the app's Runs > Save)");
    if (record.trace.steps.empty())
      throw ExperimentError("run '" + record.name + "' recorded no steps to calibrate from");
    MeasuredRun run;
    run.experiment = without_evaluation(record.experiment);
    run.trace = record.trace;
    add_stages_and_schedule(run);
    runs.push_back(std::move(run));
  }
  return calibrate_cluster(runs, experiment_cluster(runs.front().experiment));
}

}  // namespace pipelab
