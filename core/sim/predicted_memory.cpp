#include "core/sim/predicted_memory.h"

#include "core/sim/experiment_prediction.h"

namespace pipelab {

std::vector<int64_t> predicted_peak_bytes(const Experiment& experiment) {
  Experiment in_bytes = experiment;
  if (in_bytes.simulation.profile == "unit") in_bytes.simulation.profile = "cpu-core";
  std::vector<int64_t> peaks;
  for (const DeviceSimStats& device : predict_experiment(in_bytes).result.per_device)
    // What offloading parks on the host is in the same RAM for a CPU run: the
    // two peaks together bound what the device holds at once.
    peaks.push_back(device.peak_total_bytes + device.peak_bytes[static_cast<int>(MemoryCategory::Host)]);
  return peaks;
}

}  // namespace pipelab
