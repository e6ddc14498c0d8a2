#include "core/sim/calibration.h"

#include <cmath>
#include <set>

#include "core/sim/op_durations.h"

namespace pipelab {
namespace {

// FLOPs of a compute op on its stage (0 for ops the profiles do not cost).
double op_flops(const Op& op, const std::vector<StageProfile>& stages) {
  if (op.stage < 0 || op.stage >= static_cast<int>(stages.size())) return 0;
  return stage_flops(op.kind, stages[op.stage]);
}

}  // namespace

CalibrationResult calibrate_profile(const Trace& measured, const std::vector<StageProfile>& stages,
                                    const DeviceProfile& base) {
  CalibrationResult result;
  result.profile = base;
  result.profile.name = base.name + "-measured";
  const std::vector<double> own = own_durations(measured);

  double flops_squared = 0;
  double flops_times_seconds = 0;
  // Sends: sums for the least-squares line t = a + b * bytes.
  double n = 0, sum_x = 0, sum_y = 0, sum_xx = 0, sum_xy = 0;
  std::set<int64_t> sizes;
  for (size_t i = 0; i < measured.events.size(); ++i) {
    const TraceEvent& event = measured.events[i];
    const OpKind kind = event.op.kind;
    if (is_compute(kind)) {
      const double flops = op_flops(event.op, stages);
      // The FLOP rate is fitted to the time left after the memory-bound
      // kernels, priced at the base profile's memory bandwidth as the cost model does.
      const double memory_time =
          event.op.stage >= 0 && event.op.stage < static_cast<int>(stages.size())
              ? stage_memory_bytes(kind, stages[event.op.stage]) / base.memory_bandwidth
              : 0;
      const double seconds = own[i] - memory_time;
      if (flops <= 0 || seconds <= 0) continue;
      flops_squared += flops * flops;
      flops_times_seconds += flops * seconds;
      ++result.compute_samples;
    } else if (is_send(kind) && event.bytes > 0) {
      const double x = static_cast<double>(event.bytes);
      n += 1;
      sum_x += x;
      sum_y += own[i];
      sum_xx += x * x;
      sum_xy += x * own[i];
      sizes.insert(event.bytes);
      ++result.message_samples;
    }
  }
  if (flops_times_seconds > 0) result.profile.flops_per_s = flops_squared / flops_times_seconds;

  if (n > 0 && sizes.size() >= 2) {
    const double slope = (n * sum_xy - sum_x * sum_y) / (n * sum_xx - sum_x * sum_x);
    const double intercept = (sum_y - slope * sum_x) / n;
    if (slope > 0) {
      result.profile.link_bandwidth = 1.0 / slope;
      result.profile.link_latency_s = std::max(0.0, intercept);
    }
  } else if (n > 0) {
    const double per_message = sum_y / n - base.link_latency_s;
    if (per_message > 0) result.profile.link_bandwidth = (sum_x / n) / per_message;
  }
  return result;
}

}  // namespace pipelab
