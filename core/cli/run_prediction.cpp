#include "core/cli/run_prediction.h"

#include <exception>

#include "core/io/experiment_io.h"
#include "core/sim/experiment_prediction.h"
#include "core/sim/predicted_memory.h"

namespace pipelab {

RunPrediction predict_run(const Experiment& experiment) {
  RunPrediction prediction;
  if (!validate_experiment(experiment).empty()) return prediction;
  try {
    prediction.bubble = predict_experiment(experiment).result.bubble_fraction;
  } catch (const std::exception&) {
    // Keeps NaN: the run goes on without a simulated bubble to compare with.
  }
  // Only the cpu backend holds every device in host memory.
  if (experiment.backend.type == "cpu") prediction.device_peak_bytes = predicted_peak_bytes(experiment);
  return prediction;
}

}  // namespace pipelab
