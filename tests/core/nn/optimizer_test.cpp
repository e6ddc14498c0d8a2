// Two optimizer steps on p = [1, -2] with gradients g1 = [0.5, -0.25] then
// g2 = [0.25, 1] and lr = 0.1, against values worked out by hand (shown) and
// matching torch.optim 1.13 with the same settings.
#include "core/nn/optimizer.h"

#include <gtest/gtest.h>

#include <vector>

namespace pipelab {
namespace {

struct TwoSteps {
  std::vector<float> after_first;
  std::vector<float> after_second;
};

TwoSteps run_two_steps(const OptimizerSettings& settings, DeviceAllocator* allocator = nullptr) {
  Tensor value = Tensor::from_values(1, 2, {1.0f, -2.0f}, allocator, MemoryCategory::Weights);
  Tensor grad(1, 2, allocator, MemoryCategory::Gradients);
  std::unique_ptr<Optimizer> optimizer = make_optimizer(settings, {{&value, &grad}});
  TwoSteps result;
  grad = Tensor::from_values(1, 2, {0.5f, -0.25f}, allocator, MemoryCategory::Gradients);
  optimizer->step();
  result.after_first = value.to_vector();
  grad = Tensor::from_values(1, 2, {0.25f, 1.0f}, allocator, MemoryCategory::Gradients);
  optimizer->step();
  result.after_second = value.to_vector();
  EXPECT_EQ(optimizer->steps_taken(), 2);
  return result;
}

void expect_values(const std::vector<float>& actual, const std::vector<double>& expected,
                   const char* what) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 2e-6) << what << " " << i;
}

TEST(Optimizer, SgdWithMomentum) {
  OptimizerSettings settings;
  settings.lr = 0.1;
  settings.momentum = 0.9;
  const TwoSteps steps = run_two_steps(settings);
  // v1 = g1 = [0.5, -0.25]; p = [1 - 0.05, -2 + 0.025]
  expect_values(steps.after_first, {0.95, -1.975}, "first");
  // v2 = 0.9 v1 + g2 = [0.7, 0.775]; p -= 0.1 v2
  expect_values(steps.after_second, {0.88, -2.0525}, "second");
}

TEST(Optimizer, SgdWithoutMomentumKeepsNoState) {
  DeviceAllocator allocator;
  OptimizerSettings settings;
  settings.lr = 0.1;
  const TwoSteps steps = run_two_steps(settings, &allocator);
  expect_values(steps.after_second, {1 - 0.05 - 0.025, -2 + 0.025 - 0.1}, "plain sgd");
  EXPECT_EQ(allocator.peak_by_category()[static_cast<int>(MemoryCategory::OptimizerState)], 0);
}

TEST(Optimizer, SgdWithWeightDecay) {
  OptimizerSettings settings;
  settings.lr = 0.1;
  settings.momentum = 0.9;
  settings.weight_decay = 0.1;
  const TwoSteps steps = run_two_steps(settings);
  // g1' = g1 + 0.1 p = [0.6, -0.45] = v1; p = [0.94, -1.955]
  expect_values(steps.after_first, {0.94, -1.955}, "first");
  // g2' = [0.25 + 0.094, 1 - 0.1955]; v2 = 0.9 v1 + g2' = [0.884, 0.3995]
  expect_values(steps.after_second, {0.8516, -1.99495}, "second");
}

TEST(Optimizer, Adam) {
  OptimizerSettings settings;
  settings.type = OptimizerType::Adam;
  settings.lr = 0.1;
  const TwoSteps steps = run_two_steps(settings);
  // Step 1: m_hat = g, v_hat = g^2, so p -= lr * g / (|g| + eps): a step of lr.
  expect_values(steps.after_first, {0.9, -1.9}, "first");
  // Element 0 of step 2: m = 0.9 * 0.05 + 0.1 * 0.25 = 0.07,
  // v = 0.999 * 0.00025 + 0.001 * 0.0625 = 0.00031225,
  // p = 0.9 - 0.1 * (0.07 / 0.19) / sqrt(0.00031225 / 0.001999) = 0.806782.
  expect_values(steps.after_second, {0.806782067, -1.95595038}, "second");
}

TEST(Optimizer, AdamAddsWeightDecayToTheGradient) {
  OptimizerSettings settings;
  settings.type = OptimizerType::Adam;
  settings.lr = 0.1;
  settings.weight_decay = 0.1;
  const TwoSteps steps = run_two_steps(settings);
  // Step 1 still moves each weight by lr (only the gradient's sign matters).
  expect_values(steps.after_first, {0.9, -1.9}, "first");
  expect_values(steps.after_second, {0.805009782, -1.9325285}, "second");
}

TEST(Optimizer, AdamWDecaysTheWeightsDirectly) {
  OptimizerSettings settings;
  settings.type = OptimizerType::AdamW;
  settings.lr = 0.1;
  settings.weight_decay = 0.1;
  const TwoSteps steps = run_two_steps(settings);
  // p *= 1 - 0.01, then the Adam step of lr: [0.99 - 0.1, -1.98 + 0.1]
  expect_values(steps.after_first, {0.89, -1.88}, "first");
  expect_values(steps.after_second, {0.78788209, -1.91715038}, "second");
}

TEST(Optimizer, StateIsCountedAsOptimizerState) {
  DeviceAllocator allocator;
  Tensor value(3, 4, &allocator, MemoryCategory::Weights);
  Tensor grad(3, 4, &allocator, MemoryCategory::Gradients);
  OptimizerSettings settings;
  settings.type = OptimizerType::AdamW;
  {
    std::unique_ptr<Optimizer> adam = make_optimizer(settings, {{&value, &grad}});
    EXPECT_EQ(adam->state_bytes(), 2 * 12 * 4);
    EXPECT_EQ(allocator.current()[static_cast<int>(MemoryCategory::OptimizerState)], 2 * 12 * 4);
  }
  EXPECT_EQ(allocator.current()[static_cast<int>(MemoryCategory::OptimizerState)], 0);
  settings.type = OptimizerType::Sgd;
  settings.momentum = 0.5;
  std::unique_ptr<Optimizer> sgd = make_optimizer(settings, {{&value, &grad}});
  EXPECT_EQ(allocator.current()[static_cast<int>(MemoryCategory::OptimizerState)], 12 * 4);
}

TEST(Optimizer, RejectsSettingsOutOfRangeAndParsesNames) {
  OptimizerSettings bad;
  bad.lr = -1;
  EXPECT_THROW(make_optimizer(bad, {}), std::invalid_argument);
  bad = {};
  bad.beta2 = 1.0;
  EXPECT_THROW(make_optimizer(bad, {}), std::invalid_argument);
  EXPECT_EQ(parse_optimizer_type("adamw"), OptimizerType::AdamW);
  EXPECT_EQ(parse_optimizer_type("sgd"), OptimizerType::Sgd);
  EXPECT_FALSE(parse_optimizer_type("lamb").has_value());
}

}  // namespace
}  // namespace pipelab
