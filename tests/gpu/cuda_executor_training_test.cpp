// The CUDA executor trains exactly like the CPU one: for every schedule,
// split and update mode, the same experiment and seed give the same loss
// curve (FP32, within 1e-4 relative at every one of 20 steps) and the same
// final validation. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "executor_test_support.h"
#include "gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::on_backend;
using testing::small_experiment;
using testing::with_plan;

constexpr double kLossTolerance = 1e-4;

// Runs `experiment` on both backends and compares the curves.
void expect_same_as_cpu(const Experiment& experiment, const std::string& what) {
  const testing::RunOutput cpu = testing::run_experiment(on_backend(experiment, "cpu"));
  ASSERT_EQ(cpu.state, RunState::Finished) << what << " (cpu): " << cpu.error;
  const testing::RunOutput cuda = testing::run_experiment(on_backend(experiment, "cuda"));
  ASSERT_EQ(cuda.state, RunState::Finished) << what << " (cuda): " << cuda.error;
  ASSERT_EQ(cuda.losses().size(), static_cast<size_t>(experiment.training.steps)) << what;
  testing::expect_same_curve(cpu.losses(), cuda.losses(), kLossTolerance, what);
  EXPECT_NEAR(cuda.trace.steps.back().val_loss, cpu.trace.steps.back().val_loss,
              kLossTolerance * std::max(1.0, std::abs(cpu.trace.steps.back().val_loss)))
      << what;
  EXPECT_NEAR(cuda.trace.steps.back().accuracy, cpu.trace.steps.back().accuracy, 1.0 / 32 + 1e-9)
      << what;
}

class CudaTraining : public ::testing::Test {
 protected:
  void SetUp() override { PIPELAB_REQUIRE_GPU(); }
};

TEST_F(CudaTraining, SingleDevice) { expect_same_as_cpu(small_experiment(), "one device"); }

TEST_F(CudaTraining, GPipe) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::GPipe, 2, 4), "gpipe pp2 m4");
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::GPipe, 4, 8), "gpipe pp4 m8");
}

TEST_F(CudaTraining, OneFOneB) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4), "1f1b pp2 m4");
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::OneFOneB, 4, 8), "1f1b pp4 m8");
}

TEST_F(CudaTraining, Interleaved) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::Interleaved1F1B, 2, 4, 1, 1, 2),
                     "interleaved pp2 v2 m4");
  // Both chunks on one device: activations pass between them without messages.
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::Interleaved1F1B, 1, 2, 1, 1, 2),
                     "interleaved pp1 v2 m2");
}

TEST_F(CudaTraining, ZeroBubble) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::ZeroBubbleH1, 2, 4),
                     "zb-h1 pp2 m4");
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::ZeroBubbleH1, 4, 4),
                     "zb-h1 pp4 m4");
}

TEST_F(CudaTraining, PipeDreamWeightStashing) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::PipeDream, 2, 2), "pipedream pp2");
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::PipeDream, 4, 4), "pipedream pp4");
}

TEST_F(CudaTraining, PipeDream2BW) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::PipeDream2BW, 2, 2), "2bw pp2");
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::PipeDream2BW, 4, 4), "2bw pp4");
}

TEST_F(CudaTraining, DataParallel) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::OneFOneB, 1, 1, 2), "dp2");
}

TEST_F(CudaTraining, TensorParallel) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::OneFOneB, 1, 1, 1, 2), "tp2");
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 2, 1, 2),
                     "tp2 x pp2");
}

TEST_F(CudaTraining, DataTimesPipelineParallel) {
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 2, 2), "dp2 x pp2");
  expect_same_as_cpu(with_plan(small_experiment(), ScheduleKind::GPipe, 2, 2, 2, 2),
                     "dp2 x tp2 x pp2");
}

TEST_F(CudaTraining, Recomputation) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  experiment.parallel.recompute = true;
  expect_same_as_cpu(experiment, "1f1b pp2 recompute");
  Experiment tensor_parallel = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 2, 1, 2);
  tensor_parallel.parallel.recompute = true;
  expect_same_as_cpu(tensor_parallel, "tp2 x pp2 recompute");
}

TEST_F(CudaTraining, AsyncDataParallel) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 1, 1, 2);
  experiment.parallel.update = UpdateMode::Async;
  experiment.parallel.staleness = 2;
  expect_same_as_cpu(experiment, "async dp2 staleness 2");
}

TEST_F(CudaTraining, DropoutMasksMatchTheCpu) {
  Experiment experiment = small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  const LayerSpec dropout{LayerType::Dropout, 0, true, 0.3};
  experiment.model.layers = {linear(16), relu,       dropout, linear(16),
                             relu,       linear(16), relu,    linear(3)};
  expect_same_as_cpu(with_plan(experiment, ScheduleKind::OneFOneB, 2, 4), "dropout 1f1b pp2");
  expect_same_as_cpu(with_plan(experiment, ScheduleKind::OneFOneB, 1, 2, 1, 2), "dropout tp2");
}

TEST_F(CudaTraining, OtherLayersAndLosses) {
  Experiment experiment = small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  experiment.model.layers = {
      linear(16), {LayerType::Gelu, 0, true, 0.0}, linear(16), {LayerType::LayerNorm, 0, true, 0.0},
      linear(16), {LayerType::Tanh, 0, true, 0.0}, linear(3)};
  expect_same_as_cpu(with_plan(experiment, ScheduleKind::ZeroBubbleH1, 2, 2, 1, 2),
                     "gelu/layernorm/tanh zb-h1 pp2 tp2");
  Experiment mse = small_experiment();
  mse.model.loss = LossType::Mse;
  mse.training.optimizer.type = "adam";
  mse.training.optimizer.lr = 0.01;
  expect_same_as_cpu(with_plan(mse, ScheduleKind::OneFOneB, 2, 4, 2), "mse adam dp2 x pp2");
}

TEST_F(CudaTraining, EvaluatesEveryEvalEverySteps) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::PipeDream, 2, 2);
  experiment.training.eval_every = 5;
  const testing::RunOutput run = testing::run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  ASSERT_EQ(run.trace.steps.size(), 20u);
  for (const StepMetrics& step : run.trace.steps)
    EXPECT_EQ(std::isfinite(step.val_loss), (step.step + 1) % 5 == 0) << "step " << step.step;
}

TEST_F(CudaTraining, Tf32TrainsCloseToFp32) {
  const Experiment fp32 = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  Experiment tf32 = fp32;
  tf32.backend.tf32 = true;
  const testing::RunOutput exact = testing::run_experiment(fp32);
  const testing::RunOutput fast = testing::run_experiment(tf32);
  ASSERT_EQ(fast.state, RunState::Finished) << fast.error;
  // TF32 GEMMs keep 10 mantissa bits: about 1e-3 relative per product.
  testing::expect_same_curve(exact.losses(), fast.losses(), 2e-2, "tf32");
  bool announced = false;
  for (const std::string& message : fast.messages)
    announced = announced || message.find("tf32 GEMMs") != std::string::npos;
  EXPECT_TRUE(announced);
}

TEST_F(CudaTraining, DivergenceFailsWithTheCpuMessage) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 2);
  experiment.training.optimizer.lr = 1000;
  experiment.training.optimizer.momentum = 0.0;
  const testing::RunOutput run = testing::run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Failed);
  EXPECT_EQ(run.error.rfind("training diverged at step ", 0), 0u) << run.error;
  EXPECT_NE(run.error.find("lower training.optimizer.lr (now 1000)"), std::string::npos)
      << run.error;
  // The steps before the failing one were reported with finite losses.
  ASSERT_FALSE(run.trace.steps.empty());
  for (size_t i = 0; i + 1 < run.trace.steps.size(); ++i)
    EXPECT_TRUE(std::isfinite(run.trace.steps[i].loss));
}

}  // namespace
}  // namespace pipelab::gpu
