// MFU as Megatron-LM reports it, and an experiment's devices placed on nodes.
#include "core/sim/throughput.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"

namespace pipelab {
namespace {

const SimulationOptions kMetricsOnly{false, false};

Experiment example(const std::string& file) {
  return load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/" + file);
}

// Narayanan et al. 2021 (Megatron-LM), eq. 3 without recomputation's extra
// forward: a GPT step is 72 B s l h^2 (1 + s / (6 h) + V / (12 l h)) FLOPs.
double megatron_gpt_flops(double batch, double sequence, double layers, double hidden, double vocab) {
  return 72 * batch * sequence * layers * hidden * hidden *
         (1 + sequence / (6 * hidden) + vocab / (12 * layers * hidden));
}

TEST(Throughput, ModelFlopsOfGpt3MatchMegatronsFormula) {
  const Experiment experiment = example("gpt3_175b_predict.json");
  const double flops = model_flops_per_step(experiment.model, experiment.training.batch_size);
  const double formula = megatron_gpt_flops(experiment.training.batch_size, 2048, 96, 12288, 50304);
  // The profile counts the same GEMMs plus what the formula leaves out
  // (norms, softmax, GELU, the loss): a fraction of a percent more.
  EXPECT_GT(flops, formula);
  EXPECT_LT(flops, formula * 1.02);
}

// Model FLOPs are the model's, not the split's: tensor parallelism repeats
// the norms on every shard unless sequence parallelism splits them, and
// selective recomputation runs attention's forward twice, yet the model does
// the same work, so MFU ranks splits exactly as their step times do.
TEST(Throughput, ModelFlopsDoNotDependOnTheSplit) {
  Experiment experiment = example("gpt3_175b_predict.json");
  const auto model_flops = [&] {
    const Prediction prediction = predict_experiment(experiment, std::nullopt, 0, kMetricsOnly);
    return predicted_throughput(experiment, prediction).model_flops_per_step;
  };
  const double reference = model_flops();
  experiment.parallel.sequence_parallel = false;
  experiment.parallel.selective_recompute = false;
  EXPECT_DOUBLE_EQ(model_flops(), reference);
  experiment.parallel.tp = 4;
  experiment.parallel.dp = 2;
  EXPECT_DOUBLE_EQ(model_flops(), reference);
}

TEST(Throughput, MfuIsAchievedFlopsOverTheDatasheetPeakInTheRunsPrecision) {
  const Experiment experiment = example("gpt3_175b_predict.json");
  const Prediction prediction = predict_experiment(experiment, std::nullopt, 0, kMetricsOnly);
  const Throughput throughput = predicted_throughput(experiment, prediction);
  EXPECT_EQ(throughput.devices, 128);
  EXPECT_DOUBLE_EQ(throughput.peak_flops_per_device, 989.4e12);  // H100 SXM dense BF16
  EXPECT_NEAR(throughput.step_seconds, prediction.result.makespan, 1e-12);
  EXPECT_NEAR(throughput.achieved_flops_per_device * throughput.step_seconds * 128,
              throughput.model_flops_per_step, 1e-6 * throughput.model_flops_per_step);
  EXPECT_NEAR(throughput.mfu, throughput.achieved_flops_per_device / 989.4e12, 1e-12);
  // The sustained BF16 GEMM rate (66% of peak) bounds it: pipeline bubbles,
  // communication and memory-bound ops only take from it.
  EXPECT_GT(throughput.mfu, 0.2);
  EXPECT_LT(throughput.mfu, 0.66);

  Experiment unit = experiment;
  unit.simulation.profile = "unit";
  EXPECT_THROW(predicted_throughput(unit, predict_experiment(unit, std::nullopt, 0, kMetricsOnly)), ExperimentError);
}

TEST(Throughput, AnExperimentLargerThanANodeIsPlacedOnNodesAndPaysTheNetwork) {
  const Experiment experiment = example("gpt3_175b_predict.json");  // tp 8 x pp 16 on h100
  const Prediction prediction = predict_experiment(experiment, std::nullopt, 0, kMetricsOnly);
  ASSERT_TRUE(prediction.cost.topology().has_value());
  const ClusterTopology& topology = *prediction.cost.topology();
  EXPECT_EQ(topology.devices_per_node, 8);
  EXPECT_EQ(topology.node(127), 15);  // 16 nodes, one per pipeline stage
  // The same schedule with every device on one NVLink fabric runs faster:
  // the pipeline's sends now cross the network.
  CostModel flat = CostModel::from_profiles(prediction.profiles, prediction.cost.device(),
                                            prediction.cost.optimizer_slots());
  const SimulationResult one_fabric = simulate(prediction.schedule, flat, kMetricsOnly);
  EXPECT_GT(prediction.result.makespan, one_fabric.makespan);
}

}  // namespace
}  // namespace pipelab
