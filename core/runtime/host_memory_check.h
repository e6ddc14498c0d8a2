// Host memory pre-flight for the CPU backend: every virtual device lives in
// this process, so a run whose predicted peak does not fit in the memory the
// machine has free would only thrash or be killed. Refuse it up front with the
// numbers and what to change.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/io/experiment.h"

namespace pipelab {

// Bytes the machine can give this process now (MemAvailable on Linux), or
// nothing when it cannot tell.
std::optional<int64_t> available_host_memory();

// Bytes a synthetic data set takes once generated and split (0 for files,
// whose size the files themselves bound).
int64_t synthetic_data_bytes(const DataSpec& data);

// Throws ExperimentError when the data set plus the sum of the devices'
// predicted peaks (bytes, indexed by device; see RunPrediction in executor.h)
// is more than `available` bytes. Pure, so it is testable without a large
// machine.
void check_host_memory(const Experiment& experiment, const std::vector<int64_t>& device_peaks,
                       int64_t available);

// The pre-flight the CPU executor runs before it loads data or allocates: the
// run's predicted device peaks (RunPrediction::device_peak_bytes, on cpu-core
// when the experiment predicts in units) against available_host_memory().
// Does nothing when the run was given no peaks.
void check_host_memory_for_run(const Experiment& experiment, const std::vector<int64_t>& device_peaks);

}  // namespace pipelab
