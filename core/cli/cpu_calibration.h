// CPU calibration: measure short training runs on this machine's CPU and fit
// the simulator's device and node to them (core/sim/calibration.h). It lives
// with the CLI because it needs both sides: the runtime runs, the simulator fits.
#pragma once

#include "core/io/experiment.h"
#include "core/sim/calibration.h"

namespace pipelab {

// Runs `steps` training steps of `experiment` on the CPU backend at its
// micro-batch count and at a second count (4x, 2x, 1/4 or 1/2 of it, the
// first the experiment allows), and fits its simulation.profile's device and
// node (cpu-core for "unit") to them. Throws like make_executor, and
// ExperimentError when a run fails.
CalibrationResult calibrate_cpu_profile(const Experiment& experiment, int steps = 5);

}  // namespace pipelab
