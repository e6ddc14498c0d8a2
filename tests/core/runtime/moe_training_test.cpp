// Mixture-of-Experts on the CPU executor: a moe layer after a linear (each
// sample one token) and inside a GPT (each position one token) trains, every
// step reports each layer's per-expert load and the auxiliary loss, and the
// load counts every token's top_k assignments.
#include <gtest/gtest.h>

#include <numeric>

#include "core/runtime/threaded_executor.h"
#include "runtime_test_support.h"

namespace pipelab {
namespace {

using testing::run_experiment;
using testing::with_plan;

LayerSpec moe_layer(int64_t experts, int64_t top_k, double capacity_factor) {
  LayerSpec moe;
  moe.type = LayerType::Moe;
  moe.experts = experts;
  moe.top_k = top_k;
  moe.ffn = 16;
  moe.capacity_factor = capacity_factor;
  return moe;
}

// small_experiment's MLP with a moe layer of 4 experts between its linears.
Experiment moe_mlp(int64_t top_k, double capacity_factor) {
  Experiment experiment = testing::small_experiment();
  experiment.data.noise = 0.3;  // blobs apart enough that the loss falls far in 20 steps
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {LayerSpec{LayerType::Linear, 16, true, 0.0}, relu,
                             moe_layer(4, top_k, capacity_factor),
                             LayerSpec{LayerType::Linear, 3, true, 0.0}};
  return experiment;
}

int64_t sum(const std::vector<int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), int64_t{0});
}

TEST(MoeTraining, AnMlpWithExpertsLearnsAndReportsEachStepsLoad) {
  for (const int64_t top_k : {1, 2}) {
    const Experiment experiment = with_plan(moe_mlp(top_k, 1.0), ScheduleKind::OneFOneB, 2, 2);
    const testing::RunOutput run = run_experiment(experiment);
    ASSERT_EQ(run.state, RunState::Finished) << run.error;
    const std::vector<double> losses = run.losses();
    ASSERT_EQ(losses.size(), 20u);
    EXPECT_LT(losses.back(), 0.5 * losses.front()) << "top_k " << top_k;
    for (const StepMetrics& step : run.trace.steps) {
      EXPECT_GT(step.aux_loss, 0.0);
      ASSERT_EQ(step.expert_load.size(), 1u);
      const ExpertLoad& load = step.expert_load.front();
      EXPECT_EQ(load.layer, 2);
      ASSERT_EQ(load.routed.size(), 4u);
      EXPECT_EQ(sum(load.routed), experiment.training.batch_size * top_k);
      for (size_t e = 0; e < 4; ++e) EXPECT_LE(load.dropped[e], load.routed[e]);
    }
  }
}

TEST(MoeTraining, AGptWithAnExpertLayerRoutesEveryPosition) {
  Experiment experiment = testing::tiny_gpt_experiment();
  LayerSpec moe = moe_layer(4, 2, 1.25);
  experiment.model.layers.insert(experiment.model.layers.begin() + 2, moe);
  const testing::RunOutput run = run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  const std::vector<double> losses = run.losses();
  EXPECT_LT(losses.back(), losses.front());
  const int64_t positions = experiment.training.batch_size * experiment.model.input[0];
  for (const StepMetrics& step : run.trace.steps) {
    ASSERT_EQ(step.expert_load.size(), 1u);
    EXPECT_EQ(sum(step.expert_load.front().routed), positions * 2);
  }
}

TEST(MoeTraining, ATightCapacityDropsTokensAndCountsThem) {
  const testing::RunOutput run =
      run_experiment(with_plan(moe_mlp(1, 0.25), ScheduleKind::GPipe, 1, 1));
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  // Capacity ceil(0.25 x 32 / 4) = 2 per expert: at most 8 of 32 tokens are kept.
  for (const StepMetrics& step : run.trace.steps)
    EXPECT_GE(sum(step.expert_load.front().dropped), 32 - 8);
}

}  // namespace
}  // namespace pipelab
