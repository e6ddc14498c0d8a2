// Mixture-of-Experts layers train on every backend as on the CPU: the loss
// curve, and at every step each moe layer's expert load (tokens routed to and
// dropped by each expert, which must match exactly: routing runs on the host
// by core's code on every backend) and the auxiliary loss. An MLP with a
// top-1 layer whose tight capacity drops tokens, a GPT with a top-2 layer,
// GPTs whose blocks' MLPs are experts, data parallelism, expert parallelism,
// pipelines that recompute or split the backward, a moe layer between
// sequence-parallel blocks, and validation on the host copy of the weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "conformance_support.h"

namespace pipelab {
namespace {

using testing::run_experiment;
using testing::with_plan;

// tiny_gpt_experiment with a top-2 moe layer after its first block.
Experiment moe_gpt() {
  Experiment experiment = testing::tiny_gpt_experiment();
  experiment.model.layers.insert(experiment.model.layers.begin() + 2, testing::moe_spec(4, 2, 1.25));
  return experiment;
}

int64_t dropped_in(const testing::RunOutput& run) {
  int64_t dropped = 0;
  for (const StepMetrics& step : run.trace.steps)
    for (const ExpertLoad& load : step.expert_load)
      dropped += std::accumulate(load.dropped.begin(), load.dropped.end(), int64_t{0});
  return dropped;
}

struct Runs {
  testing::RunOutput cpu, run;  // on the cpu, and on the backend under test
};

class MoeEquivalence : public testing::BackendConformance {
 protected:
  // Runs `experiment` on the CPU and on the backend under test and compares
  // the loss curves, the expert load and the auxiliary loss step by step.
  Runs check(const Experiment& experiment, const std::string& what) const {
    Runs runs{run_experiment(testing::on_backend(experiment, "cpu")),
              run_experiment(testing::on_backend(experiment, backend()))};
    const testing::RunOutput& cpu = runs.cpu;
    const testing::RunOutput& run = runs.run;
    EXPECT_EQ(cpu.state, RunState::Finished) << what << " on cpu: " << cpu.error;
    EXPECT_EQ(run.state, RunState::Finished) << what << " on " << backend() << ": " << run.error;
    if (cpu.state != RunState::Finished || run.state != RunState::Finished) return runs;
    testing::expect_same_curve(cpu.losses(), run.losses(), testing::kBackendLossTolerance, what);
    EXPECT_EQ(run.trace.steps.size(), cpu.trace.steps.size()) << what;
    for (size_t s = 0; s < std::min(run.trace.steps.size(), cpu.trace.steps.size()); ++s) {
      const StepMetrics& expected = cpu.trace.steps[s];
      const StepMetrics& actual = run.trace.steps[s];
      const std::string where = what + ", step " + std::to_string(expected.step);
      EXPECT_NEAR(actual.aux_loss, expected.aux_loss,
                  testing::kBackendLossTolerance * std::max(1.0, std::abs(expected.aux_loss)))
          << where << ": auxiliary loss";
      EXPECT_EQ(actual.expert_load.size(), expected.expert_load.size()) << where;
      for (size_t l = 0; l < std::min(actual.expert_load.size(), expected.expert_load.size()); ++l) {
        const ExpertLoad& want = expected.expert_load[l];
        const ExpertLoad& got = actual.expert_load[l];
        EXPECT_EQ(got.layer, want.layer) << where;
        EXPECT_EQ(got.routed, want.routed) << where << ", layer " << want.layer << ": tokens routed per expert";
        EXPECT_EQ(got.dropped, want.dropped) << where << ", layer " << want.layer << ": tokens dropped per expert";
      }
    }
    return runs;
  }
};
PIPELAB_CONFORMANCE_SUITE(MoeEquivalence);

TEST_P(MoeEquivalence, Top1WithDroppedTokensLearnsAsOnTheCpu) {
  // Capacity 0.5: 4 experts x 4 slots for a batch of 32 tokens.
  const Runs runs = check(testing::small_moe_experiment(1, 0.5), "top-1 mlp, capacity 0.5");
  const std::vector<double> losses = runs.cpu.losses();
  ASSERT_FALSE(losses.empty());
  EXPECT_LT(losses.back(), losses.front());
  EXPECT_GT(dropped_in(runs.cpu), 0) << "the capacity was meant to drop tokens";
}

TEST_P(MoeEquivalence, Top2GptLearnsAsOnTheCpu) { check(moe_gpt(), "top-2 gpt"); }

// Blocks whose MLPs are experts (Switch's and GShard's block): with dropout
// inside them, with dropped tokens, and pipelined with the backward split.
TEST_P(MoeEquivalence, GptWithExpertBlocksLearnsAsOnTheCpu) {
  check(testing::gpt_with_expert_blocks(2, 1.25), "top-2 expert blocks");
  Experiment dropout = testing::gpt_with_expert_blocks(1, 0.5);
  for (LayerSpec& layer : dropout.model.layers)
    if (layer.type == LayerType::TransformerBlock) layer.dropout = 0.1;
  const Runs runs = check(dropout, "top-1 expert blocks, capacity 0.5, dropout 0.1");
  EXPECT_GT(dropped_in(runs.cpu), 0) << "the capacity was meant to drop tokens";
  check(with_plan(testing::gpt_with_expert_blocks(2, 1.25), ScheduleKind::ZeroBubbleH1, 2, 4),
        "top-2 expert blocks zb-h1 pp2 m4");
}

TEST_P(MoeEquivalence, DataParallelAndPipelines) {
  check(with_plan(testing::small_moe_experiment(2, 1.0), ScheduleKind::GPipe, 1, 1, 2), "top-2 mlp dp2");
  Experiment recomputed = with_plan(testing::small_moe_experiment(2, 1.0), ScheduleKind::OneFOneB, 2, 4);
  recomputed.parallel.recompute = true;
  check(recomputed, "top-2 mlp 1f1b pp2 m4 recompute");
  check(with_plan(moe_gpt(), ScheduleKind::ZeroBubbleH1, 2, 4), "top-2 gpt zb-h1 pp2 m4");
}

// Expert parallelism: each replica of a group of ep holds 1/ep of the experts
// and tokens travel by all-to-all (on CUDA: NCCL between GPUs, copies on one),
// the experts' gradients summed over the replicas holding them. The same
// routing, drops and losses as the CPU at the same split; and, with capacity
// for every token (nothing dropped), the ep 1 losses within 1e-4, the
// validation (every member's experts gathered) too.
TEST_P(MoeEquivalence, ExpertParallelLearnsAsOnTheCpu) {
  Experiment base =
      with_plan(testing::small_moe_experiment(2, 4.0), ScheduleKind::OneFOneB, 1, 2, 4);
  base.training.steps = 6;
  base.training.eval_every = 6;
  const testing::RunOutput reference = run_experiment(testing::on_backend(base, backend()));
  ASSERT_EQ(reference.state, RunState::Finished) << reference.error;
  for (const int ep : {2, 4}) {
    Experiment experiment = base;
    experiment.parallel.ep = ep;
    const std::string what = "top-2 mlp dp4 ep" + std::to_string(ep);
    const Runs runs = check(experiment, what);
    if (runs.run.state != RunState::Finished) continue;
    testing::expect_same_curve(reference.losses(), runs.run.losses(), 1e-4, what + " against ep 1");
    EXPECT_EQ(dropped_in(runs.run), 0) << what;
    ASSERT_FALSE(runs.run.trace.steps.empty());
    EXPECT_NEAR(runs.run.trace.steps.back().val_loss, reference.trace.steps.back().val_loss, 1e-4)
        << what << ": validation";
  }
  // Dropped tokens, pipelined; and a GPT's tokens.
  Experiment pipelined =
      with_plan(testing::small_moe_experiment(1, 0.5), ScheduleKind::OneFOneB, 2, 4, 2);
  pipelined.parallel.ep = 2;
  check(pipelined, "top-1 mlp capacity 0.5, dp2 x pp2 ep2");
  Experiment gpt = with_plan(moe_gpt(), ScheduleKind::OneFOneB, 1, 2, 2);
  gpt.parallel.ep = 2;
  check(gpt, "top-2 gpt dp2 ep2");
}

// Blocks whose experts are split over tensor-parallel shards (moe_layer.h):
// the same routing, drops and losses as the CPU at the same split, and, with
// capacity for every token, tp 1's losses within 1e-4; pipelined, with
// expert parallelism, and under sequence parallelism.
TEST_P(MoeEquivalence, ExpertBlocksUnderTensorParallelLearnAsOnTheCpu) {
  const Experiment base = with_plan(testing::gpt_with_expert_blocks(2, 4.0), ScheduleKind::OneFOneB, 1, 2);
  const testing::RunOutput reference = run_experiment(testing::on_backend(base, backend()));
  ASSERT_EQ(reference.state, RunState::Finished) << reference.error;
  Experiment split = base;
  split.parallel.tp = 2;
  const Runs runs = check(split, "top-2 expert blocks tp2");
  if (runs.run.state == RunState::Finished)
    testing::expect_same_curve(reference.losses(), runs.run.losses(), 1e-4, "top-2 expert blocks tp2 against tp 1");
  check(with_plan(testing::gpt_with_expert_blocks(1, 0.5), ScheduleKind::ZeroBubbleH1, 2, 4, 1, 2),
        "top-1 expert blocks capacity 0.5, zb-h1 tp2 x pp2");
  Experiment expert_parallel = with_plan(testing::gpt_with_expert_blocks(2, 1.25), ScheduleKind::OneFOneB, 1, 2, 2, 2);
  expert_parallel.parallel.ep = 2;
  check(expert_parallel, "top-2 expert blocks tp2 x dp2 ep2");
  Experiment sequence_parallel = with_plan(testing::gpt_with_expert_blocks(1, 0.5), ScheduleKind::OneFOneB, 2, 4, 1, 2);
  sequence_parallel.parallel.sequence_parallel = true;
  check(sequence_parallel, "top-1 expert blocks capacity 0.5, tp2 sp x pp2");
}

// A standalone moe layer between sequence-parallel blocks gathers the whole
// sequence before routing it (moe_layer.h, gpu/layers/moe.h): the same
// routing, drops and losses as the CPU at the same split, with dropped
// tokens, pipelined, and with expert parallelism; and, with capacity for
// every token, tp 1's losses within 1e-4.
TEST_P(MoeEquivalence, AMoeLayerBetweenSequenceParallelBlocksLearnsAsOnTheCpu) {
  const auto with_moe_layer = [](double capacity_factor) {
    Experiment gpt = testing::gpt_with_expert_blocks(2, capacity_factor);
    gpt.model.layers.insert(gpt.model.layers.begin() + 2, testing::moe_spec(4, 2, capacity_factor));
    return gpt;
  };
  const Experiment base = with_plan(with_moe_layer(4.0), ScheduleKind::OneFOneB, 1, 2);
  const testing::RunOutput reference = run_experiment(testing::on_backend(base, backend()));
  ASSERT_EQ(reference.state, RunState::Finished) << reference.error;
  Experiment split = base;
  split.parallel.tp = 2;
  split.parallel.sequence_parallel = true;
  const Runs runs = check(split, "moe layer tp2 sp");
  if (runs.run.state == RunState::Finished)
    testing::expect_same_curve(reference.losses(), runs.run.losses(), 1e-4, "moe layer tp2 sp against tp 1");
  Experiment dropping = with_plan(with_moe_layer(0.5), ScheduleKind::OneFOneB, 2, 4, 1, 2);
  dropping.parallel.sequence_parallel = true;
  const Runs dropped = check(dropping, "moe layer capacity 0.5, tp2 sp x pp2");
  EXPECT_GT(dropped_in(dropped.cpu), 0) << "the capacity was meant to drop tokens";
  Experiment expert_parallel = with_plan(with_moe_layer(1.25), ScheduleKind::OneFOneB, 1, 2, 2, 2);
  expert_parallel.parallel.ep = 2;
  expert_parallel.parallel.sequence_parallel = true;
  check(expert_parallel, "moe layer tp2 sp x dp2 ep2");
}

// Validation runs on the host copy of the weights: every expert must come along.
TEST_P(MoeEquivalence, ValidationUsesEveryExpert) {
  Experiment experiment = testing::small_moe_experiment(1, 1.25);
  experiment.training.eval_every = 10;
  const Runs runs = check(experiment, "top-1 mlp with validation");
  ASSERT_EQ(runs.run.state, RunState::Finished) << runs.run.error;
  ASSERT_FALSE(runs.cpu.trace.steps.empty());
  const StepMetrics& expected = runs.cpu.trace.steps.back();
  const StepMetrics& actual = runs.run.trace.steps.back();
  ASSERT_FALSE(std::isnan(expected.val_loss));
  EXPECT_NEAR(actual.val_loss, expected.val_loss, testing::kBackendLossTolerance * expected.val_loss);
}

}  // namespace
}  // namespace pipelab
