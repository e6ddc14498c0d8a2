// Mixture-of-Experts on the CPU executor: a moe layer after a linear (each
// sample one token), inside a GPT (each position one token), and as the MLP
// of a GPT's blocks (transformer_block with experts) trains, every step
// reports each layer's per-expert load and the auxiliary loss, and the load
// counts every token's top_k assignments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <numeric>

#include "core/runtime/threaded_executor.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

using testing::moe_spec;
using testing::run_experiment;
using testing::small_moe_experiment;
using testing::with_plan;

int64_t sum(const std::vector<int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), int64_t{0});
}

TEST(MoeTraining, AnMlpWithExpertsLearnsAndReportsEachStepsLoad) {
  for (const int64_t top_k : {1, 2}) {
    const Experiment experiment = with_plan(small_moe_experiment(top_k, 1.0), ScheduleKind::OneFOneB, 2, 2);
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
  LayerSpec moe = moe_spec(4, 2, 1.25);
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
      run_experiment(with_plan(small_moe_experiment(1, 0.25), ScheduleKind::GPipe, 1, 1));
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  // Capacity ceil(0.25 x 32 / 4) = 2 per expert: at most 8 of 32 tokens are kept.
  for (const StepMetrics& step : run.trace.steps)
    EXPECT_GE(sum(step.expert_load.front().dropped), 32 - 8);
}

Experiment expert_parallel(Experiment experiment, int dp, int ep, int pp = 1) {
  experiment = with_plan(std::move(experiment), ScheduleKind::OneFOneB, pp, 2, dp);
  experiment.parallel.ep = ep;
  experiment.training.steps = 6;
  return experiment;
}

double largest_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double largest = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    largest = std::max(largest, std::fabs(a[i] - b[i]));
  return largest;
}

TEST(MoeTraining, ExpertParallelTrainsLikeEveryReplicaHoldingEveryExpert) {
  // Capacity for every token: nothing is dropped, so every split routes alike.
  for (const int64_t top_k : {1, 2}) {
    const Experiment base = small_moe_experiment(top_k, 4.0);
    const testing::RunOutput reference = run_experiment(expert_parallel(base, 4, 1));
    ASSERT_EQ(reference.state, RunState::Finished) << reference.error;
    for (const int ep : {2, 4}) {
      const testing::RunOutput run = run_experiment(expert_parallel(base, 4, ep));
      ASSERT_EQ(run.state, RunState::Finished) << run.error;
      EXPECT_LT(largest_difference(reference.losses(), run.losses()), 1e-4)
          << "top_k " << top_k << ", ep " << ep;
      // The evaluator gathers every member's experts (evaluate_after).
      EXPECT_NEAR(run.trace.steps.back().val_loss, reference.trace.steps.back().val_loss, 1e-4)
          << "top_k " << top_k << ", ep " << ep;
      for (size_t s = 0; s < run.trace.steps.size(); ++s) {
        EXPECT_EQ(run.trace.steps[s].expert_load.front().routed,
                  reference.trace.steps[s].expert_load.front().routed);
        EXPECT_EQ(sum(run.trace.steps[s].expert_load.front().dropped), 0);
      }
    }
  }
  // Pipelined, with the experts on the second stage.
  const Experiment base = small_moe_experiment(2, 4.0);
  const testing::RunOutput reference = run_experiment(expert_parallel(base, 2, 1, 2));
  const testing::RunOutput run = run_experiment(expert_parallel(base, 2, 2, 2));
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  EXPECT_LT(largest_difference(reference.losses(), run.losses()), 1e-4) << "dp 2 x pp 2, ep 2";
}

// Each variant, run with ep 2, ends within 1e-4 of the reference's losses.
void expect_ep2_trains_like(const testing::RunOutput& reference,
                            std::vector<std::pair<std::string, Experiment>>& variants) {
  for (auto& [what, experiment] : variants) {
    experiment.parallel.ep = 2;
    const testing::RunOutput run = run_experiment(experiment);
    ASSERT_EQ(run.state, RunState::Finished) << what << ": " << run.error;
    EXPECT_LT(largest_difference(reference.losses(), run.losses()), 1e-4) << what;
  }
}

TEST(MoeTraining, ExpertParallelGptTrainsAlikeUnderTensorParallelRecomputeAndZeroBubble) {
  Experiment gpt = testing::tiny_gpt_experiment();
  gpt.model.layers.insert(gpt.model.layers.begin() + 2, moe_spec(4, 2, 1.25));
  gpt.training.steps = 4;
  const Experiment base = with_plan(gpt, ScheduleKind::OneFOneB, 1, 2, 2);
  const testing::RunOutput reference = run_experiment(base);
  ASSERT_EQ(reference.state, RunState::Finished) << reference.error;
  std::vector<std::pair<std::string, Experiment>> variants;
  Experiment tensor_parallel = base;
  tensor_parallel.parallel.tp = 2;
  variants.push_back({"tp 2", tensor_parallel});
  Experiment recomputed = with_plan(gpt, ScheduleKind::OneFOneB, 2, 2, 2);
  recomputed.parallel.recompute = true;
  variants.push_back({"pp 2, recompute", recomputed});
  variants.push_back({"zb-h1 pp 2", with_plan(gpt, ScheduleKind::ZeroBubbleH1, 2, 2, 2)});
  expect_ep2_trains_like(reference, variants);
}

TEST(MoeTraining, EveryAllToAllIsListedAndReportedWithItsBytes) {
  const testing::RunOutput run = run_experiment(expert_parallel(small_moe_experiment(1, 1.25), 4, 2));
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  // Per device, step and micro-batch: a dispatch and a combine each way.
  int count = 0;
  for (const TraceEvent& event : run.trace.events) {
    if (event.op.kind != OpKind::AllToAll) continue;
    ++count;
    EXPECT_EQ(event.op.group, CommGroup::ExpertParallel);
    EXPECT_EQ(event.op.layer, 2);
    // 4 experts x ceil(1.25 x 4 tokens / 4) = 2 slots x 16 values.
    EXPECT_EQ(event.bytes, 4 * 2 * 16 * 4);
  }
  EXPECT_EQ(count, 4 * 6 * 2 * 4);
}

std::vector<int> expert_layers(const StepMetrics& step) {
  std::vector<int> layers;
  for (const ExpertLoad& load : step.expert_load) layers.push_back(load.layer);
  return layers;
}

TEST(MoeTraining, AGptWhoseBlocksHaveExpertsLearnsToCopyAndReportsEachBlock) {
  Experiment experiment = testing::gpt_with_expert_blocks(1, 1.25);
  experiment.training.steps = 120;
  experiment.training.eval_every = 120;
  const testing::RunOutput run =
      run_experiment(with_plan(experiment, ScheduleKind::OneFOneB, 1, 2));
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  const std::vector<double> losses = run.losses();
  EXPECT_LT(losses.back(), 0.1 * losses.front());
  EXPECT_GE(run.trace.steps.back().val_accuracy, 0.95);  // 1.0 measured
  std::vector<int> blocks;
  for (size_t i = 0; i < experiment.model.layers.size(); ++i)
    if (experiment.model.layers[i].type == LayerType::TransformerBlock)
      blocks.push_back(static_cast<int>(i));
  ASSERT_FALSE(blocks.empty());
  const int64_t positions = experiment.training.batch_size * experiment.model.input[0];
  for (const StepMetrics& step : run.trace.steps) {
    EXPECT_GT(step.aux_loss, 0.0);
    EXPECT_EQ(expert_layers(step), blocks);
    for (const ExpertLoad& load : step.expert_load) {
      EXPECT_EQ(sum(load.routed), positions);
      for (size_t e = 0; e < load.routed.size(); ++e) EXPECT_LE(load.dropped[e], load.routed[e]);
    }
  }
}

TEST(MoeTraining, ExpertParallelBlocksTrainLikeEveryReplicaHoldingEveryExpert) {
  // Capacity for every token: nothing is dropped, so every split routes alike.
  for (const int64_t top_k : {1, 2}) {
    Experiment base = testing::gpt_with_expert_blocks(top_k, 4.0);
    base.training.eval_every = 3;  // the evaluator gathers every member's experts
    const testing::RunOutput reference = run_experiment(expert_parallel(base, 2, 1));
    ASSERT_EQ(reference.state, RunState::Finished) << reference.error;
    const testing::RunOutput run = run_experiment(expert_parallel(base, 2, 2));
    ASSERT_EQ(run.state, RunState::Finished) << run.error;
    EXPECT_LT(largest_difference(reference.losses(), run.losses()), 1e-4) << "top_k " << top_k;
    EXPECT_NEAR(run.trace.steps.back().val_loss, reference.trace.steps.back().val_loss, 1e-4);
    for (size_t s = 0; s < run.trace.steps.size(); ++s)
      for (size_t l = 0; l < run.trace.steps[s].expert_load.size(); ++l) {
        EXPECT_EQ(run.trace.steps[s].expert_load[l].routed,
                  reference.trace.steps[s].expert_load[l].routed);
        EXPECT_EQ(sum(run.trace.steps[s].expert_load[l].dropped), 0);
      }
  }
  // The all-to-alls name the blocks: a dispatch and a combine each way per block.
  const testing::RunOutput run =
      run_experiment(expert_parallel(testing::gpt_with_expert_blocks(1, 1.25), 2, 2));
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  int count = 0;
  for (const TraceEvent& event : run.trace.events) {
    if (event.op.kind != OpKind::AllToAll) continue;
    ++count;
    EXPECT_EQ(event.op.group, CommGroup::ExpertParallel);
    EXPECT_EQ(
        testing::gpt_with_expert_blocks(1, 1.25).model.layers[static_cast<size_t>(event.op.layer)].type,
        LayerType::TransformerBlock);
  }
  const int blocks = 2;  // tiny_gpt_experiment's
  EXPECT_EQ(count, 2 /* devices */ * 6 /* steps */ * 2 /* micro-batches */ * 4 * blocks);
}

TEST(MoeTraining, ExpertBlocksTrainAlikeUnderRecomputeAndZeroBubble) {
  Experiment gpt = testing::gpt_with_expert_blocks(2, 4.0);
  gpt.training.steps = 4;
  const testing::RunOutput reference =
      run_experiment(with_plan(gpt, ScheduleKind::OneFOneB, 1, 2, 2));
  ASSERT_EQ(reference.state, RunState::Finished) << reference.error;
  std::vector<std::pair<std::string, Experiment>> variants;
  Experiment recomputed = with_plan(gpt, ScheduleKind::OneFOneB, 2, 2, 2);
  recomputed.parallel.recompute = true;
  variants.push_back({"pp 2, full recompute", recomputed});
  Experiment selective = with_plan(gpt, ScheduleKind::OneFOneB, 2, 2, 2);
  selective.parallel.selective_recompute = true;
  variants.push_back({"pp 2, selective recompute", selective});
  variants.push_back({"zb-h1 pp 2", with_plan(gpt, ScheduleKind::ZeroBubbleH1, 2, 2, 2)});
  expect_ep2_trains_like(reference, variants);
}

// Blocks whose experts are split over tensor-parallel shards (each expert's
// FFN as the dense MLP, moe_layer.h): 20 steps end within 1e-4 (relative) of
// one shard's losses, every step routes and drops the same tokens, and the
// validation gathers every shard's slice. Alone, pipelined, and with expert
// parallelism over data-parallel replicas; with dropped tokens too; and
// under sequence parallelism (the blocks gather the sequence before their
// experts and scatter the combined outputs back).
struct TensorParallelCase {
  std::string what;
  double capacity_factor;
  int pp, dp, ep;
  bool sequence_parallel = false;
};

// model(capacity_factor) trained at tp 2 (and the case's ep, sequence
// parallelism) gives tp 1's losses, validation loss, routing and drops.
template <typename Model>
void expect_tensor_parallel_trains_like_one_shard(const Model& model,
                                                  std::initializer_list<TensorParallelCase> cases) {
  for (const TensorParallelCase& c : cases) {
    Experiment base = with_plan(model(c.capacity_factor), ScheduleKind::OneFOneB, c.pp, 2, c.dp);
    base.training.eval_every = 10;
    const testing::RunOutput reference = run_experiment(base);
    ASSERT_EQ(reference.state, RunState::Finished) << c.what << ": " << reference.error;
    Experiment split = base;
    split.parallel.tp = 2;
    split.parallel.ep = c.ep;
    split.parallel.sequence_parallel = c.sequence_parallel;
    const testing::RunOutput run = run_experiment(split);
    ASSERT_EQ(run.state, RunState::Finished) << c.what << ": " << run.error;
    const std::vector<double> expected = reference.losses();
    const std::vector<double> actual = run.losses();
    ASSERT_EQ(actual.size(), size_t{20}) << c.what;
    ASSERT_EQ(expected.size(), actual.size()) << c.what;
    for (size_t s = 0; s < actual.size(); ++s)
      EXPECT_NEAR(actual[s], expected[s], 1e-4 * std::fabs(expected[s])) << c.what << ", step " << s;
    EXPECT_NEAR(run.trace.steps.back().val_loss, reference.trace.steps.back().val_loss,
                1e-4 * std::fabs(reference.trace.steps.back().val_loss))
        << c.what << ": validation";
    int64_t dropped = 0;
    for (size_t s = 0; s < run.trace.steps.size(); ++s) {
      const std::vector<ExpertLoad>& got = run.trace.steps[s].expert_load;
      const std::vector<ExpertLoad>& want = reference.trace.steps[s].expert_load;
      ASSERT_EQ(got.size(), want.size()) << c.what;
      for (size_t l = 0; l < got.size(); ++l) {
        EXPECT_EQ(got[l].routed, want[l].routed) << c.what << ", step " << s;
        EXPECT_EQ(got[l].dropped, want[l].dropped) << c.what << ", step " << s;
        dropped += sum(got[l].dropped);
      }
    }
    if (c.capacity_factor < 1.0) {
      EXPECT_GT(dropped, 0) << c.what << ": the capacity was meant to drop tokens";
    }
  }
}

TEST(MoeTraining, ExpertBlocksUnderTensorParallelTrainLikeOneShard) {
  using Case = TensorParallelCase;
  expect_tensor_parallel_trains_like_one_shard(
      [](double capacity_factor) { return testing::gpt_with_expert_blocks(2, capacity_factor); },
      {Case{"tp 2", 4.0, 1, 1, 1}, Case{"tp 2, capacity 0.5", 0.5, 1, 1, 1},
       Case{"tp 2 x pp 2", 1.25, 2, 1, 1}, Case{"tp 2 x dp 2, ep 2", 1.25, 1, 2, 2},
       Case{"tp 2 sp, capacity 0.5", 0.5, 1, 1, 1, true},
       Case{"tp 2 sp x pp 2", 1.25, 2, 1, 1, true},
       Case{"tp 2 sp x dp 2, ep 2", 1.25, 1, 2, 2, true}});
}

// A standalone moe layer between sequence-parallel blocks gathers the whole
// sequence before routing it (moe_layer.h), so it routes and drops as tp 1.
TEST(MoeTraining, AMoeLayerBetweenSequenceParallelBlocksTrainsLikeOneShard) {
  using Case = TensorParallelCase;
  expect_tensor_parallel_trains_like_one_shard(
      [](double capacity_factor) {
        Experiment gpt = testing::gpt_with_expert_blocks(2, capacity_factor);
        gpt.model.layers.insert(gpt.model.layers.begin() + 2, moe_spec(4, 2, capacity_factor));
        return gpt;
      },
      {Case{"tp 2 sp, moe layer, capacity 0.5", 0.5, 1, 1, 1, true},
       Case{"tp 2 sp x pp 2, moe layer", 1.25, 2, 1, 1, true},
       Case{"tp 2 sp x dp 2, ep 2, moe layer", 1.25, 1, 2, 2, true}});
}

}  // namespace
}  // namespace pipelab
