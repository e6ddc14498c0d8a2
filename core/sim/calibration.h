// Calibration: fit the simulator's hardware description to this machine from
// short measured runs, so predictions use measured speeds.
//
//  - The GEMM rate and the per-op overhead: least squares of each compute
//    op's own duration t against its FLOPs f, t = overhead + f / rate, after
//    the memory-bound work (its kernels' bytes, and an optimizer step's state,
//    priced at the device's memory bandwidth, as the cost model does). On a
//    device that prices GEMMs by shape (compute_units: core/sim/gemm_time.h),
//    f is what scales with the rate (each GEMM's FLOPs over its tile fill) and
//    the rest of the arithmetic (outputs' writes, memory-bound GEMVs) is
//    taken off t too; the fit is repeated around each fitted rate, and the
//    device keeps its compute units, so the fitted rate carries over to
//    other shapes. Runs at
//    two micro-batch sizes give ops of several sizes, and the optimizer steps
//    (no FLOPs) the overhead alone, which is what separates the two; every
//    op the cost model adds the overhead to is in the fit. The first step is
//    left out when there are others (warm-up). A negative overhead falls back to a line
//    through the origin.
//  - The link's bandwidth: the slope of each send's duration against its bytes
//    (t = a + bytes / bandwidth), with at least two sizes; one size gives
//    bytes / (t - the node's latency).
//  - The link's latency: the value that makes the simulated steps match the
//    measured median steps (least squares of the log ratio over the runs). It
//    stands for everything that delays a receiver beyond the sends' own time,
//    such as a sleeping thread's wake-up.
//  - On a GPU, the memory bandwidth: the slope of each optimizer step's time
//    against the bytes it moves (it computes nothing), fitted first so the
//    compute ops' memory-bound work is priced at it. A CPU core keeps its
//    file's: its small models' steps run from its caches.
//  - The host link: the slope of offloading's copies' time against their
//    bytes, when the runs offload.
// What a run cannot show (the network between nodes, the memory's size)
// stays as the base files give it. (core/cli/measured_calibration.h measures the runs on this
// machine.)
#pragma once

#include <vector>

#include "core/hardware/hardware_spec.h"
#include "core/io/experiment.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/schedule.h"
#include "core/trace/trace_events.h"

namespace pipelab {

// One measured run, with what the simulator needs to predict it.
struct MeasuredRun {
  Experiment experiment;             // as it ran
  Trace trace;                       // its events and steps
  std::vector<StageProfile> stages;  // what its stages compute
  Schedule schedule;                 // the experiment lowered, as predict_experiment lowers it
};

struct CalibrationResult {
  ClusterSpec cluster;      // the base device and node with the measured figures
  int compute_samples = 0;  // compute ops fitted
  int message_samples = 0;  // sends fitted
  int update_samples = 0;   // optimizer steps the memory bandwidth was fitted to
  int host_copy_samples = 0;  // offloading's copies the host link was fitted to
  // Per run: its micro-batch count, the measured median step, and the step predicted on the base
  // cluster and on the calibrated one.
  std::vector<int> microbatches;
  std::vector<double> measured_step_s, base_step_s, calibrated_step_s;
};

// Throws std::invalid_argument when `runs` is empty or a run has no steps.
CalibrationResult calibrate_cluster(const std::vector<MeasuredRun>& runs, const ClusterSpec& base);

// The median of a run's step times (the first step pays for warm-up).
double median_step_s(const Trace& trace);

}  // namespace pipelab
