// What every executor (CPU here, CUDA in gpu/) derives from an experiment
// before a run, in one place so the backends agree: the checks, the step
// count, and the recorder's settings (global batch, the simulated bubble
// every StepMetrics carries, which steps are evaluated). The bubble comes
// from the run's RunPrediction: the runtime does not simulate.
#pragma once

#include <string>

#include "core/io/experiment.h"
#include "core/runtime/executor.h"
#include "core/runtime/run_recorder.h"
#include "core/runtime/training_data.h"

namespace pipelab {

// Throws ExperimentError with validate_experiment's first problem (and how
// many more there are).
void check_experiment(const Experiment& experiment);

// options.steps, or training.steps when it is 0. Throws ExperimentError for
// a negative count.
int run_steps(const Experiment& experiment, const ExecutorOptions& options);

// The recorder's settings for a run of `total_steps` on `data`, carrying
// `simulated_bubble` (from the run's RunPrediction) in every StepMetrics.
RecorderSettings recorder_settings(const Experiment& experiment, const TrainingData& data,
                                   int total_steps, double simulated_bubble);

// "12.34 s", for the end-of-run message.
std::string seconds_text(double seconds);

}  // namespace pipelab
