// PipeMare's two techniques against their formulas (pipemare_weights.h), on
// core/nn's tensors; the CUDA backend runs the same template on its own.
#include "core/runtime/pipemare_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/nn/optimizer.h"

namespace pipelab {
namespace {

TEST(PipeMareLearningRate, DividesByTheDelayAndAnnealsBackOverTheWarmUp) {
  const double lr = 0.1;
  const int warmup = 8;
  for (int delay : {0, 1, 2, 3, 7})
    for (int k : {0, 1, 4, 7, 8, 9, 100}) {
      const double p = 1.0 - std::min(static_cast<double>(k) / warmup, 1.0);
      const double expected = lr / std::pow(std::max(delay, 1), p);
      EXPECT_DOUBLE_EQ(pipemare_learning_rate(lr, delay, k, warmup), expected)
          << "delay " << delay << " k " << k;
    }
  EXPECT_DOUBLE_EQ(pipemare_learning_rate(lr, 4, 0, warmup), lr / 4);  // first update: lr / delay
  EXPECT_DOUBLE_EQ(pipemare_learning_rate(lr, 4, 4, warmup), lr / 2);  // halfway: lr / sqrt(delay)
  EXPECT_DOUBLE_EQ(pipemare_learning_rate(lr, 4, 8, warmup), lr);      // from K on: lr
  EXPECT_DOUBLE_EQ(pipemare_learning_rate(lr, 0, 0, warmup), lr);      // no delay: no change
}

struct OneParameter {
  Tensor value = Tensor::from_values(2, 2, {1.0f, -2.0f, 0.5f, 4.0f});
  Tensor grad = Tensor(2, 2);
  std::vector<Parameter> list() { return {{&value, &grad}}; }
};

TEST(PipeMareVelocity, IsTheRunningAverageOfWeightChanges) {
  OneParameter parameter;
  const double gamma = 0.75;
  PipeMareVelocity<Parameter> velocity(parameter.list(), gamma);
  EXPECT_EQ(velocity.bytes(), parameter.value.bytes());
  EXPECT_EQ(velocity.velocity()[0].category(), MemoryCategory::OptimizerState);
  std::vector<double> expected(4, 0.0);
  const std::vector<std::vector<float>> steps = {{0.1f, 0.2f, -0.3f, 0.05f},
                                                 {-0.2f, 0.1f, 0.1f, 0.4f}};
  for (const std::vector<float>& step : steps) {
    const std::vector<float> old_weights = parameter.value.to_vector();
    velocity.before_update();
    for (int i = 0; i < 4; ++i) parameter.value.data()[i] += step[i];  // the "optimizer step"
    velocity.after_update();
    const std::vector<float> new_weights = parameter.value.to_vector();
    for (int i = 0; i < 4; ++i) {
      expected[i] = gamma * expected[i] + (1 - gamma) * (double(new_weights[i]) - old_weights[i]);
      EXPECT_NEAR(velocity.velocity()[0].data()[i], expected[i], 1e-6) << "element " << i;
    }
  }
}

TEST(PipeMareVelocity, ExtrapolatesBackByDelayTimesVelocityAndRestores) {
  OneParameter parameter;
  PipeMareVelocity<Parameter> velocity(parameter.list(), 0.5);
  velocity.before_update();
  for (int i = 0; i < 4; ++i) parameter.value.data()[i] += 0.25f * (i + 1);
  velocity.after_update();
  const std::vector<float> weights = parameter.value.to_vector();
  const std::vector<float> v = velocity.velocity()[0].to_vector();
  {
    ExtrapolatedWeights<Parameter> extrapolated(&velocity, 3);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(parameter.value.data()[i], weights[i] - 3 * v[i], 1e-6);
  }
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(parameter.value.data()[i], weights[i], 1e-6);
  {
    ExtrapolatedWeights<Parameter> none(nullptr, 3);  // no correction: untouched
    EXPECT_EQ(parameter.value.to_vector(), weights);
  }
}

}  // namespace
}  // namespace pipelab
