// A GPT trains exactly like one device under every synchronous split: the
// per-step loss (next-token cross-entropy, averaged over the step's counted
// positions) matches single-device training up to float reassociation, with
// the blocks' kept states passing through pipelines, zero-bubble's split
// backward, data parallelism and recomputation.
#include <gtest/gtest.h>

#include <cmath>

#include "conformance_support.h"

namespace pipelab {
namespace {

using testing::run_experiment;
using testing::tiny_gpt_experiment;
using testing::with_plan;

class TransformerEquivalence : public testing::ReferenceCurveConformance<TransformerEquivalence> {
 public:
  static Experiment reference_experiment() { return tiny_gpt_experiment(); }
};
PIPELAB_CONFORMANCE_SUITE(TransformerEquivalence);

TEST_P(TransformerEquivalence, SingleDeviceLearnsAndReportsTokenAccuracy) {
  ASSERT_EQ(reference().size(), 20u);
  EXPECT_LT(reference().back(), 0.9 * reference().front());
  const testing::RunOutput run = run_experiment(tiny_gpt_experiment());
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  EXPECT_GT(run.trace.steps.back().accuracy, 0.0);
  EXPECT_LE(run.trace.steps.back().accuracy, 1.0);
  EXPECT_GT(run.trace.steps.back().val_accuracy, 0.0);
}

TEST_P(TransformerEquivalence, GPipeAndOneFOneB) {
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::GPipe, 2, 4), "gpipe pp2 m4");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4), "1f1b pp2 m4");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 4, 8), "1f1b pp4 m8");
}

TEST_P(TransformerEquivalence, InterleavedAndZeroBubble) {
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::Interleaved1F1B, 2, 4, 1, 1, 2),
        "interleaved pp2 v2 m4");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::ZeroBubbleH1, 2, 4), "zb-h1 pp2 m4");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::ZeroBubbleV, 2, 4, 1, 1, 2), "zb-v pp2 m4");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::DualPipeV, 2, 4, 1, 1, 2), "dualpipev pp2 m4");
}

TEST_P(TransformerEquivalence, DataParallel) {
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 1, 1, 2), "dp2");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 2, 2), "dp2 x pp2");
}

TEST_P(TransformerEquivalence, Recomputation) {
  Experiment experiment = with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4);
  experiment.parallel.recompute = true;
  check(experiment, "1f1b pp2 recompute");
  experiment = with_plan(tiny_gpt_experiment(), ScheduleKind::ZeroBubbleH1, 2, 4);
  experiment.parallel.recompute = true;
  check(experiment, "zb-h1 pp2 recompute");
}

// Megatron tensor parallelism: the vocabulary-parallel embedding, blocks split
// by heads and MLP columns, the output layer column-parallel over the
// vocabulary with the vocabulary-parallel cross-entropy.
TEST_P(TransformerEquivalence, TensorParallel) {
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 1, 2, 1, 2), "tp2");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4, 1, 2), "tp2 x pp2");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 1, 2, 2, 2), "dp2 x tp2");
  check(with_plan(tiny_gpt_experiment(), ScheduleKind::ZeroBubbleH1, 2, 4, 1, 2), "tp2 zb-h1 pp2");
  Experiment recompute = with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4, 1, 2);
  recompute.parallel.recompute = true;
  check(recompute, "tp2 x pp2 recompute");
  Experiment selective = with_plan(tiny_gpt_experiment(), ScheduleKind::ZeroBubbleH1, 2, 4, 1, 2);
  selective.parallel.selective_recompute = true;
  check(selective, "tp2 zb-h1 pp2 selective recompute");
}

// Sequence parallelism: norms, residuals and the final layernorm on each
// shard's half of the sequence, gathers and scatters instead of all-reduces,
// the norms' partial gradients summed once per step.
Experiment sequence_parallel(Experiment experiment) {
  experiment.parallel.sequence_parallel = true;
  return experiment;
}

TEST_P(TransformerEquivalence, SequenceParallel) {
  check(sequence_parallel(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 1, 2, 1, 2)), "tp2 sp");
  check(sequence_parallel(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4, 1, 2)),
        "tp2 sp x pp2");
  check(sequence_parallel(with_plan(tiny_gpt_experiment(), ScheduleKind::GPipe, 4, 4, 1, 2)),
        "tp2 sp x gpipe pp4");
  check(sequence_parallel(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4, 2, 2)),
        "dp2 x tp2 sp x pp2");
  check(sequence_parallel(with_plan(tiny_gpt_experiment(), ScheduleKind::ZeroBubbleH1, 2, 4, 1, 2)),
        "tp2 sp zb-h1 pp2");
  Experiment recompute = sequence_parallel(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4, 1, 2));
  recompute.parallel.recompute = true;
  check(recompute, "tp2 sp x pp2 recompute");
  Experiment selective = sequence_parallel(with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4, 1, 2));
  selective.parallel.selective_recompute = true;
  check(selective, "tp2 sp x pp2 selective recompute");
}

TEST_P(TransformerEquivalence, SelectiveRecompute) {
  Experiment experiment = with_plan(tiny_gpt_experiment(), ScheduleKind::OneFOneB, 2, 4);
  experiment.parallel.selective_recompute = true;
  check(experiment, "1f1b pp2 selective recompute");
}

// Dropout inside the blocks draws masks keyed by (seed, layer, step, global
// sample, position), so a run with dropout matches itself under every split,
// and recomputation redraws the same masks.
TEST_P(TransformerEquivalence, DropoutInsideBlocksIsTheSameUnderEverySplit) {
  Experiment dropout = tiny_gpt_experiment();
  for (int layer : {1, 2}) dropout.model.layers[layer].dropout = 0.2;
  const testing::RunOutput single = run_experiment(dropout);
  ASSERT_EQ(single.state, RunState::Finished) << single.error;
  // The masks bite: the curve is not the dropout-free one.
  EXPECT_GT(std::fabs(single.losses().back() - reference().back()), 1e-3);
  const auto same = [&](const Experiment& experiment, const std::string& what) {
    const testing::RunOutput run = run_experiment(experiment);
    ASSERT_EQ(run.state, RunState::Finished) << what << ": " << run.error;
    testing::expect_same_curve(single.losses(), run.losses(), testing::kBackendLossTolerance, what);
  };
  same(with_plan(dropout, ScheduleKind::OneFOneB, 2, 4), "dropout 1f1b pp2 m4");
  same(with_plan(dropout, ScheduleKind::OneFOneB, 1, 2, 1, 2), "dropout tp2");
  same(with_plan(dropout, ScheduleKind::OneFOneB, 2, 4, 1, 2), "dropout tp2 x pp2");
  same(with_plan(dropout, ScheduleKind::OneFOneB, 1, 2, 2, 2), "dropout dp2 x tp2");
  same(with_plan(dropout, ScheduleKind::ZeroBubbleH1, 2, 4, 1, 2), "dropout tp2 zb-h1");
  same(sequence_parallel(with_plan(dropout, ScheduleKind::OneFOneB, 2, 4, 1, 2)), "dropout tp2 sp x pp2");
  Experiment recompute = with_plan(dropout, ScheduleKind::OneFOneB, 2, 4, 1, 2);
  recompute.parallel.recompute = true;
  same(recompute, "dropout tp2 x pp2 recompute");
  Experiment selective = with_plan(dropout, ScheduleKind::OneFOneB, 2, 4);
  selective.parallel.selective_recompute = true;
  same(selective, "dropout pp2 selective recompute");
}

}  // namespace
}  // namespace pipelab
