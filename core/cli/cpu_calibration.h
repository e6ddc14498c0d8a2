// CPU calibration: measure a short training run on this machine's CPU and fit
// the simulator's device profile to it (core/sim/calibration.h). It lives with
// the CLI because it needs both sides: the runtime runs, the simulator fits.
#pragma once

#include "core/io/experiment.h"
#include "core/sim/calibration.h"

namespace pipelab {

// Runs `steps` training steps of `experiment` on the CPU backend and fits
// its simulation.profile (cpu-core for "unit") to them. Throws like
// make_executor, and ExperimentError when the run fails.
CalibrationResult calibrate_cpu_profile(const Experiment& experiment, int steps = 5);

}  // namespace pipelab
