// GPU losses and optimizers against core/nn's (skipped without a GPU).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/nn/loss.h"
#include "core/nn/optimizer.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/loss.h"
#include "gpu/layers/optimizer.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::expect_close;
using testing::random_tensor;

class GpuLossTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PIPELAB_REQUIRE_GPU();
    context_ = std::make_unique<DeviceContext>(0);
  }
  DeviceTensor upload(const Tensor& host) {
    return DeviceTensor::from_host(host, &context_->allocator(), MemoryCategory::Activations);
  }

  std::unique_ptr<DeviceContext> context_;
};

void expect_same_loss(const LossResult& gpu, const LossResult& cpu, const std::string& what) {
  EXPECT_EQ(gpu.samples, cpu.samples) << what;
  EXPECT_EQ(gpu.correct, cpu.correct) << what;
  EXPECT_NEAR(gpu.loss_sum, cpu.loss_sum, 1e-9 * std::max(1.0, std::fabs(cpu.loss_sum))) << what;
}

TEST_F(GpuLossTest, SoftmaxCrossEntropyMatchesTheCpu) {
  for (int64_t classes : {10, 3000}) {  // one warp per row, and a full block
    const int64_t batch = 33;
    Tensor logits = random_tensor(batch, classes, 20, 6.0);
    // A row of equal logits: the first one is the arg-max, as on the CPU.
    for (int64_t c = 0; c < classes; ++c) logits.at(0, c) = 0.5f;
    std::vector<int32_t> labels(batch);
    for (int64_t r = 0; r < batch; ++r) labels[r] = static_cast<int32_t>((r * 7) % classes);
    // Make some predictions right, so `correct` is checked on both outcomes.
    for (int64_t r = 1; r < batch; r += 3) logits.at(r, labels[r]) = 50.0f;
    const double scale = 1.0 / 128.0;
    const std::string what = "classes " + std::to_string(classes);

    const LossResult cpu = softmax_cross_entropy(logits, labels, scale);
    const GpuLossResult gpu = gpu_softmax_cross_entropy(upload(logits), labels, scale);
    EXPECT_GT(cpu.correct, 0);
    expect_same_loss(gpu.totals(), cpu, what);
    expect_close(gpu.grad.to_vector(), cpu.grad.to_vector(), 1e-6, 1e-9, what + " grad");
    EXPECT_EQ(gpu.grad.category(), MemoryCategory::Activations);

    const GpuLossResult no_grad = gpu_softmax_cross_entropy(upload(logits), labels, scale, false);
    EXPECT_TRUE(no_grad.grad.empty());
    expect_same_loss(no_grad.totals(), cpu, what + " without grad");

    // The per-micro-batch path: labels through pinned staging, same result.
    PinnedStaging staging(0, microbatch_staging_bytes(batch, classes, 0));
    const DeviceBuffer staged =
        upload_labels(labels, batch, classes, context_->allocator(), &staging);
    expect_same_loss(gpu_softmax_cross_entropy(upload(logits), staged, scale).totals(), cpu,
                     what + " staged labels");
  }
}

TEST_F(GpuLossTest, CrossEntropyRejectsBadLabelsLikeTheCpu) {
  const DeviceTensor logits = upload(random_tensor(4, 10, 21));
  const std::vector<int32_t> too_few = {1, 2, 3};
  const std::vector<int32_t> out_of_range = {1, 2, 10, 3};
  EXPECT_THROW(gpu_softmax_cross_entropy(logits, too_few, 1.0), std::invalid_argument);
  EXPECT_THROW(gpu_softmax_cross_entropy(logits, out_of_range, 1.0), std::invalid_argument);
  PinnedStaging staging(0);
  EXPECT_THROW(upload_labels(out_of_range, 4, 10, context_->allocator(), &staging),
               std::invalid_argument);
}

TEST_F(GpuLossTest, MeanSquaredErrorMatchesTheCpu) {
  const Tensor output = random_tensor(17, 300, 22);
  const Tensor target = random_tensor(17, 300, 23);
  const LossResult cpu = mean_squared_error(output, target, 0.25);
  const GpuLossResult gpu = gpu_mean_squared_error(upload(output), upload(target), 0.25);
  expect_same_loss(gpu.totals(), cpu, "mse");
  expect_close(gpu.grad.to_vector(), cpu.grad.to_vector(), 1e-6, 1e-9, "mse grad");
  EXPECT_THROW(gpu_mean_squared_error(upload(output), upload(random_tensor(17, 299, 24)), 1.0),
               std::invalid_argument);
}

// Steps a CPU and a GPU optimizer from the same parameters with the same
// gradients; the updates are the same arithmetic, so they agree to rounding.
void expect_optimizer_matches(DeviceContext& context, const OptimizerSettings& settings) {
  const std::string what = optimizer_type_name(settings.type);
  CachingAllocator* a = &context.allocator();
  Tensor cpu_value = random_tensor(31, 17, 30), cpu_grad(31, 17);
  Tensor cpu_bias = random_tensor(1, 17, 31), cpu_bias_grad(1, 17);
  DeviceTensor gpu_value = DeviceTensor::from_host(cpu_value, a, MemoryCategory::Weights);
  DeviceTensor gpu_grad(31, 17, a, MemoryCategory::Gradients);
  DeviceTensor gpu_bias = DeviceTensor::from_host(cpu_bias, a, MemoryCategory::Weights);
  DeviceTensor gpu_bias_grad(1, 17, a, MemoryCategory::Gradients);

  const std::unique_ptr<Optimizer> cpu =
      make_optimizer(settings, {{&cpu_value, &cpu_grad}, {&cpu_bias, &cpu_bias_grad}});
  const int64_t state_before = a->current()[static_cast<int>(MemoryCategory::OptimizerState)];
  const std::unique_ptr<GpuOptimizer> gpu =
      make_gpu_optimizer(settings, {{&gpu_value, &gpu_grad}, {&gpu_bias, &gpu_bias_grad}});
  EXPECT_EQ(gpu->state_bytes(), cpu->state_bytes()) << what;
  EXPECT_EQ(a->current()[static_cast<int>(MemoryCategory::OptimizerState)] - state_before,
            cpu->state_bytes())
      << what;

  for (int step = 1; step <= 3; ++step) {
    const Tensor grad = random_tensor(31, 17, 40 + step);
    const Tensor bias_grad = random_tensor(1, 17, 50 + step);
    cpu_grad.copy_from(grad);
    cpu_bias_grad.copy_from(bias_grad);
    gpu_grad.copy_from_host(grad);
    gpu_bias_grad.copy_from_host(bias_grad);
    cpu->step();
    gpu->step();
    const std::string at = what + " step " + std::to_string(step);
    expect_close(gpu_value.to_vector(), cpu_value.to_vector(), 1e-6, 1e-7, at + " weight");
    expect_close(gpu_bias.to_vector(), cpu_bias.to_vector(), 1e-6, 1e-7, at + " bias");
  }
  EXPECT_EQ(gpu->steps_taken(), 3);
}

TEST_F(GpuLossTest, OptimizersMatchTheCpu) {
  OptimizerSettings sgd;
  sgd.lr = 0.1;
  sgd.weight_decay = 0.01;
  expect_optimizer_matches(*context_, sgd);

  OptimizerSettings momentum = sgd;
  momentum.momentum = 0.9;
  expect_optimizer_matches(*context_, momentum);

  OptimizerSettings adam;
  adam.type = OptimizerType::Adam;
  adam.lr = 0.01;
  adam.weight_decay = 0.05;
  expect_optimizer_matches(*context_, adam);

  OptimizerSettings adamw = adam;
  adamw.type = OptimizerType::AdamW;
  expect_optimizer_matches(*context_, adamw);
}

// Needs no GPU: with no parameters nothing is allocated.
TEST(GpuOptimizerSettingsTest, RejectsBadSettingsLikeTheCpu) {
  OptimizerSettings bad;
  bad.lr = -1.0;
  EXPECT_THROW(make_gpu_optimizer(bad, {}), std::invalid_argument);
  bad = OptimizerSettings{};
  bad.type = OptimizerType::Adam;
  bad.beta1 = 1.0;
  EXPECT_THROW(make_gpu_optimizer(bad, {}), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab::gpu
