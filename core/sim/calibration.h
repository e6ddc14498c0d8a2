// Calibration: fit the simulator's device profile to this machine from a
// short measured run, so predictions use measured speeds.
//
//  - flops_per_s: least squares through the origin of each compute op's own
//    duration t against its FLOPs f (t = f / rate, from the stage profiles:
//    F and Recompute forward FLOPs, B both backward parts, BI and BW one each):
//    rate = sum(f^2) / sum(f t).
//  - link bandwidth and latency: least squares of each send's duration
//    against its bytes (t = latency + bytes / bandwidth) when the sends carry
//    at least two sizes; with one size, the latency stays and the bandwidth
//    is bytes / (t - latency). Left as they are when nothing was sent.
// Fields it cannot measure come from `base`; the name becomes "<base>-measured".
// (core/cli/cpu_calibration.h measures such a run on this machine's CPU.)
#pragma once

#include <vector>

#include "core/plan/stage_profile.h"
#include "core/sim/cost_model.h"
#include "core/trace/trace_events.h"

namespace pipelab {

struct CalibrationResult {
  DeviceProfile profile;
  int compute_samples = 0;  // compute events used for flops_per_s
  int message_samples = 0;  // sends used for the link
};

CalibrationResult calibrate_profile(const Trace& measured, const std::vector<StageProfile>& stages,
                                    const DeviceProfile& base);

}  // namespace pipelab
