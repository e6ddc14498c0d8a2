#include "core/nn/sequential.h"

#include <gtest/gtest.h>

#include <barrier>
#include <thread>
#include <vector>

#include "core/nn/linear.h"
#include "core/nn/loss.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::bitwise_equal;
using testing::expect_gradient_matches;
using testing::max_abs_difference;
using testing::random_tensor;

constexpr uint64_t kSeed = 2024;

LayerSpec linear(int64_t out) { return {LayerType::Linear, out, true, 0.0}; }
LayerSpec of(LayerType type, double p = 0.0) { return {type, 0, true, p}; }

// Layer 0 (a relu) lets a stage start at layer 1 and return its input gradient.
ModelSpec test_model() {
  ModelSpec model;
  model.input = {6};
  model.layers = {of(LayerType::Relu),
                  linear(8),
                  of(LayerType::Gelu),
                  of(LayerType::Dropout, 0.25),
                  linear(8),
                  of(LayerType::LayerNorm),
                  of(LayerType::Tanh),
                  linear(5),
                  of(LayerType::Sigmoid),
                  linear(3)};
  return model;
}
constexpr int kLayers = 10;

std::vector<int32_t> labels_for(int64_t batch) {
  std::vector<int32_t> labels;
  for (int64_t i = 0; i < batch; ++i) labels.push_back(static_cast<int32_t>((i * 7) % 3));
  return labels;
}

Tensor rows_of(const Tensor& full, int64_t begin, int64_t count) {
  Tensor part(count, full.cols());
  for (int64_t r = 0; r < count; ++r)
    for (int64_t c = 0; c < full.cols(); ++c) part.at(r, c) = full.at(begin + r, c);
  return part;
}

std::vector<Tensor> grads_of(Sequential& stage) {
  std::vector<Tensor> grads;
  for (const Parameter& p : stage.parameters()) grads.push_back(p.grad->clone());
  return grads;
}

struct StepResult {
  double loss_sum = 0;
  Tensor input_grad;  // rows of all micro-batches, in order
  std::vector<Tensor> grads;
};

// One training step's forward and backward over `micro_batches` equal parts of
// (x, labels), with the loss scaled by 1 / batch; BI then BW when split.
StepResult run_step(Sequential& stage, const Tensor& x, const std::vector<int32_t>& labels,
                    int micro_batches, bool split_backward) {
  const int64_t batch = x.rows();
  const int64_t size = batch / micro_batches;
  StepResult result;
  result.input_grad = Tensor(batch, x.cols());
  stage.zero_grad();
  for (int m = 0; m < micro_batches; ++m) {
    ForwardInfo info;
    info.step = 1;
    info.first_sample = m * size;
    StageActivations saved;
    const Tensor y = stage.forward(rows_of(x, m * size, size), info, saved);
    const std::vector<int32_t> part(labels.begin() + m * size, labels.begin() + (m + 1) * size);
    LossResult loss = softmax_cross_entropy(y, part, 1.0 / static_cast<double>(batch));
    result.loss_sum += loss.loss_sum;
    Tensor dx;
    if (split_backward) {
      dx = stage.backward_input(std::move(loss.grad), saved);
      stage.backward_weight(saved);
    } else {
      dx = stage.backward(std::move(loss.grad), saved);
    }
    EXPECT_EQ(saved.bytes(), 0);
    if (dx.empty()) continue;  // a stage starting at layer 0 computes no data gradient
    for (int64_t r = 0; r < size; ++r)
      for (int64_t c = 0; c < x.cols(); ++c) result.input_grad.at(m * size + r, c) = dx.at(r, c);
  }
  result.grads = grads_of(stage);
  return result;
}

TEST(Sequential, StackGradientsMatchFiniteDifferences) {
  const ModelSpec model = test_model();
  Sequential stage(model, 1, kLayers, kSeed, nullptr);
  Tensor x = random_tensor(4, 6, 1);
  const std::vector<int32_t> labels = labels_for(4);
  const StepResult step = run_step(stage, x, labels, 1, false);

  ForwardInfo info;
  info.step = 1;
  const auto loss = [&] {
    const Tensor y = stage.infer(x, info);
    return softmax_cross_entropy(y, labels, 0.25, false).loss_sum / 4.0;
  };
  expect_gradient_matches(x, loss, step.input_grad, "stage input", 1e-2, 1e-3, 2e-2);
  const std::vector<Parameter> params = stage.parameters();
  ASSERT_EQ(params.size(), step.grads.size());
  for (size_t i = 0; i < params.size(); ++i)
    expect_gradient_matches(*params[i].value, loss, step.grads[i], "parameter " + std::to_string(i),
                            1e-2, 1e-3, 2e-2);
}

TEST(Sequential, SplitBackwardEqualsFusedBackward) {
  const ModelSpec model = test_model();
  Sequential fused(model, 1, kLayers, kSeed, nullptr);
  Sequential split(model, 1, kLayers, kSeed, nullptr);
  const Tensor x = random_tensor(6, 6, 2);
  const std::vector<int32_t> labels = labels_for(6);
  const StepResult a = run_step(fused, x, labels, 2, false);
  const StepResult b = run_step(split, x, labels, 2, true);
  EXPECT_TRUE(bitwise_equal(a.input_grad, b.input_grad));
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i)
    EXPECT_TRUE(bitwise_equal(a.grads[i], b.grads[i])) << i;
}

TEST(Sequential, FourMicroBatchesAccumulateToTheFullBatchGradient) {
  const ModelSpec model = test_model();
  Sequential stage(model, 0, kLayers, kSeed, nullptr);
  const Tensor x = random_tensor(8, 6, 3);
  const std::vector<int32_t> labels = labels_for(8);
  const StepResult full = run_step(stage, x, labels, 1, false);
  const StepResult micro = run_step(stage, x, labels, 4, false);
  EXPECT_NEAR(full.loss_sum, micro.loss_sum, 1e-5);
  for (size_t i = 0; i < full.grads.size(); ++i) {
    EXPECT_LT(max_abs_difference(full.grads[i], micro.grads[i]), 1e-6) << "parameter " << i;
    // Not trivially zero: the step did learn something.
    double largest = 0;
    for (float g : full.grads[i].to_vector())
      largest = std::max(largest, static_cast<double>(std::fabs(g)));
    EXPECT_GT(largest, 1e-4) << "parameter " << i;
  }
}

TEST(Sequential, PipelineStagesChainToTheWholeModel) {
  const ModelSpec model = test_model();
  Sequential whole(model, 0, kLayers, kSeed, nullptr);
  Sequential first(model, 0, 5, kSeed, nullptr);
  Sequential second(model, 5, kLayers, kSeed, nullptr);
  EXPECT_EQ(first.output_features(), second.input_features());
  EXPECT_EQ(whole.parameter_count(), first.parameter_count() + second.parameter_count());

  const Tensor x = random_tensor(5, 6, 4);
  const std::vector<int32_t> labels = labels_for(5);
  ForwardInfo info;
  StageActivations whole_saved, first_saved, second_saved;
  const Tensor y_whole = whole.forward(x.clone(), info, whole_saved);
  const Tensor y_first = first.forward(x.clone(), info, first_saved);
  const Tensor y_second = second.forward(y_first.clone(), info, second_saved);
  EXPECT_TRUE(bitwise_equal(y_whole, y_second));

  LossResult loss = softmax_cross_entropy(y_whole, labels, 0.2);
  EXPECT_TRUE(
      whole.backward(loss.grad.clone(), whole_saved).empty());  // begin == 0: no data gradient
  const Tensor boundary_grad = second.backward(std::move(loss.grad), second_saved);
  EXPECT_EQ(boundary_grad.cols(), second.input_features());
  first.backward(boundary_grad.clone(), first_saved);

  std::vector<Tensor> split_grads = grads_of(first);
  for (Tensor& g : grads_of(second)) split_grads.push_back(std::move(g));
  const std::vector<Tensor> whole_grads = grads_of(whole);
  ASSERT_EQ(split_grads.size(), whole_grads.size());
  for (size_t i = 0; i < whole_grads.size(); ++i)
    EXPECT_TRUE(bitwise_equal(split_grads[i], whole_grads[i])) << i;
}

TEST(Sequential, RecomputeRebuildsTheDroppedActivationsExactly) {
  DeviceAllocator allocator;
  const ModelSpec model = test_model();
  Sequential stage(model, 1, kLayers, kSeed, &allocator);
  Sequential reference(model, 1, kLayers, kSeed, nullptr);
  const Tensor x = random_tensor(4, 6, 5);
  ForwardInfo info;
  info.step = 9;
  info.first_sample = 12;

  StageActivations saved, reference_saved;
  const Tensor y = stage.forward(x.clone(&allocator, MemoryCategory::CommBuffers), info, saved);
  reference.forward(x.clone(), info, reference_saved);
  const int64_t kept = saved.bytes();
  const auto activation_bytes = [&] {
    return allocator.current()[static_cast<int>(MemoryCategory::Activations)];
  };
  EXPECT_EQ(activation_bytes(), kept + y.bytes());  // the stage input was retagged as an activation
  EXPECT_EQ(allocator.current()[static_cast<int>(MemoryCategory::CommBuffers)], 0);

  stage.drop_activations(saved);
  EXPECT_EQ(saved.bytes(), x.bytes());  // only the stage input stays
  EXPECT_EQ(activation_bytes(), x.bytes() + y.bytes());
  stage.recompute(saved);
  EXPECT_EQ(saved.bytes(), kept);
  for (size_t k = 0; k < saved.inputs.size(); ++k)
    EXPECT_TRUE(bitwise_equal(saved.inputs[k], reference_saved.inputs[k])) << "layer input " << k;

  const Tensor dy = random_tensor(4, 3, 6);
  const Tensor dx = stage.backward(dy.clone(), saved);
  const Tensor reference_dx = reference.backward(dy.clone(), reference_saved);
  EXPECT_TRUE(bitwise_equal(dx, reference_dx));
  EXPECT_EQ(activation_bytes(), dx.bytes() + y.bytes());  // backward freed everything it kept
}

TEST(Sequential, WeightsAndGradientsAreAccounted) {
  DeviceAllocator allocator;
  Sequential stage(test_model(), 0, kLayers, kSeed, &allocator);
  // Linears 6x8+8, 8x8+8, 8x5+5, 5x3+3 and a layernorm's gain and bias of 8.
  const int64_t params = (48 + 8) + (64 + 8) + (40 + 5) + (15 + 3) + 16;
  EXPECT_EQ(stage.parameter_count(), params);
  const MemoryBytes bytes = allocator.current();
  EXPECT_EQ(bytes[static_cast<int>(MemoryCategory::Weights)], params * 4);
  EXPECT_EQ(bytes[static_cast<int>(MemoryCategory::Gradients)], params * 4);
  EXPECT_EQ(allocator.current_total(), 2 * params * 4);
}

// Sums a tensor over two shards running on two threads.
class TwoShardAllReduce {
 public:
  void operator()(int shard, Tensor& tensor) {
    slots_[shard] = &tensor;
    barrier_.arrive_and_wait();  // both partials posted
    Tensor sum = slots_[0]->clone(nullptr, MemoryCategory::Workspace);
    sum.add(*slots_[1]);         // the same order on both shards: identical results
    barrier_.arrive_and_wait();  // both read before either writes
    tensor.copy_from(sum);
  }

 private:
  std::barrier<> barrier_{2};
  Tensor* slots_[2] = {nullptr, nullptr};
};

TEST(Sequential, TwoTensorParallelShardsReproduceTheFullModel) {
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

  TwoShardAllReduce all_reduce;
  std::vector<std::unique_ptr<Sequential>> shards(2);
  Tensor y_shard[2], dx_shard[2];
  std::vector<std::thread> threads;
  for (int s = 0; s < 2; ++s) {
    threads.emplace_back([&, s] {
      TensorParallelSetup tp;
      tp.degree = 2;
      tp.shard = s;
      tp.roles = roles;
      tp.all_reduce = [&all_reduce, s](Tensor& t, int, bool) { all_reduce(s, t); };
      shards[s] = std::make_unique<Sequential>(model, 1, 7, kSeed, nullptr, tp);
      StageActivations saved;
      y_shard[s] = shards[s]->forward(x.clone(), info, saved);
      dx_shard[s] = shards[s]->backward(dy.clone(), saved);
    });
  }
  for (auto& t : threads) t.join();

  for (int s = 0; s < 2; ++s) {
    EXPECT_LT(max_abs_difference(y_shard[s], y_full), 1e-5) << "shard " << s;
    EXPECT_LT(max_abs_difference(dx_shard[s], dx_full), 1e-5) << "shard " << s;
    // Column-parallel linear (stage layer 0): this shard's 4 of 8 output columns.
    auto& column = static_cast<LinearLayer&>(shards[s]->layer(0));
    auto& column_full = static_cast<LinearLayer&>(full.layer(0));
    EXPECT_EQ(column.weight().cols(), 4);
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        EXPECT_EQ(column.weight().at(r, c), column_full.weight().at(r, s * 4 + c));
        EXPECT_NEAR(column.weight_grad().at(r, c), column_full.weight_grad().at(r, s * 4 + c),
                    1e-5);
      }
    // Row-parallel linear (stage layer 3): its 4 of 8 input rows, the whole bias.
    auto& row = static_cast<LinearLayer&>(shards[s]->layer(3));
    auto& row_full = static_cast<LinearLayer&>(full.layer(3));
    EXPECT_EQ(row.weight().rows(), 4);
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 6; ++c)
        EXPECT_NEAR(row.weight_grad().at(r, c), row_full.weight_grad().at(s * 4 + r, c), 1e-5);
    EXPECT_LT(max_abs_difference(row.bias_grad(), row_full.bias_grad()), 1e-5);
  }
}

TEST(Sequential, RejectsModelsItCannotBuild) {
  const ModelSpec model = test_model();
  EXPECT_THROW(Sequential(model, 3, 3, kSeed, nullptr), std::invalid_argument);
  EXPECT_THROW(Sequential(model, 0, kLayers + 1, kSeed, nullptr), std::invalid_argument);
  ModelSpec no_input = model;
  no_input.input.clear();
  EXPECT_THROW(Sequential(no_input, 0, kLayers, kSeed, nullptr), std::invalid_argument);
  ModelSpec bad_out = model;
  bad_out.layers[1].out = 0;
  EXPECT_THROW(Sequential(bad_out, 0, kLayers, kSeed, nullptr), std::invalid_argument);
  ModelSpec bad_p = model;
  bad_p.layers[3].p = 1.0;
  EXPECT_THROW(Sequential(bad_p, 0, kLayers, kSeed, nullptr), std::invalid_argument);

  TensorParallelSetup tp;
  tp.degree = 2;
  tp.all_reduce = [](Tensor&, int, bool) {};
  EXPECT_THROW(Sequential(model, 0, kLayers, kSeed, nullptr, tp),
               std::invalid_argument);  // no roles
  tp.roles.assign(kLayers, TensorParallelRole::Replicated);
  tp.roles[5] = TensorParallelRole::Sharded;  // a layernorm cannot work on a slice
  EXPECT_THROW(Sequential(model, 0, kLayers, kSeed, nullptr, tp), std::invalid_argument);
  tp.roles.assign(kLayers, TensorParallelRole::Replicated);
  tp.roles[7] = TensorParallelRole::ColumnParallel;  // 5 outputs do not split in 2
  EXPECT_THROW(Sequential(model, 0, kLayers, kSeed, nullptr, tp), std::invalid_argument);
  tp.roles[7] = TensorParallelRole::Replicated;
  tp.roles[1] = TensorParallelRole::ColumnParallel;  // no row-parallel partner: widths do not chain
  EXPECT_THROW(Sequential(model, 0, kLayers, kSeed, nullptr, tp), std::invalid_argument);
  tp.roles[1] = TensorParallelRole::Replicated;
  EXPECT_NO_THROW(Sequential(model, 0, kLayers, kSeed, nullptr, tp));
  tp.all_reduce = nullptr;
  EXPECT_THROW(Sequential(model, 0, kLayers, kSeed, nullptr, tp), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
