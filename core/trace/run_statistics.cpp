#include "core/trace/run_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/trace/bubbles.h"

namespace pipelab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Mean of the finite values (NaN when there are none).
double finite_mean(const std::vector<double>& values) {
  double sum = 0;
  int count = 0;
  for (double value : values) {
    if (!std::isfinite(value)) continue;
    sum += value;
    ++count;
  }
  return count > 0 ? sum / count : kNaN;
}

// The trace's events that began at or after `begin`, with its devices.
Trace events_from(const Trace& trace, double begin) {
  Trace counted;
  counted.devices = trace.devices;
  for (const TraceEvent& event : trace.events)
    if (event.t_begin >= begin) counted.events.push_back(event);
  return counted;
}

}  // namespace

double warmup_end_time(const Trace& trace) {
  if (static_cast<int>(trace.steps.size()) <= kWarmupSteps) return kNaN;
  return trace.steps[kWarmupSteps - 1].t_end;
}

RunStatistics run_statistics(const Trace& trace) {
  RunStatistics stats;
  const int devices = device_count(trace);
  const double warmup_end = warmup_end_time(trace);
  stats.includes_warmup = !std::isfinite(warmup_end);
  const size_t first_step = stats.includes_warmup ? 0 : kWarmupSteps;
  // Where the counted part of the timeline begins.
  const double begin =
      stats.includes_warmup ? -std::numeric_limits<double>::infinity() : warmup_end;

  std::vector<double> step_times, bubbles;
  double samples = 0, seconds = 0;
  for (size_t i = first_step; i < trace.steps.size(); ++i) {
    const StepMetrics& step = trace.steps[i];
    step_times.push_back(step.step_time_s);
    bubbles.push_back(step.bubble_measured);
    if (std::isfinite(step.samples_per_s) && step.step_time_s > 0) {
      samples += step.samples_per_s * step.step_time_s;
      seconds += step.step_time_s;
    }
  }
  stats.steps_counted = static_cast<int>(step_times.size());
  stats.step_time_s = finite_mean(step_times);
  stats.samples_per_s = seconds > 0 ? samples / seconds : kNaN;

  const Trace counted = events_from(trace, begin);
  stats.bubble_fraction = finite_mean(bubbles);
  if (!std::isfinite(stats.bubble_fraction)) stats.bubble_fraction = bubble_fraction(counted);

  stats.final_loss = kNaN;
  for (const StepMetrics& step : trace.steps)
    if (std::isfinite(step.loss)) stats.final_loss = step.loss;

  const std::vector<double> idle = bubble_fraction_per_device(counted);
  stats.utilisation_per_device.assign(static_cast<size_t>(devices), kNaN);
  for (size_t d = 0; d < idle.size() && d < stats.utilisation_per_device.size(); ++d)
    stats.utilisation_per_device[d] = 1.0 - idle[d];

  // The latest sample before `begin` is the level the device held when the
  // counted window opened.
  std::vector<int64_t> carried(static_cast<size_t>(devices), 0);
  std::vector<double> carried_t(static_cast<size_t>(devices),
                                -std::numeric_limits<double>::infinity());
  stats.peak_bytes_per_device.assign(static_cast<size_t>(devices), 0);
  for (const MemorySample& sample : trace.memory) {
    if (sample.device < 0 || sample.device >= devices) continue;
    const int64_t total = total_bytes(sample.bytes);
    if (sample.t < begin) {
      if (sample.t >= carried_t[sample.device]) {
        carried_t[sample.device] = sample.t;
        carried[sample.device] = total;
      }
      continue;
    }
    int64_t& peak = stats.peak_bytes_per_device[sample.device];
    peak = std::max(peak, total);
  }
  for (int d = 0; d < devices; ++d)
    stats.peak_bytes_per_device[d] = std::max(stats.peak_bytes_per_device[d], carried[d]);
  return stats;
}

}  // namespace pipelab
