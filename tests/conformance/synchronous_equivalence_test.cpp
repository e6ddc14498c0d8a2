// Every synchronous schedule trains exactly like one device, on every backend:
// the per-step loss curve matches single-device training on the CPU (the
// reference) up to float reassociation.
#include <gtest/gtest.h>

#include <cmath>

#include "conformance_support.h"

namespace pipelab {
namespace {

using testing::run_experiment;
using testing::small_experiment;
using testing::with_plan;

// The CPU's single-device run of an experiment.
std::vector<double> cpu_reference(const Experiment& experiment) {
  const testing::RunOutput single = run_experiment(testing::on_backend(experiment, "cpu"));
  EXPECT_EQ(single.state, RunState::Finished) << single.error;
  return single.losses();
}

// Each named split of the experiment trains to `reference`, within 1e-4.
void expect_splits_match(const std::vector<double>& reference,
                         const std::vector<std::pair<Experiment, std::string>>& splits) {
  for (const auto& [plan, name] : splits) {
    const testing::RunOutput run = testing::run_experiment(plan);
    ASSERT_EQ(run.state, RunState::Finished) << name << ": " << run.error;
    testing::expect_same_curve(reference, run.losses(), testing::kBackendLossTolerance, name);
  }
}

class SynchronousEquivalence : public testing::ReferenceCurveConformance<SynchronousEquivalence> {
 public:
  static Experiment reference_experiment() { return small_experiment(); }
};
PIPELAB_CONFORMANCE_SUITE(SynchronousEquivalence);

TEST_P(SynchronousEquivalence, SingleDeviceLearns) {
  ASSERT_EQ(reference().size(), 20u);
  EXPECT_LT(reference().back(), reference().front());
  check(small_experiment(), "one device");
}

TEST_P(SynchronousEquivalence, GPipe) {
  check(with_plan(small_experiment(), ScheduleKind::GPipe, 2, 4), "gpipe pp2 m4");
  check(with_plan(small_experiment(), ScheduleKind::GPipe, 4, 8), "gpipe pp4 m8");
}

TEST_P(SynchronousEquivalence, OneFOneB) {
  check(with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4), "1f1b pp2 m4");
  check(with_plan(small_experiment(), ScheduleKind::OneFOneB, 4, 8), "1f1b pp4 m8");
}

TEST_P(SynchronousEquivalence, Interleaved) {
  check(with_plan(small_experiment(), ScheduleKind::Interleaved1F1B, 2, 4, 1, 1, 2),
        "interleaved pp2 v2 m4");
  // m = 1 is not a multiple of pp: one round of 1 (PyTorch's rule; the batch
  // of 32 leaves no odd m above pp).
  check(with_plan(small_experiment(), ScheduleKind::Interleaved1F1B, 2, 1, 1, 1, 2),
        "interleaved pp2 v2 m1");
  // Both chunks on one device: activations pass between them without messages.
  check(with_plan(small_experiment(), ScheduleKind::Interleaved1F1B, 1, 2, 1, 1, 2),
        "interleaved pp1 v2 m2");
}

TEST_P(SynchronousEquivalence, ZeroBubble) {
  check(with_plan(small_experiment(), ScheduleKind::ZeroBubbleH1, 2, 4), "zb-h1 pp2 m4");
  check(with_plan(small_experiment(), ScheduleKind::ZeroBubbleH1, 4, 4), "zb-h1 pp4 m4");
}

TEST_P(SynchronousEquivalence, ZeroBubbleV) {
  // Two chunks per device in a V: device 0 runs the first and the last stage.
  check(with_plan(small_experiment(), ScheduleKind::ZeroBubbleV, 2, 4, 1, 1, 2), "zb-v pp2 m4");
  // Fewer micro-batches than 2p - 1: torch's order with the missing ones dropped.
  check(with_plan(small_experiment(), ScheduleKind::ZeroBubbleV, 2, 2, 1, 1, 2), "zb-v pp2 m2");
  // Both chunks on one device: the turn of the V passes no message.
  check(with_plan(small_experiment(), ScheduleKind::ZeroBubbleV, 1, 2, 1, 1, 2), "zb-v pp1 m2");
  check(with_plan(small_experiment(), ScheduleKind::ZeroBubbleV, 2, 4, 2, 1, 2), "zb-v dp2 x pp2");
}

TEST_P(SynchronousEquivalence, DualPipeV) {
  // The V placement with torch's forward-backward pairs (fused B) and a split drain.
  check(with_plan(small_experiment(), ScheduleKind::DualPipeV, 2, 4, 1, 1, 2), "dualpipev pp2 m4");
  check(with_plan(small_experiment(), ScheduleKind::DualPipeV, 2, 8, 1, 1, 2), "dualpipev pp2 m8");
  check(with_plan(small_experiment(), ScheduleKind::DualPipeV, 1, 2, 1, 1, 2), "dualpipev pp1 m2");
  check(with_plan(small_experiment(), ScheduleKind::DualPipeV, 2, 4, 2, 1, 2), "dualpipev dp2 x pp2");
}

TEST_P(SynchronousEquivalence, DataParallel) {
  check(with_plan(small_experiment(), ScheduleKind::OneFOneB, 1, 1, 2), "dp2");
  check(with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 2, 2), "dp2 x pp2");
}

TEST_P(SynchronousEquivalence, TensorParallel) {
  check(with_plan(small_experiment(), ScheduleKind::OneFOneB, 1, 1, 1, 2), "tp2");
  check(with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 2, 1, 2), "tp2 x pp2");
}

TEST_P(SynchronousEquivalence, Recomputation) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  experiment.parallel.recompute = true;
  check(experiment, "1f1b pp2 recompute");
}

TEST_P(SynchronousEquivalence, ActivationOffloading) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::GPipe, 2, 4);
  experiment.parallel.offload = OffloadMode::Activations;
  check(experiment, "gpipe pp2 offload");
}

TEST_P(SynchronousEquivalence, OptimizerOffloading) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4, 2);
  experiment.parallel.offload = OffloadMode::Optimizer;
  check(experiment, "1f1b pp2 dp2 optimizer offload");
}

TEST_P(SynchronousEquivalence, AsyncDataParallelWithStalenessZeroIsSynchronous) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 1, 1, 2);
  experiment.parallel.update = UpdateMode::Async;
  experiment.parallel.staleness = 0;
  check(experiment, "async dp2 staleness 0");
}

}  // namespace
}  // namespace pipelab

namespace pipelab {
namespace {

class SynchronousEquivalenceWithDropout : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(SynchronousEquivalenceWithDropout);

// Dropout masks depend on (seed, layer, step, global sample), never on the split.
TEST_P(SynchronousEquivalenceWithDropout, MasksFollowTheSampleNotTheSplit) {
  Experiment experiment = testing::small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  const LayerSpec dropout{LayerType::Dropout, 0, true, 0.3};
  experiment.model.layers = {linear(16), relu,       dropout, linear(16),
                             relu,       linear(16), relu,    linear(3)};
  const std::vector<double> reference = cpu_reference(experiment);

  // Without dropout the curve is another one: the masks are really applied.
  Experiment no_dropout = experiment;
  no_dropout.model.layers[2].p = 0.0;
  EXPECT_NE(testing::run_experiment(no_dropout).losses(), reference);

  expect_splits_match(reference,
                      {{testing::with_plan(experiment, ScheduleKind::OneFOneB, 2, 4), "1f1b pp2 m4"},
                       {testing::with_plan(experiment, ScheduleKind::GPipe, 1, 4, 2), "dp2 m4"},
                       {testing::with_plan(experiment, ScheduleKind::OneFOneB, 1, 2, 1, 2),
                        "tp2 m2"}});
}

class SynchronousEquivalenceOtherLayers : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(SynchronousEquivalenceOtherLayers);

// Other layer kinds under tensor parallelism: gelu and tanh between a column-
// and a row-parallel linear (sharded), a layernorm (replicated) between pairs.
TEST_P(SynchronousEquivalenceOtherLayers, TensorAndPipelineParallel) {
  Experiment experiment = testing::small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  experiment.model.layers = {
      linear(16), {LayerType::Gelu, 0, true, 0.0}, linear(16), {LayerType::LayerNorm, 0, true, 0.0},
      linear(16), {LayerType::Tanh, 0, true, 0.0}, linear(3)};
  const std::vector<double> reference = cpu_reference(experiment);
  ASSERT_EQ(reference.size(), 20u);
  expect_splits_match(
      reference,
      {{testing::with_plan(experiment, ScheduleKind::OneFOneB, 1, 2, 1, 2), "tp2"},
       {testing::with_plan(experiment, ScheduleKind::ZeroBubbleH1, 2, 2, 1, 2), "zb-h1 pp2 tp2"},
       {testing::with_plan(experiment, ScheduleKind::GPipe, 2, 2, 2, 2), "dp2 tp2 pp2"}});
}

// Eight stages on four devices need a deeper stack than small_experiment's.
TEST_P(SynchronousEquivalenceOtherLayers, VSchedulesOnFourDevices) {
  Experiment experiment = testing::small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {linear(16), relu, linear(16), relu, linear(16),
                             relu,       linear(16), relu, linear(3)};
  const std::vector<double> reference = cpu_reference(experiment);
  ASSERT_EQ(reference.size(), 20u);
  expect_splits_match(
      reference,
      {{testing::with_plan(experiment, ScheduleKind::DualPipeV, 4, 8, 1, 1, 2), "dualpipev pp4 m8"},
       {testing::with_plan(experiment, ScheduleKind::ZeroBubbleV, 4, 8, 1, 1, 2), "zb-v pp4 m8"}});
}

class SynchronousEquivalenceOtherLosses : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(SynchronousEquivalenceOtherLosses);

// Mean squared error on one-hot rows of a classification set (experiments
// only allow classification data sets).
TEST_P(SynchronousEquivalenceOtherLosses, MeanSquaredError) {
  Experiment experiment = testing::small_experiment();
  experiment.model.loss = LossType::Mse;
  const std::vector<double> expected = cpu_reference(experiment);
  const testing::RunOutput split =
      testing::run_experiment(testing::with_plan(experiment, ScheduleKind::OneFOneB, 2, 4, 2));
  ASSERT_EQ(split.state, RunState::Finished) << split.error;
  const std::vector<double> actual = split.losses();
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5);
  EXPECT_LT(expected.back(), expected.front());
  // Accuracy from the arg-max, as under cross-entropy.
  EXPECT_GT(split.trace.steps.back().accuracy, 0.0);
  EXPECT_GT(split.trace.steps.back().val_accuracy, 0.0);
}

// Adam and AdamW step the same on every backend and every split.
TEST_P(SynchronousEquivalenceOtherLosses, AdamAndAdamW) {
  for (const char* optimizer : {"adam", "adamw"}) {
    Experiment experiment = small_experiment();
    experiment.training.optimizer.type = optimizer;
    experiment.training.optimizer.lr = 0.01;
    experiment.training.optimizer.weight_decay = 0.01;
    const std::vector<double> expected = cpu_reference(experiment);
    const testing::RunOutput split =
        testing::run_experiment(testing::with_plan(experiment, ScheduleKind::OneFOneB, 2, 4, 2));
    ASSERT_EQ(split.state, RunState::Finished) << optimizer << ": " << split.error;
    testing::expect_same_curve(expected, split.losses(), testing::kBackendLossTolerance,
                               std::string(optimizer) + " dp2 x pp2");
  }
}

}  // namespace
}  // namespace pipelab

