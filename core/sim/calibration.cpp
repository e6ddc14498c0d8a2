#include "core/sim/calibration.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "core/sim/experiment_prediction.h"
#include "core/sim/op_durations.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

// Least-squares line y = intercept + slope x.
struct LineFit {
  double n = 0, sum_x = 0, sum_y = 0, sum_xx = 0, sum_xy = 0;
  std::set<double> xs;

  void add(double x, double y) {
    n += 1;
    sum_x += x;
    sum_y += y;
    sum_xx += x * x;
    sum_xy += x * y;
    xs.insert(x);
  }
  bool has_two_sizes() const { return xs.size() >= 2; }
  double slope() const { return (n * sum_xy - sum_x * sum_y) / (n * sum_xx - sum_x * sum_x); }
  double intercept() const { return (sum_y - slope() * sum_x) / n; }
  double slope_through_origin() const { return sum_xy / sum_xx; }
};

// The precision whose GEMM rate the runs measure: bf16 where a mixed run has
// a bf16 peak to fit, fp32 otherwise (what cluster_device prices GEMMs at).
std::string measured_precision(const MeasuredRun& run, const DeviceSpec& device) {
  if (run.experiment.training.precision == Precision::Bf16Mixed && device.peak_flops.count("bf16"))
    return "bf16";
  return "fp32";
}

double predicted_step_s(const MeasuredRun& run, const ClusterSpec& cluster) {
  SimulationOptions metrics_only;
  metrics_only.record_events = false;
  metrics_only.record_memory = false;
  const CostModel cost = cluster_cost_model(run.experiment, cluster, run.stages);
  return simulate(run.schedule, cost, experiment_simulation_options(run.experiment, metrics_only))
             .makespan /
         std::max(1, run.schedule.steps);
}

// Sum over the runs of log(predicted / measured)^2.
double step_error(const std::vector<MeasuredRun>& runs, const std::vector<double>& measured,
                  const ClusterSpec& cluster) {
  double error = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    const double ratio = std::log(predicted_step_s(runs[k], cluster) / measured[k]);
    error += ratio * ratio;
  }
  return error;
}

// The device-link latency that brings the predicted steps closest to the
// measured ones: a scan over 0 and 0.1 us .. ~10 ms in steps of x1.4, then a
// golden-section search around the best.
double fit_latency(const std::vector<MeasuredRun>& runs, const std::vector<double>& measured,
                   ClusterSpec cluster) {
  const auto error_at = [&](double latency) {
    cluster.node.device_link.latency_s = latency;
    return step_error(runs, measured, cluster);
  };
  std::vector<double> grid = {0};
  for (double latency = 1e-7; latency < 1e-2; latency *= 1.4) grid.push_back(latency);
  size_t best = 0;
  double best_error = error_at(grid[0]);
  for (size_t i = 1; i < grid.size(); ++i)
    if (const double error = error_at(grid[i]); error < best_error) best = i, best_error = error;
  double low = grid[best > 0 ? best - 1 : 0], high = grid[std::min(best + 1, grid.size() - 1)];
  const double golden = (std::sqrt(5.0) - 1) / 2;
  for (int iteration = 0; iteration < 30 && high - low > 1e-9; ++iteration) {
    const double a = high - golden * (high - low), b = low + golden * (high - low);
    if (error_at(a) < error_at(b))
      high = b;
    else
      low = a;
  }
  const double refined = (low + high) / 2;
  return error_at(refined) < best_error ? refined : grid[best];
}

// The seconds the cost model gives an op's memory-bound work on `bandwidth`:
// its kernels' bytes, and for an optimizer step every parameter's state.
double memory_seconds(const Op& op, const StageProfile& stage, int optimizer_slots,
                      double bandwidth) {
  double bytes = stage_memory_bytes(op.kind, stage);
  if (op_kind_facts(op.kind).work.optimizer_step)
    bytes += static_cast<double>(stage.params) *
             static_cast<double>(CostModel::optimizer_bytes_per_param(optimizer_slots));
  return bytes / bandwidth;
}

// A compute op's arithmetic as fixed + flops / rate around the cluster's
// rate, from the cost model's time at the rate and at twice it. At one rate
// for every GEMM, flops is its FLOPs and fixed 0; priced by shape, flops is
// what scales with the rate (each GEMM's FLOPs over its tile fill) and
// fixed what does not (the output's write, a memory-bound GEMV).
struct ArithmeticTerms {
  double fixed = 0, flops = 0;
};

class ArithmeticAroundRate {
 public:
  ArithmeticAroundRate(const MeasuredRun& run, ClusterSpec cluster, const std::string& precision)
      : at_rate_(cluster_cost_model(run.experiment, cluster, run.stages)),
        at_twice_(cluster_cost_model(run.experiment, doubled(cluster, precision), run.stages)) {}

  ArithmeticTerms terms(const Op& op) const {
    const double rate = at_rate_.device().flops_per_s;
    const double once = at_rate_.arithmetic_seconds(op), twice = at_twice_.arithmetic_seconds(op);
    return {2 * twice - once, 2 * rate * (once - twice)};
  }

 private:
  static ClusterSpec doubled(ClusterSpec cluster, const std::string& precision) {
    cluster.device.peak_flops[precision] *= 2;
    return cluster;
  }
  CostModel at_rate_, at_twice_;
};

// Calls visit(op, stage, seconds) for each op of `run` on a profiled stage
// with its own measured time, leaving out the first step's when the trace
// has later ones: it pays for warm-up (a GPU's first kernels, the
// allocator's first blocks).
template <typename Visit>
void for_each_measured_op(const MeasuredRun& run, Visit&& visit) {
  const std::vector<double> own = own_durations(run.trace);
  const bool skip_first = std::any_of(run.trace.events.begin(), run.trace.events.end(),
                                      [](const TraceEvent& event) { return event.op.step > 0; });
  for (size_t i = 0; i < run.trace.events.size(); ++i) {
    const Op& op = run.trace.events[i].op;
    if (skip_first && op.step == 0) continue;
    if (op.stage < 0 || op.stage >= static_cast<int>(run.stages.size())) continue;
    visit(op, run.stages[op.stage], own[i]);
  }
}

// Each compute op's measured time less its memory-bound work and its
// rate-free arithmetic, against the FLOPs that scale with the rate.
LineFit compute_samples(const std::vector<MeasuredRun>& runs, const ClusterSpec& cluster,
                        const std::string& precision, double memory_bandwidth, int* samples) {
  LineFit compute;
  *samples = 0;
  for (const MeasuredRun& run : runs) {
    const ArithmeticAroundRate arithmetic(run, cluster, precision);
    const int slots = optimizer_slots(run.experiment);
    for_each_measured_op(run, [&](const Op& op, const StageProfile& stage, double own) {
      if (!is_compute(op.kind)) return;
      const ArithmeticTerms terms = arithmetic.terms(op);
      const double seconds = own - memory_seconds(op, stage, slots, memory_bandwidth) - terms.fixed;
      // The optimizer step has no GEMMs: at zero FLOPs it measures the fixed cost alone.
      if ((terms.flops <= 0 && !op_kind_facts(op.kind).work.optimizer_step) || seconds <= 0) return;
      compute.add(terms.flops, seconds);
      ++*samples;
    });
  }
  return compute;
}

// Each optimizer step's measured time against the bytes it moves: its state
// and its kernels' bytes. The step has no GEMMs, so the slope is the memory
// bandwidth the device achieved.
LineFit update_samples(const std::vector<MeasuredRun>& runs, int* samples) {
  LineFit updates;
  *samples = 0;
  for (const MeasuredRun& run : runs) {
    const int slots = optimizer_slots(run.experiment);
    for_each_measured_op(run, [&](const Op& op, const StageProfile& stage, double own) {
      if (!op_kind_facts(op.kind).work.optimizer_step) return;
      updates.add(memory_seconds(op, stage, slots, 1.0), own);
      ++*samples;
    });
  }
  return updates;
}

// Bandwidth from a line of times against bytes: its slope with two sizes or
// more, else the mean bytes over the mean time less `fixed_s` (0 when none fits).
double fitted_bandwidth(const LineFit& line, double fixed_s) {
  if (line.n == 0) return 0;
  if (line.has_two_sizes() && line.slope() > 0) return 1 / line.slope();
  const double per_transfer = line.sum_y / line.n - fixed_s;
  return per_transfer > 0 ? (line.sum_x / line.n) / per_transfer : 0;
}

// GEMMs priced by shape are piecewise in the rate (a GEMM turns memory-bound
// as the rate grows), so the fit is taken again around each fitted rate.
constexpr int kShapeFitRounds = 4;

}  // namespace

double median_step_s(const Trace& trace) {
  std::vector<double> steps;
  for (const StepMetrics& step : trace.steps)
    if (std::isfinite(step.step_time_s) && step.step_time_s > 0) steps.push_back(step.step_time_s);
  if (steps.empty()) return std::nan("");
  std::sort(steps.begin(), steps.end());
  const size_t mid = steps.size() / 2;
  return steps.size() % 2 ? steps[mid] : 0.5 * (steps[mid - 1] + steps[mid]);
}

CalibrationResult calibrate_cluster(const std::vector<MeasuredRun>& runs, const ClusterSpec& base) {
  if (runs.empty()) throw std::invalid_argument("calibration needs at least one measured run");
  CalibrationResult result;
  result.cluster = base;
  DeviceSpec& device = result.cluster.device;
  NodeSpec& node = result.cluster.node;
  double memory_bandwidth = base.device.memory_bandwidth * base.device.memory_bandwidth_fraction;

  LineFit sends, host_copies;
  for (const MeasuredRun& run : runs) {
    const double step = median_step_s(run.trace);
    if (!(step > 0)) throw std::invalid_argument("a calibration run recorded no step times");
    result.microbatches.push_back(run.experiment.parallel.microbatches);
    result.measured_step_s.push_back(step);
    result.base_step_s.push_back(predicted_step_s(run, base));
    const std::vector<double> own = own_durations(run.trace);
    for (size_t i = 0; i < run.trace.events.size(); ++i) {
      const TraceEvent& event = run.trace.events[i];
      if (event.bytes <= 0) continue;
      if (is_send(event.op.kind)) {
        sends.add(static_cast<double>(event.bytes), own[i]);
        ++result.message_samples;
      } else if (op_kind_facts(event.op.kind).family == OpFamily::HostTransfer) {
        host_copies.add(static_cast<double>(event.bytes), own[i]);
        ++result.host_copy_samples;
      }
    }
  }

  // The memory bandwidth, from the optimizer steps; the compute ops'
  // memory-bound work is priced at it. On a GPU only: a CPU core's steps of a
  // small model run from its caches (measured here at 4 to 7 times the file's
  // bandwidth, and as noisy), which says nothing of larger models.
  LineFit updates;
  if (device.compute_units > 0) updates = update_samples(runs, &result.update_samples);
  if (updates.has_two_sizes() && updates.slope() > 0) {
    const double achieved = 1 / updates.slope();
    if (achieved <= device.memory_bandwidth) {
      device.memory_bandwidth_fraction = achieved / device.memory_bandwidth;
    } else {  // faster than the file says (a small model in the L2 cache): the measurement wins
      device.memory_bandwidth = achieved;
      device.memory_bandwidth_fraction = 1;
    }
    memory_bandwidth = achieved;
  }
  // The host link, from offloading's copies when the runs made any.
  if (const double bandwidth = fitted_bandwidth(host_copies, 0); bandwidth > 0)
    node.host_link_bandwidth = bandwidth;

  // The GEMM rate and the fixed cost of each op. A device whose GEMMs are
  // priced by shape keeps its compute units: the fitted rate is then the one
  // under the shape model, which carries over to other shapes.
  const std::string precision = measured_precision(runs.front(), device);
  const int rounds = device.compute_units > 0 ? kShapeFitRounds : 1;
  for (int round = 0; round < rounds; ++round) {
    const LineFit compute =
        compute_samples(runs, result.cluster, precision, memory_bandwidth, &result.compute_samples);
    if (result.compute_samples == 0) break;
    double seconds_per_flop = compute.slope_through_origin();
    double overhead = 0;
    if (compute.has_two_sizes() && compute.slope() > 0 && compute.intercept() >= 0) {
      seconds_per_flop = compute.slope();
      overhead = compute.intercept();
    }
    if (!(seconds_per_flop > 0)) break;
    device.peak_flops[precision] = 1 / seconds_per_flop / device.gemm_fraction.at(precision);
    device.op_overhead_s = overhead;
  }
  // The link's bandwidth, then the latency that matches the measured steps.
  if (const double bandwidth = fitted_bandwidth(sends, base.node.device_link.latency_s);
      bandwidth > 0) {
    node.device_link.bandwidth = bandwidth;  // measured: what the link achieves
    node.device_link.achieved_fraction = 1;
  }
  const bool communicates = std::any_of(runs.begin(), runs.end(), [](const MeasuredRun& run) {
    const ParallelPlan& plan = run.experiment.parallel;
    return plan.dp * plan.tp * plan.cp * plan.pp > 1;
  });
  if (communicates)
    node.device_link.latency_s = fit_latency(runs, result.measured_step_s, result.cluster);
  for (const MeasuredRun& run : runs)
    result.calibrated_step_s.push_back(predicted_step_s(run, result.cluster));
  return result;
}

}  // namespace pipelab
