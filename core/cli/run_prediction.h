// What a real run takes from its prediction (RunPrediction, core/runtime/
// executor.h): the simulated bubble its step metrics carry and, on the cpu
// backend, each device's predicted peak for the host-memory pre-flight. The
// runtime does not simulate; whoever starts a run (the CLI, the app) asks here
// and hands the answer over in ExecutorOptions::prediction.
#pragma once

#include "core/io/experiment.h"
#include "core/runtime/executor.h"

namespace pipelab {

// An experiment that does not validate gets an empty prediction, so that the
// executor reports the validation problem. A bubble that cannot be simulated
// is NaN. The peaks throw like predicted_peak_bytes.
RunPrediction predict_run(const Experiment& experiment);

}  // namespace pipelab
