// Calibration recovers the hardware that produced a run: runs "measured" on
// known hardware (the simulator's own traces of an experiment on it) are
// fitted from the catalogue's cpu-core, and the fit must find that hardware.
#include "core/sim/calibration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/schedule/lowering.h"
#include "core/sim/experiment_prediction.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

MeasuredRun run_on(const Experiment& experiment, const ClusterSpec& hardware) {
  MeasuredRun run;
  run.experiment = experiment;
  run.stages = profile_stages(experiment.model, experiment.parallel, microbatch_size(experiment),
                              experiment.training.precision);
  run.schedule = build_schedule(experiment.parallel, run.stages);
  SimulationOptions options;
  options.overlap_gradient_reduction = experiment.simulation.overlap_grad_reduce;
  const SimulationResult result =
      simulate(run.schedule, cluster_cost_model(experiment, hardware, run.stages), options);
  run.trace = result.trace;
  StepMetrics step;
  step.step_time_s = result.makespan / run.schedule.steps;
  run.trace.steps = {step, step, step};
  return run;
}

// The experiment "measured" on `hardware` at 2 and 8 micro-batches, as calibrate runs it.
std::vector<MeasuredRun> runs_at_two_sizes(Experiment experiment, const ClusterSpec& hardware) {
  std::vector<MeasuredRun> runs;
  for (int microbatches : {2, 8}) {
    experiment.parallel.microbatches = microbatches;
    EXPECT_EQ(validate_experiment(experiment), std::vector<std::string>{});
    runs.push_back(run_on(experiment, hardware));
  }
  return runs;
}

TEST(Calibration, RecoversTheHardwareThatProducedTheRuns) {
  Experiment experiment = default_experiment();
  experiment.parallel.pp = 2;
  experiment.parallel.dp = 2;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.simulation.profile = "cpu-core";
  const ClusterSpec base = experiment_cluster(experiment);

  ClusterSpec truth = base;
  const double rate = 30e9, overhead = 40e-6, bandwidth = 0.5e9, latency = 150e-6;
  truth.device.peak_flops["fp32"] = rate / truth.device.gemm_fraction.at("fp32");
  truth.device.op_overhead_s = overhead;
  truth.node.device_link.bandwidth = bandwidth;
  truth.node.device_link.latency_s = latency;

  const std::vector<MeasuredRun> runs = runs_at_two_sizes(experiment, truth);
  const CalibrationResult fitted = calibrate_cluster(runs, base);
  EXPECT_GT(fitted.compute_samples, 0);
  EXPECT_GT(fitted.message_samples, 0);
  EXPECT_NEAR(fitted.cluster.device.sustained_gemm_flops("fp32"), rate, rate * 1e-6);
  EXPECT_NEAR(fitted.cluster.device.op_overhead_s, overhead, overhead * 1e-6);
  EXPECT_NEAR(fitted.cluster.node.device_link.bandwidth, bandwidth, bandwidth * 1e-6);
  EXPECT_NEAR(fitted.cluster.node.device_link.latency_s, latency, latency * 0.02);
  EXPECT_EQ(fitted.cluster.device.memory_bandwidth, base.device.memory_bandwidth);
  ASSERT_EQ(fitted.microbatches, (std::vector<int>{2, 8}));
  for (size_t k = 0; k < runs.size(); ++k) {
    EXPECT_NEAR(fitted.calibrated_step_s[k], fitted.measured_step_s[k],
                fitted.measured_step_s[k] * 0.01);
    // The base profile has no per-op cost and a fast link: it predicts too fast a step.
    EXPECT_LT(fitted.base_step_s[k], fitted.measured_step_s[k] * 0.8);
  }
}

// A calibrated GPU keeps its compute units (its rate is fitted under the
// shape model: the next test). Its link's fitted bandwidth is what the link achieved: the written
// node runs it at that bandwidth (achieved fraction 1), not discounted twice.
TEST(Calibration, AFittedGpuKeepsItsShapeModelAndItsLinkIsNotDiscountedAgain) {
  Experiment experiment = default_experiment();
  experiment.parallel.pp = 2;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.simulation.profile = "a100";
  const ClusterSpec base = experiment_cluster(experiment);
  ASSERT_GT(base.device.compute_units, 0);
  ASSERT_LT(base.node.device_link.achieved_fraction, 1);
  const CalibrationResult fitted = calibrate_cluster(runs_at_two_sizes(experiment, base), base);
  EXPECT_EQ(fitted.cluster.device.compute_units, base.device.compute_units);
  EXPECT_EQ(fitted.cluster.node.device_link.achieved_fraction, 1);
  EXPECT_GT(fitted.cluster.node.device_link.bandwidth, 0);
}

// GEMMs priced by shape: a GPT's GEMMs fill the GPU's units unevenly, and an
// output's write does not speed up with the rate. A GPU whose true rate is
// 30% below the catalogue's is found from two runs of a small GPT, and the fit
// predicts a GPT of other shapes (wider, longer sequences) as that GPU runs it.
TEST(Calibration, AGpuRateFittedUnderTheShapeModelCarriesOverToOtherShapes) {
  Experiment experiment =
      load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/tiny_gpt_copy.json");
  experiment.simulation.profile = "h100";
  experiment.training.precision = Precision::Bf16Mixed;
  // Wide enough that its GEMMs, not its kernels' launches, set its passes' time.
  experiment.model.input = {256};
  for (LayerSpec& layer : experiment.model.layers)
    if (layer.type == LayerType::Embedding) layer.dim = 1024;
  ASSERT_EQ(validate_experiment(experiment), std::vector<std::string>{});
  const ClusterSpec base = experiment_cluster(experiment);
  ASSERT_GT(base.device.compute_units, 0);
  ClusterSpec truth = base;
  truth.device.peak_flops["bf16"] *= 0.7;
  truth.device.op_overhead_s = 20e-6;
  const CalibrationResult fitted = calibrate_cluster(runs_at_two_sizes(experiment, truth), base);
  const double rate = truth.device.sustained_gemm_flops("bf16");
  EXPECT_NEAR(fitted.cluster.device.sustained_gemm_flops("bf16"), rate, rate * 1e-3);
  EXPECT_NEAR(fitted.cluster.device.op_overhead_s, 20e-6, 20e-6 * 1e-2);
  EXPECT_EQ(fitted.cluster.device.compute_units, base.device.compute_units);

  Experiment wider = experiment;
  for (LayerSpec& layer : wider.model.layers) {
    if (layer.type == LayerType::Embedding) layer.dim *= 4;
    if (layer.type == LayerType::TransformerBlock && layer.ffn > 0) layer.ffn *= 4;
  }
  wider.model.input = {wider.model.input.front() * 2};
  ASSERT_EQ(validate_experiment(wider), std::vector<std::string>{});
  const MeasuredRun on_truth = run_on(wider, truth);
  const std::vector<StageProfile>& stages = on_truth.stages;
  SimulationOptions options;
  options.record_events = options.record_memory = false;
  const double truth_step =
      simulate(on_truth.schedule, cluster_cost_model(wider, truth, stages), options).makespan;
  const double fitted_step =
      simulate(on_truth.schedule, cluster_cost_model(wider, fitted.cluster, stages), options)
          .makespan;
  EXPECT_NEAR(fitted_step / truth_step, 1.0, 1e-3);
}

// The optimizer steps give a GPU's achieved memory bandwidth (they move
// every parameter's state and compute nothing), and offloading's copies the
// host link's: runs on a GPU at 60% of the catalogue's streaming bandwidth
// with a slower host link give both back, and the GEMM rate beside them.
TEST(Calibration, AGpuRunGivesItsMemoryBandwidthAndItsHostLink) {
  Experiment experiment =
      load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/tiny_gpt_copy.json");
  experiment.simulation.profile = "h100";
  experiment.model.input = {256};
  for (LayerSpec& layer : experiment.model.layers)
    if (layer.type == LayerType::Embedding) layer.dim = 1024;
  experiment.parallel.offload = OffloadMode::Activations;
  const ClusterSpec base = experiment_cluster(experiment);
  ClusterSpec truth = base;
  truth.device.memory_bandwidth_fraction = 0.6;
  truth.device.peak_flops["fp32"] *= 0.8;
  truth.node.host_link_bandwidth = 11e9;
  const CalibrationResult fitted = calibrate_cluster(runs_at_two_sizes(experiment, truth), base);
  EXPECT_GT(fitted.update_samples, 0);
  EXPECT_GT(fitted.host_copy_samples, 0);
  EXPECT_NEAR(fitted.cluster.device.memory_bandwidth_fraction, 0.6, 0.6 * 1e-3);
  EXPECT_EQ(fitted.cluster.device.memory_bandwidth, base.device.memory_bandwidth);
  EXPECT_NEAR(fitted.cluster.node.host_link_bandwidth, 11e9, 11e9 * 1e-3);
  const double rate = truth.device.sustained_gemm_flops("fp32");
  EXPECT_NEAR(fitted.cluster.device.sustained_gemm_flops("fp32"), rate, rate * 1e-3);
  // A CPU core's steps run from its caches: its file's bandwidth stays.
  experiment.simulation.profile = "cpu-core";
  experiment.parallel.offload = OffloadMode::None;
  const ClusterSpec cpu = experiment_cluster(experiment);
  ClusterSpec slow_cpu = cpu;
  slow_cpu.device.memory_bandwidth_fraction *= 0.5;
  const CalibrationResult cpu_fit = calibrate_cluster(runs_at_two_sizes(experiment, slow_cpu), cpu);
  EXPECT_EQ(cpu_fit.update_samples, 0);
  EXPECT_EQ(cpu_fit.cluster.device.memory_bandwidth_fraction, cpu.device.memory_bandwidth_fraction);
}

// A measured run's first step pays for warm-up (on a GPU the first kernels and
// allocations took 3 to 8 times longer): its ops are left out of the fit when
// later steps were measured, so they cannot pull the rate and the overhead.
TEST(Calibration, LeavesTheWarmUpStepOut) {
  Experiment experiment = default_experiment();
  experiment.parallel.pp = 2;
  experiment.parallel.schedule = ScheduleKind::OneFOneB;
  experiment.simulation.profile = "cpu-core";
  const ClusterSpec base = experiment_cluster(experiment);
  ClusterSpec truth = base;
  const double rate = 20e9, overhead = 30e-6;
  truth.device.peak_flops["fp32"] = rate / truth.device.gemm_fraction.at("fp32");
  truth.device.op_overhead_s = overhead;
  std::vector<MeasuredRun> runs;
  for (int microbatches : {2, 8}) {
    experiment.parallel.microbatches = microbatches;
    MeasuredRun run = run_on(experiment, truth);
    // Step 0 as measured: every op 5 times as long; step 1 as the hardware runs it.
    double warm_up_end = 0;
    std::vector<TraceEvent> events;
    for (TraceEvent event : run.trace.events) {
      event.op.step = 0;
      event.t_begin *= 5;
      event.t_end *= 5;
      warm_up_end = std::max(warm_up_end, event.t_end);
      events.push_back(event);
    }
    for (TraceEvent event : run.trace.events) {
      event.op.step = 1;
      event.t_begin += warm_up_end;
      event.t_end += warm_up_end;
      events.push_back(event);
    }
    run.trace.events = events;
    runs.push_back(run);
  }
  const CalibrationResult fitted = calibrate_cluster(runs, base);
  EXPECT_NEAR(fitted.cluster.device.sustained_gemm_flops("fp32"), rate, rate * 1e-6);
  EXPECT_NEAR(fitted.cluster.device.op_overhead_s, overhead, overhead * 1e-6);
}

TEST(Calibration, RefusesNoRuns) {
  EXPECT_THROW(calibrate_cluster({}, ClusterSpec{}), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
