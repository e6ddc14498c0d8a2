// GPU layer details the per-op table (op_conformance_test.cpp) does not
// cover: saved row statistics, dropout offsets and rates, split versus fused
// backward, row-parallel bias, and what layers count. Skipped without a GPU.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/nn/activations.h"
#include "core/nn/dropout.h"
#include "core/nn/init.h"
#include "core/nn/layer_norm.h"
#include "core/nn/linear.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/activation.h"
#include "gpu/layers/dropout.h"
#include "gpu/layers/layer_norm.h"
#include "gpu/layers/linear.h"
#include "gpu/kernels/layer_norm.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::expect_close;
using testing::expect_close_to_scale;
using testing::random_tensor;

class GpuLayerTest : public ::testing::Test {
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

// The forward kernel can save each row's mean and 1/std; they equal what the
// statistics kernel computes and the CPU's double-precision statistics.
TEST_F(GpuLayerTest, LayerNormForwardSavesRowStatistics) {
  const int64_t rows = 6, width = 777;
  const Tensor x = random_tensor(rows, width, 16, 2.0);
  CachingAllocator* a = &context_->allocator();
  const DeviceTensor x_gpu = upload(x);
  DeviceTensor gain(1, width, a), bias(1, width, a), y(rows, width, a);
  gain.fill(1.0f);
  DeviceTensor saved(2, rows, a), recomputed(2, rows, a);
  kernels::layer_norm_forward(x_gpu.data(), gain.data(), bias.data(), y.data(), saved.data(),
                              saved.data() + rows, rows, width, context_->stream());
  kernels::layer_norm_statistics(x_gpu.data(), recomputed.data(), recomputed.data() + rows, rows,
                                 width, context_->stream());
  const std::vector<float> stats = saved.to_vector();
  EXPECT_EQ(recomputed.to_vector(), stats);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, squares = 0;
    for (int64_t c = 0; c < width; ++c) sum += x.at(r, c);
    const double mean = sum / width;
    for (int64_t c = 0; c < width; ++c) squares += (x.at(r, c) - mean) * (x.at(r, c) - mean);
    const double rstd = 1.0 / std::sqrt(squares / width + 1e-5);
    EXPECT_NEAR(stats[r], mean, 1e-6) << "row " << r;
    EXPECT_NEAR(stats[rows + r], rstd, 1e-6 * rstd) << "row " << r;
  }
}

TEST_F(GpuLayerTest, DropoutMasksAreBitIdenticalToTheCpu) {
  const uint64_t seed = 1234;
  const int64_t width = 301, offset = 13;
  for (double p : {0.1, 0.5, 0.9}) {
    DropoutLayer cpu(4, width, p, seed, nullptr, offset);
    GpuDropout gpu(4, width, p, seed, *context_, offset);
    ForwardInfo info;
    info.step = 7;
    info.first_sample = 77;
    // On ones the output is the mask times the scale; on random values the
    // product too must agree bit for bit (one multiply on both).
    Tensor ones(50, width);
    ones.fill(1.0f);
    const Tensor x = random_tensor(50, width, 9);
    const std::vector<float> mask = cpu.forward(ones, info).to_vector();
    EXPECT_EQ(gpu.forward(upload(ones), info).to_vector(), mask) << "p " << p;
    EXPECT_EQ(gpu.forward(upload(x), info).to_vector(), cpu.forward(x, info).to_vector());
    EXPECT_EQ(gpu.backward_input(upload(x), upload(x), info).to_vector(),
              cpu.backward_input(x, x, info).to_vector());
    // The mask is not trivial: its kept fraction is near 1 - p.
    int64_t kept = 0;
    for (float m : mask) kept += m != 0.0f;
    EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(mask.size()), 1.0 - p, 0.05);
    // Evaluation passes x through.
    info.training = false;
    EXPECT_EQ(gpu.forward(upload(x), info).to_vector(), x.to_vector());
  }
}

// A CPU and a GPU linear with the same initial weights.
struct LinearPair {
  LinearLayer cpu;
  GpuLinear gpu;
  LinearPair(int64_t in, int64_t out, bool bias, DeviceContext& context,
             bool add_bias_in_forward = true)
      : cpu(2, in, out, bias, nullptr, add_bias_in_forward),
        gpu(2, in, out, bias, context, add_bias_in_forward) {
    init_linear(cpu, 99);
    gpu.weight().copy_from_host(cpu.weight());
    if (bias) gpu.bias().copy_from_host(cpu.bias());
  }
};

TEST_F(GpuLayerTest, LinearSplitBackwardEqualsFused) {
  const int64_t batch = 16, in = 40, out = 24;
  LinearPair fused(in, out, true, *context_), split(in, out, true, *context_);
  const DeviceTensor x = upload(random_tensor(batch, in, 12));
  const DeviceTensor dy = upload(random_tensor(batch, out, 13));
  const DeviceTensor dx_fused = fused.gpu.backward(x, dy, {});
  const DeviceTensor dx_split = split.gpu.backward_input(x, dy, {});
  split.gpu.backward_weight(x, dy);
  EXPECT_EQ(dx_split.to_vector(), dx_fused.to_vector());
  EXPECT_EQ(split.gpu.weight_grad().to_vector(), fused.gpu.weight_grad().to_vector());
  EXPECT_EQ(split.gpu.bias_grad().to_vector(), fused.gpu.bias_grad().to_vector());
  // A second micro-batch accumulates (beta = 1): twice the first.
  split.gpu.backward_weight(x, dy);
  std::vector<float> twice = fused.gpu.weight_grad().to_vector();
  for (float& v : twice) v *= 2.0f;
  expect_close_to_scale(split.gpu.weight_grad().to_vector(), twice, 1e-6, "accumulated dW");
  // zero_grad clears both gradients.
  split.gpu.zero_grad();
  EXPECT_EQ(split.gpu.weight_grad().to_vector(), std::vector<float>(in * out, 0.0f));
  EXPECT_EQ(split.gpu.bias_grad().to_vector(), std::vector<float>(out, 0.0f));
}

TEST_F(GpuLayerTest, RowParallelLinearLeavesTheBiasForAfterTheAllReduce) {
  LinearPair pair(20, 12, true, *context_, /*add_bias_in_forward=*/false);
  const Tensor x = random_tensor(5, 20, 14);
  Tensor y_cpu = pair.cpu.forward(x, {});
  DeviceTensor y_gpu = pair.gpu.forward(upload(x), {});
  expect_close_to_scale(y_gpu.to_vector(), y_cpu.to_vector(), 1e-5, "without bias");
  pair.cpu.add_bias(y_cpu);
  pair.gpu.add_bias(y_gpu);
  expect_close_to_scale(y_gpu.to_vector(), y_cpu.to_vector(), 1e-5, "with bias");
}

TEST_F(GpuLayerTest, LayersCountWhatTheyHoldAndReturn) {
  CachingAllocator& a = context_->allocator();
  const MemoryBytes before = a.current();
  {
    GpuLinear linear(0, 10, 6, true, *context_);
    EXPECT_EQ(a.current()[static_cast<int>(MemoryCategory::Weights)] -
                  before[static_cast<int>(MemoryCategory::Weights)],
              (10 * 6 + 6) * 4);
    EXPECT_EQ(a.current()[static_cast<int>(MemoryCategory::Gradients)] -
                  before[static_cast<int>(MemoryCategory::Gradients)],
              (10 * 6 + 6) * 4);
    const DeviceTensor y = linear.forward(upload(random_tensor(3, 10, 15)), {});
    EXPECT_EQ(y.category(), MemoryCategory::Activations);
    EXPECT_EQ(a.current()[static_cast<int>(MemoryCategory::Activations)], 3 * 6 * 4);
  }
  EXPECT_EQ(a.current(), before);
}

}  // namespace
}  // namespace pipelab::gpu
