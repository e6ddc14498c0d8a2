// Predicted memory: the peak bytes each device of an experiment's run will
// hold, from the simulator. The executors' pre-flight checks ask here, so they
// need not know the simulator.
#pragma once

#include <cstdint>
#include <vector>

#include "core/io/experiment.h"

namespace pipelab {

// Per device (by global device id): its predicted peak over all memory
// categories, in bytes, plus the peak of what offloading parks in host memory. An experiment that predicts in units
// (simulation.profile = "unit") is predicted on cpu-core instead, since units
// are not bytes. Throws like predict_experiment.
std::vector<int64_t> predicted_peak_bytes(const Experiment& experiment);

}  // namespace pipelab
