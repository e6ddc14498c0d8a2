// A small convolutional network (conv2d, batch norm, relu, a residual block
// that widens and halves the image, a global average pool) trains on every
// backend as on the CPU: on one device, with synced batch norm over
// data-parallel replicas, and in pipelines that recompute or split the
// backward (the running statistics move once per micro-batch, the kept
// states pass between the halves).
#include <gtest/gtest.h>

#include <cmath>

#include "conformance_support.h"

namespace pipelab {
namespace {

using testing::losses_of;
using testing::run_experiment;
using testing::small_conv_experiment;
using testing::with_plan;

class ConvEquivalence : public testing::BackendConformance {
 protected:
  // The CPU's curves: the whole batch at once, and cut into 4 micro-batches
  // (batch norm normalises each micro-batch by its own statistics).
  static void SetUpTestSuite() {
    whole_batch_ = new std::vector<double>(
        losses_of(testing::on_backend(small_conv_experiment(true), "cpu"), "cpu, one device"));
    microbatches_ = new std::vector<double>(
        losses_of(testing::on_backend(
                      with_plan(small_conv_experiment(false), ScheduleKind::GPipe, 1, 4), "cpu"),
                  "cpu, one device, m4"));
  }
  static void TearDownTestSuite() {
    delete whole_batch_;
    delete microbatches_;
  }

  static void check(const std::vector<double>& reference, const Experiment& experiment,
                    const std::string& what) {
    testing::expect_same_curve(reference, losses_of(experiment, what),
                               testing::kBackendLossTolerance, what);
  }

  static std::vector<double>* whole_batch_;
  static std::vector<double>* microbatches_;
};
std::vector<double>* ConvEquivalence::whole_batch_ = nullptr;
std::vector<double>* ConvEquivalence::microbatches_ = nullptr;
PIPELAB_CONFORMANCE_SUITE(ConvEquivalence);

TEST_P(ConvEquivalence, OneDeviceLearnsAsOnTheCpu) {
  ASSERT_EQ(whole_batch_->size(), 20u);
  EXPECT_LT(whole_batch_->back(), whole_batch_->front());
  check(*whole_batch_, small_conv_experiment(true), "one device");
}

TEST_P(ConvEquivalence, SyncedBatchNormInDataParallelEqualsOneDevice) {
  check(*whole_batch_, with_plan(small_conv_experiment(true), ScheduleKind::GPipe, 1, 1, 2),
        "synced dp2");
}

TEST_P(ConvEquivalence, PipelinesWithRecomputeAndSplitBackward) {
  Experiment recomputed = with_plan(small_conv_experiment(false), ScheduleKind::OneFOneB, 2, 4);
  recomputed.parallel.recompute = true;
  check(*microbatches_, recomputed, "1f1b pp2 m4 recompute");
  check(*microbatches_, with_plan(small_conv_experiment(false), ScheduleKind::ZeroBubbleH1, 3, 4),
        "zb-h1 pp3 m4");
}

// Validation runs on the host copy of the weights: batch norm's running
// statistics must come along.
TEST_P(ConvEquivalence, ValidationUsesTheRunningStatistics) {
  Experiment experiment = small_conv_experiment(false);
  experiment.training.eval_every = 10;
  const testing::RunOutput cpu = run_experiment(testing::on_backend(experiment, "cpu"));
  const testing::RunOutput run = run_experiment(experiment);
  ASSERT_EQ(cpu.state, RunState::Finished) << cpu.error;
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  const StepMetrics& expected = cpu.trace.steps.back();
  const StepMetrics& actual = run.trace.steps.back();
  ASSERT_FALSE(std::isnan(expected.val_loss));
  EXPECT_NEAR(actual.val_loss, expected.val_loss, testing::kBackendLossTolerance * expected.val_loss);
}

}  // namespace
}  // namespace pipelab
