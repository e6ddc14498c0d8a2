// Calibration from measured runs: run short trainings on a backend of this
// machine (the CPU's threads, or its GPU) and fit the simulator's device and
// node to them (core/sim/calibration.h). It lives with the CLI because it
// needs both sides: the runtime runs, the simulator fits.
#pragma once

#include <vector>

#include "core/io/experiment.h"
#include "core/io/run_file.h"
#include "core/sim/calibration.h"

namespace pipelab {

// Runs `steps` training steps of `experiment` on its backend.type at its
// micro-batch count and at a second count (4x, 2x, 1/4 or 1/2 of it, the
// first the experiment allows), and fits its simulation.profile's device and
// node (cpu-core for "unit") to them. Evaluation is off in these runs.
// Throws like make_executor (a backend this machine cannot run says why),
// and ExperimentError when a run fails.
CalibrationResult calibrate_measured_profile(const Experiment& experiment, int steps = 5);

// The same fit to runs measured earlier and saved (pipelab-cli train
// --save-run, e.g. on a GPU server), each with the experiment it ran, from
// the first run's simulation.profile. Throws ExperimentError for a run that
// was simulated rather than measured, or that has no steps.
CalibrationResult calibrate_saved_runs(const std::vector<RunRecord>& runs);

}  // namespace pipelab
