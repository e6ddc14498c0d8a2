// Real training reaches real accuracy: a 784-256-256-10 MLP on MNIST (the
// t10k files: 8,000 training and 2,000 validation images) gets at least 94%
// validation accuracy with GPipe, 1F1B and data parallelism alike.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

const std::string kMnistFolder = std::string(PIPELAB_SHARED_DIR) + "/datasets/mnist-t10k";

Experiment mnist_experiment() {
  Experiment experiment;
  experiment.name = "mnist mlp";
  experiment.seed = 1;
  experiment.model.input = {784};
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {linear(256), relu, linear(256), relu, linear(10)};
  experiment.data.source = "mnist";
  experiment.data.path = kMnistFolder;
  experiment.data.resolved_path = kMnistFolder;
  experiment.data.validation_fraction = 0.2;
  // 4 epochs of 62 batches: with 2-3 epochs every split ends at 94.2-94.5%,
  // too close to the bar; 4 end at 95.0-95.3% and take about a second each.
  experiment.training.batch_size = 128;
  experiment.training.steps = 248;
  experiment.training.optimizer.type = "sgd";
  experiment.training.optimizer.lr = 0.1;
  experiment.training.optimizer.momentum = 0.9;
  return experiment;
}

TEST(MnistTraining, ReachesNinetyFourPercentWithEverySchedule) {
  if (!std::filesystem::exists(kMnistFolder))
    GTEST_SKIP() << "MNIST t10k files not found in " << kMnistFolder;
  struct Case {
    const char* name;
    Experiment experiment;
  };
  const Case cases[] = {
      {"gpipe pp2 m4", testing::with_plan(mnist_experiment(), ScheduleKind::GPipe, 2, 4)},
      {"1f1b pp2 m4", testing::with_plan(mnist_experiment(), ScheduleKind::OneFOneB, 2, 4)},
      {"dp2", testing::with_plan(mnist_experiment(), ScheduleKind::OneFOneB, 1, 1, 2)},
  };
  for (const Case& run_case : cases) {
    const auto start = std::chrono::steady_clock::now();
    const testing::RunOutput run = testing::run_experiment(run_case.experiment);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(run.state, RunState::Finished) << run_case.name << ": " << run.error;
    const StepMetrics& last = run.trace.steps.back();
    std::printf("[ mnist    ] %-14s validation accuracy %.2f%%, loss %.4f, %.2f s\n", run_case.name,
                100 * last.val_accuracy, last.val_loss, seconds);
    EXPECT_GE(last.val_accuracy, 0.94) << run_case.name;
  }
}

// PipeMare (asynchronous, no stash, both techniques) learns MNIST: one epoch on
// 4 stages takes the loss from 2.24 to 0.49 and validation accuracy to 82%
// (measured); the bars leave room for other machines' float sums.
TEST(MnistTraining, PipeMareLossFalls) {
  if (!std::filesystem::exists(kMnistFolder))
    GTEST_SKIP() << "MNIST t10k files not found in " << kMnistFolder;
  Experiment experiment = testing::with_plan(mnist_experiment(), ScheduleKind::PipeMare, 4, 4);
  experiment.training.steps = 62;
  experiment.training.pipemare.lr_warmup_updates = 100;
  const testing::RunOutput run = testing::run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  const std::vector<double> losses = run.losses();
  const double first = (losses[0] + losses[1] + losses[2]) / 3;
  const double last = (losses[59] + losses[60] + losses[61]) / 3;
  std::printf("[ mnist    ] pipemare pp4 m4: loss %.4f -> %.4f, validation accuracy %.2f%%\n", first, last,
              100 * run.trace.steps.back().val_accuracy);
  EXPECT_LT(last, 0.3 * first);
  EXPECT_GE(run.trace.steps.back().val_accuracy, 0.75);
}

}  // namespace
}  // namespace pipelab
