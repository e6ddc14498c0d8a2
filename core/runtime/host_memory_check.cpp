#include "core/runtime/host_memory_check.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/io/experiment_io.h"

namespace pipelab {
namespace {

std::string gib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

}  // namespace

std::optional<int64_t> available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

int64_t synthetic_data_bytes(const DataSpec& data) {
  if (data.source == "mnist" || data.source == "fashion-mnist" || data.source == "idx" ||
      data.source == "csv")
    return 0;
  const double width = std::max(data.features, 2);
  // Features plus a label per sample, generated once and copied into the split.
  // Counted in doubles and capped, so data.samples = 1e18 reads as too large
  // instead of overflowing.
  const double bytes = 2.0 * static_cast<double>(data.samples) * (width + 1) * sizeof(float);
  constexpr double kLargest = 9.0e18;  // just under INT64_MAX
  return bytes >= kLargest ? static_cast<int64_t>(kLargest) : static_cast<int64_t>(bytes);
}

void check_host_memory_for_run(const Experiment& experiment, const std::vector<int64_t>& device_peaks) {
  if (device_peaks.empty()) return;
  const std::optional<int64_t> available = available_host_memory();
  if (!available) return;
  check_host_memory(experiment, device_peaks, *available);
}

void check_host_memory(const Experiment& experiment, const std::vector<int64_t>& device_peaks,
                       int64_t available) {
  const int64_t data_bytes = synthetic_data_bytes(experiment.data);
  if (data_bytes > available)
    throw ExperimentError("data.samples = " + std::to_string(experiment.data.samples) + " needs about " +
                          gib(data_bytes) + " but only " + gib(available) +
                          " of memory is available; use fewer samples");
  int64_t needed = data_bytes;
  int largest_device = 0;
  int64_t largest = 0;
  for (int device = 0; device < static_cast<int>(device_peaks.size()); ++device) {
    // Peaks of different devices need not coincide: their sum is an upper
    // bound, which is what a pre-flight wants.
    needed += device_peaks[device];
    if (device_peaks[device] > largest) {
      largest = device_peaks[device];
      largest_device = device;
    }
  }
  if (needed <= available) return;
  const bool many_in_flight = experiment.parallel.schedule == ScheduleKind::GPipe &&
                              experiment.parallel.microbatches > experiment.parallel.pp;
  throw ExperimentError(
      "this run needs about " + gib(needed) +
      " for weights, gradients, optimizer state and activations (device " +
      std::to_string(largest_device) + " alone " + gib(largest) + ") but only " + gib(available) +
      " of memory is available; use a smaller model or training.batch_size" +
      (many_in_flight ? ", 1f1b instead of gpipe" : "") +
      (experiment.parallel.recompute ? "" : ", parallel.recompute = true") + ", or fewer devices");
}

}  // namespace pipelab
