// GpuSequential against core/nn's Sequential: same weights, same outputs and
// gradients, the same life cycle (B, BI + BW, recompute), tensor parallelism
// (skipped without a GPU).
#include <gtest/gtest.h>

#include <barrier>
#include <memory>
#include <thread>
#include <vector>

#include "core/nn/linear.h"
#include "core/nn/loss.h"
#include "core/nn/sequential.h"
#include "core/nn/tensor_parallel.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/linear.h"
#include "gpu/layers/loss.h"
#include "gpu/layers/sequential.h"
#include "gpu/comm/same_gpu_comm.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::expect_close_to_scale;
using testing::random_tensor;

constexpr uint64_t kSeed = 5;

LayerSpec linear(int64_t out) { return {LayerType::Linear, out, true, 0.0}; }
LayerSpec of(LayerType type, double p = 0.0) { return {type, 0, true, p}; }

// Every layer type, widths that are not multiples of a warp.
ModelSpec test_model() {
  ModelSpec model;
  model.input = {24};
  model.layers = {linear(40),
                  of(LayerType::LayerNorm),
                  of(LayerType::Gelu),
                  of(LayerType::Dropout, 0.25),
                  linear(36),
                  of(LayerType::Tanh),
                  linear(20),
                  of(LayerType::Sigmoid),
                  linear(18),
                  of(LayerType::Relu),
                  linear(7)};
  return model;
}
constexpr int kLayers = 11;

ForwardInfo training_info() {
  ForwardInfo info;
  info.step = 2;
  info.first_sample = 64;
  return info;
}

class GpuSequentialTest : public ::testing::Test {
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

TEST_F(GpuSequentialTest, InitialWeightsEqualTheCpusBitForBit) {
  const ModelSpec model = test_model();
  Sequential cpu(model, 0, kLayers, kSeed, nullptr);
  GpuSequential gpu(model, 0, kLayers, kSeed, *context_);
  const std::vector<Parameter> cpu_params = cpu.parameters();
  const std::vector<GpuParameter> gpu_params = gpu.parameters();
  ASSERT_EQ(gpu_params.size(), cpu_params.size());
  for (size_t i = 0; i < cpu_params.size(); ++i)
    EXPECT_EQ(gpu_params[i].value->to_vector(), cpu_params[i].value->to_vector()) << i;
  EXPECT_EQ(gpu.parameter_count(), cpu.parameter_count());
}

TEST_F(GpuSequentialTest, TrainingStepMatchesTheCpu) {
  const ModelSpec model = test_model();
  // A later stage, so the stage-input gradient is computed too.
  const int begin = 1;
  Sequential cpu(model, begin, kLayers, kSeed, nullptr);
  GpuSequential gpu(model, begin, kLayers, kSeed, *context_);
  const Tensor x = random_tensor(19, 40, 60);
  std::vector<int32_t> labels(19);
  for (int r = 0; r < 19; ++r) labels[r] = r % 7;
  const double scale = 1.0 / 19.0;

  StageActivations cpu_saved;
  const Tensor cpu_y = cpu.forward(x.clone(), training_info(), cpu_saved);
  LossResult cpu_loss = softmax_cross_entropy(cpu_y, labels, scale);
  const Tensor cpu_dx = cpu.backward(std::move(cpu_loss.grad), cpu_saved);

  GpuStageActivations gpu_saved;
  const DeviceTensor gpu_y = gpu.forward(upload(x), training_info(), gpu_saved);
  expect_close_to_scale(gpu_y.to_vector(), cpu_y.to_vector(), 1e-4, "output");
  GpuLossResult gpu_loss = gpu_softmax_cross_entropy(gpu_y, labels, scale);
  EXPECT_NEAR(gpu_loss.totals().loss_sum, cpu_loss.loss_sum, 1e-4 * cpu_loss.loss_sum);
  const DeviceTensor gpu_dx = gpu.backward(std::move(gpu_loss.grad), gpu_saved);
  expect_close_to_scale(gpu_dx.to_vector(), cpu_dx.to_vector(), 1e-4, "input gradient");
  EXPECT_TRUE(gpu_saved.inputs.empty());

  const std::vector<Parameter> cpu_params = cpu.parameters();
  const std::vector<GpuParameter> gpu_params = gpu.parameters();
  for (size_t i = 0; i < cpu_params.size(); ++i)
    expect_close_to_scale(gpu_params[i].grad->to_vector(), cpu_params[i].grad->to_vector(), 1e-4,
                          "gradient " + std::to_string(i));
}

TEST_F(GpuSequentialTest, SplitBackwardAndRecomputeEqualTheFusedBackward) {
  const ModelSpec model = test_model();
  GpuSequential fused(model, 0, kLayers, kSeed, *context_);
  GpuSequential split(model, 0, kLayers, kSeed, *context_);
  GpuSequential recomputed(model, 0, kLayers, kSeed, *context_);
  const Tensor x = random_tensor(12, 24, 61);
  const Tensor dy = random_tensor(12, 7, 62);

  GpuStageActivations a, b, c;
  const DeviceTensor y = fused.forward(upload(x), training_info(), a);
  EXPECT_TRUE(fused.backward(upload(dy), a).empty());  // begin == 0: no input gradient

  split.forward(upload(x), training_info(), b);
  EXPECT_TRUE(split.backward_input(upload(dy), b).empty());
  EXPECT_GT(b.bytes(), 0);  // what BW still needs
  split.backward_weight(b);
  EXPECT_EQ(b.bytes(), 0);

  const DeviceTensor y_again = recomputed.forward(upload(x), training_info(), c);
  recomputed.drop_activations(c);
  recomputed.recompute(c);
  recomputed.backward(upload(dy), c);
  EXPECT_EQ(y_again.to_vector(), y.to_vector());

  const std::vector<GpuParameter> expected = fused.parameters();
  const std::vector<GpuParameter> from_split = split.parameters();
  const std::vector<GpuParameter> from_recompute = recomputed.parameters();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(from_split[i].grad->to_vector(), expected[i].grad->to_vector()) << i;
    EXPECT_EQ(from_recompute[i].grad->to_vector(), expected[i].grad->to_vector()) << i;
  }
}

TEST_F(GpuSequentialTest, MemoryIsCountedAndReturnsToTheWeightsAfterBackward) {
  const ModelSpec model = test_model();
  CachingAllocator& a = context_->allocator();
  const MemoryBytes baseline = a.current();
  GpuSequential gpu(model, 0, kLayers, kSeed, *context_);
  const int64_t params = gpu.parameter_count();
  const MemoryBytes built = a.current();
  auto delta = [&](const MemoryBytes& now, MemoryCategory category) {
    return now[static_cast<int>(category)] - baseline[static_cast<int>(category)];
  };
  EXPECT_EQ(delta(built, MemoryCategory::Weights), params * 4);
  EXPECT_EQ(delta(built, MemoryCategory::Gradients), params * 4);
  {
    GpuStageActivations saved;
    const DeviceTensor y = gpu.forward(upload(random_tensor(8, 24, 63)), training_info(), saved);
    EXPECT_EQ(delta(a.current(), MemoryCategory::Activations), saved.bytes() + y.bytes());
    gpu.backward(upload(random_tensor(8, 7, 64)), saved);
  }
  EXPECT_EQ(a.current(), built);
}

TEST_F(GpuSequentialTest, RejectsModelsItCannotBuildLikeTheCpu) {
  const ModelSpec model = test_model();
  EXPECT_THROW(GpuSequential(model, 3, 3, kSeed, *context_), std::invalid_argument);
  EXPECT_THROW(GpuSequential(model, 0, kLayers + 1, kSeed, *context_), std::invalid_argument);
  ModelSpec bad_p = model;
  bad_p.layers[3].p = 1.0;
  EXPECT_THROW(GpuSequential(bad_p, 0, kLayers, kSeed, *context_), std::invalid_argument);
  GpuTensorParallelSetup tp;
  tp.degree = 2;
  tp.roles.assign(kLayers, TensorParallelRole::Replicated);
  EXPECT_THROW(GpuSequential(model, 0, kLayers, kSeed, *context_, tp), std::invalid_argument);
}

// Sums a device tensor over two shards driven by two threads, with the
// same-GPU fallback.
class TwoShardAllReduce {
 public:
  void operator()(int shard, DeviceTensor& tensor) {
    slots_[shard] = &tensor;
    barrier_.arrive_and_wait();  // both partials queued
    if (shard == 0) all_reduce_sum_local(slots_);
    barrier_.arrive_and_wait();  // the sum is queued before either shard goes on
  }

 private:
  std::barrier<> barrier_{2};
  DeviceTensor* slots_[2] = {nullptr, nullptr};
};

TEST_F(GpuSequentialTest, TwoTensorParallelShardsOnOneGpuReproduceTheCpuModel) {
  ModelSpec model;
  model.input = {6};
  model.layers = {of(LayerType::Relu),
                  linear(8),
                  of(LayerType::Gelu),
                  of(LayerType::Dropout, 0.5),
                  linear(6),
                  of(LayerType::LayerNorm),
                  linear(4)};
  using R = TensorParallelRole;
  const std::vector<R> roles = {R::Replicated,  R::ColumnParallel, R::Sharded,   R::Sharded,
                                R::RowParallel, R::Replicated,     R::Replicated};
  const Tensor x = random_tensor(4, 6, 7);
  const Tensor dy = random_tensor(4, 4, 8);
  ForwardInfo info;
  info.step = 3;

  Sequential full(model, 1, 7, kSeed, nullptr);
  StageActivations full_saved;
  const Tensor y_full = full.forward(x.clone(), info, full_saved);
  const Tensor dx_full = full.backward(dy.clone(), full_saved);

  // Two virtual devices on GPU 0, one thread each.
  DeviceContext second(0);
  DeviceContext* contexts[2] = {context_.get(), &second};
  TwoShardAllReduce all_reduce;
  std::vector<std::unique_ptr<GpuSequential>> shards(2);
  std::vector<float> y_shard[2], dx_shard[2];
  std::vector<std::thread> threads;
  for (int s = 0; s < 2; ++s) {
    threads.emplace_back([&, s] {
      GpuTensorParallelSetup tp;
      tp.degree = 2;
      tp.shard = s;
      tp.roles = roles;
      tp.all_reduce = [&all_reduce, s](DeviceTensor& t, int, bool) { all_reduce(s, t); };
      DeviceContext& context = *contexts[s];
      shards[s] = std::make_unique<GpuSequential>(model, 1, 7, kSeed, context, tp);
      GpuStageActivations saved;
      const DeviceTensor x_gpu = DeviceTensor::from_host(x, &context.allocator());
      const DeviceTensor dy_gpu = DeviceTensor::from_host(dy, &context.allocator());
      y_shard[s] = shards[s]->forward(x_gpu.clone(), info, saved).to_vector();
      dx_shard[s] = shards[s]->backward(dy_gpu.clone(), saved).to_vector();
    });
  }
  for (auto& t : threads) t.join();

  for (int s = 0; s < 2; ++s) {
    expect_close_to_scale(y_shard[s], y_full.to_vector(), 1e-4,
                          "output of shard " + std::to_string(s));
    expect_close_to_scale(dx_shard[s], dx_full.to_vector(), 1e-4,
                          "input gradient of shard " + std::to_string(s));
    // Column-parallel linear (stage layer 0): this shard's 4 of 8 output columns.
    auto& column = static_cast<GpuLinear&>(shards[s]->layer(0));
    auto& column_full = static_cast<LinearLayer&>(full.layer(0));
    ASSERT_EQ(column.weight().cols(), 4);
    const Tensor expected_grad = copy_slice(column_full.weight_grad(), {0, 6, s * 4, 4});
    expect_close_to_scale(column.weight_grad().to_vector(), expected_grad.to_vector(), 1e-4,
                          "column-parallel dW of shard " + std::to_string(s));
    // Row-parallel linear (stage layer 3): its 4 of 8 input rows, the whole bias.
    auto& row = static_cast<GpuLinear&>(shards[s]->layer(3));
    auto& row_full = static_cast<LinearLayer&>(full.layer(3));
    const Tensor expected_rows = copy_slice(row_full.weight_grad(), {s * 4, 4, 0, 6});
    expect_close_to_scale(row.weight_grad().to_vector(), expected_rows.to_vector(), 1e-4,
                          "row-parallel dW of shard " + std::to_string(s));
    expect_close_to_scale(row.bias_grad().to_vector(), row_full.bias_grad().to_vector(), 1e-4,
                          "row-parallel db of shard " + std::to_string(s));
  }
}

}  // namespace
}  // namespace pipelab::gpu
