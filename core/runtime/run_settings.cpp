#include "core/runtime/run_settings.h"

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "core/io/experiment_io.h"
#include "core/io/file_text.h"

namespace pipelab {

// The same "(and N more problems)" as a file's problems, which the app translates.
void check_experiment(const Experiment& experiment) {
  throw_problems(validate_experiment(experiment));
}

int run_steps(const Experiment& experiment, const ExecutorOptions& options) {
  if (options.steps < 0)
    throw ExperimentError("steps = " + std::to_string(options.steps) +
                          " must be >= 0 (0 runs training.steps)");
  return options.steps > 0 ? options.steps : experiment.training.steps;
}

RecorderSettings recorder_settings(const Experiment& experiment, const TrainingData& data,
                                   int total_steps, double simulated_bubble) {
  RecorderSettings settings;
  settings.devices = experiment.parallel.devices();
  settings.total_steps = total_steps;
  settings.global_batch = experiment.training.batch_size;
  // Sequence sets report token accuracy over the counted positions.
  settings.classification = data.train().is_classification() || data.train().is_sequence();
  settings.simulated_bubble = simulated_bubble;
  settings.learning_rate = experiment.training.optimizer.lr;
  if (data.validation().samples > 0)
    settings.evaluated_steps = {experiment.training.eval_every, total_steps};
  return settings;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

}  // namespace pipelab
