// Every layer's and loss's analytic gradients against central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

#include "core/nn/activations.h"
#include "core/nn/dropout.h"
#include "core/nn/init.h"
#include "core/nn/layer_norm.h"
#include "core/nn/linear.h"
#include "core/nn/loss.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::random_tensor_away_from_zero;
using testing::weighted_sum;

constexpr int64_t kBatch = 3;

// For L = sum(y * w): checks dL/dx from backward_input against differences.
void check_input_gradient(Layer& layer, Tensor x, const ForwardInfo& info, const char* what) {
  const Tensor upstream = random_tensor(x.rows(), layer.out_features(), 99);
  const Tensor dx = layer.backward_input(x, upstream, info);
  expect_gradient_matches(
      x, [&] { return weighted_sum(layer.forward(x, info), upstream); }, dx, what);
}

TEST(GradientCheck, LinearInputWeightAndBias) {
  LinearLayer layer(0, 5, 4, /*bias=*/true, nullptr);
  init_linear(layer, 11);
  Tensor x = random_tensor(kBatch, 5, 1);
  const Tensor upstream = random_tensor(kBatch, 4, 2);
  const ForwardInfo info;
  const auto loss = [&] { return weighted_sum(layer.forward(x, info), upstream); };

  const Tensor dx = layer.backward_input(x, upstream, info);
  expect_gradient_matches(x, loss, dx, "linear dX");
  layer.zero_grad();
  layer.backward_weight(x, upstream);
  const Tensor dw = layer.weight_grad().clone();
  const Tensor db = layer.bias_grad().clone();
  expect_gradient_matches(layer.weight(), loss, dw, "linear dW");
  expect_gradient_matches(layer.bias(), loss, db, "linear db");
}

TEST(GradientCheck, LinearWithoutBiasHasOnlyAWeight) {
  LinearLayer layer(0, 3, 2, /*bias=*/false, nullptr);
  init_linear(layer, 5);
  EXPECT_EQ(layer.params().size(), 1u);
  Tensor x = random_tensor(kBatch, 3, 3);
  const Tensor upstream = random_tensor(kBatch, 2, 4);
  layer.backward_weight(x, upstream);
  const Tensor dw = layer.weight_grad().clone();
  expect_gradient_matches(
      layer.weight(), [&] { return weighted_sum(layer.forward(x, {}), upstream); }, dw,
      "dW without bias");
}

TEST(GradientCheck, LayerNormInputGainAndBias) {
  LayerNormLayer layer(0, 6, nullptr);
  // Non-trivial gain and bias so their roles in dX are exercised.
  layer.gain().copy_from(random_tensor(1, 6, 5, 0.5f, 1.5f));
  layer.bias().copy_from(random_tensor(1, 6, 6));
  Tensor x = random_tensor(kBatch, 6, 7, -2.0f, 2.0f);
  const Tensor upstream = random_tensor(kBatch, 6, 8);
  const ForwardInfo info;
  const auto loss = [&] { return weighted_sum(layer.forward(x, info), upstream); };

  const Tensor dx = layer.backward_input(x, upstream, info);
  expect_gradient_matches(x, loss, dx, "layernorm dX", 1e-2, 3e-3, 2e-2);
  layer.backward_weight(x, upstream);
  const Tensor dgain = layer.gain_grad().clone();
  const Tensor dbias = layer.bias_grad().clone();
  expect_gradient_matches(layer.gain(), loss, dgain, "layernorm dgain");
  expect_gradient_matches(layer.bias(), loss, dbias, "layernorm dbias");
}

TEST(GradientCheck, LayerNormOutputIsNormalised) {
  LayerNormLayer layer(0, 8, nullptr);
  const Tensor x = random_tensor(2, 8, 9, -3.0f, 5.0f);
  const Tensor y = layer.forward(x, {});
  for (int64_t r = 0; r < y.rows(); ++r) {
    double sum = 0, squares = 0;
    for (int64_t c = 0; c < 8; ++c) sum += y.at(r, c);
    for (int64_t c = 0; c < 8; ++c) squares += (y.at(r, c) - sum / 8) * (y.at(r, c) - sum / 8);
    EXPECT_NEAR(sum / 8, 0.0, 1e-6);
    EXPECT_NEAR(squares / 8, 1.0, 1e-3);  // var / (var + eps), var ~ 5
  }
}

TEST(GradientCheck, EachActivation) {
  for (LayerType type : {LayerType::Relu, LayerType::Gelu, LayerType::Tanh, LayerType::Sigmoid}) {
    std::unique_ptr<Layer> layer = make_activation_layer(type, 0, 5, nullptr);
    check_input_gradient(*layer, random_tensor_away_from_zero(kBatch, 5, 10), {},
                         layer_type_name(type));
  }
}

TEST(GradientCheck, ActivationValues) {
  const Tensor x = Tensor::from_values(1, 3, {-1.0f, 0.5f, 2.0f});
  const auto relu = make_activation_layer(LayerType::Relu, 0, 3, nullptr)->forward(x, {});
  EXPECT_EQ(relu.to_vector(), (std::vector<float>{0.0f, 0.5f, 2.0f}));
  const auto sigmoid = make_activation_layer(LayerType::Sigmoid, 0, 3, nullptr)->forward(x, {});
  EXPECT_NEAR(sigmoid.at(0, 0), 1.0 / (1.0 + std::exp(1.0)), 1e-6);
  // GELU's tanh form at x = 2: 0.5 * 2 * (1 + tanh(sqrt(2/pi) * (2 + 0.044715 * 8))).
  const auto gelu = make_activation_layer(LayerType::Gelu, 0, 3, nullptr)->forward(x, {});
  EXPECT_NEAR(gelu.at(0, 2),
              1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (2.0 + 0.044715 * 8.0)), 1e-6);
}

TEST(GradientCheck, DropoutWithAFixedMask) {
  DropoutLayer layer(4, 6, 0.5, 123, nullptr);
  ForwardInfo info;
  info.step = 2;
  info.first_sample = 10;
  check_input_gradient(layer, random_tensor(kBatch, 6, 11), info, "dropout dX");
}

TEST(GradientCheck, SoftmaxCrossEntropy) {
  Tensor logits = random_tensor(4, 5, 12, -3.0f, 3.0f);
  const std::vector<int32_t> labels = {0, 4, 2, 2};
  const double scale = 0.25;
  const LossResult result = softmax_cross_entropy(logits, labels, scale);
  expect_gradient_matches(
      logits, [&] { return scale * softmax_cross_entropy(logits, labels, scale, false).loss_sum; },
      result.grad, "cross-entropy dlogits", 1e-2, 1e-4, 1e-2);
}

TEST(GradientCheck, MeanSquaredError) {
  Tensor output = random_tensor(4, 3, 13);
  const Tensor target = random_tensor(4, 3, 14);
  const double scale = 1.0 / 4;
  const LossResult result = mean_squared_error(output, target, scale);
  expect_gradient_matches(
      output, [&] { return scale * mean_squared_error(output, target, scale, false).loss_sum; },
      result.grad, "mse doutput", 1e-2, 1e-4, 1e-2);
}

}  // namespace
}  // namespace pipelab
