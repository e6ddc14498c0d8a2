#include "core/model/model_spec.h"
#include "model_test_support.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

LayerSpec linear(int64_t out, bool bias = true) { return LayerSpec{LayerType::Linear, out, bias, 0.0}; }
LayerSpec layer(LayerType type, double p = 0.0) { return LayerSpec{type, 0, true, p}; }

using testing::expect_error_mentions;

TEST(ModelSpecNames, EveryLayerAndLossNameParsesBack) {
  for (const std::string& name : layer_type_names()) {
    const auto type = parse_layer_type(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_EQ(layer_type_name(*type), name);
  }
  EXPECT_EQ(layer_type_names().size(), 17u);
  for (const std::string& name : loss_type_names()) {
    const auto loss = parse_loss_type(name);
    ASSERT_TRUE(loss.has_value()) << name;
    EXPECT_EQ(loss_type_name(*loss), name);
  }
  EXPECT_FALSE(parse_layer_type("conv").has_value());
  EXPECT_FALSE(parse_layer_type("Linear").has_value());
  EXPECT_FALSE(parse_loss_type("nll").has_value());
}

TEST(ModelSpecShapes, WidthsFollowTheLinearLayers) {
  ModelSpec model;
  model.input = {1, 28, 28};
  model.layers = {linear(100), layer(LayerType::Relu), linear(10), layer(LayerType::Sigmoid)};
  EXPECT_EQ(input_features(model), 784);
  EXPECT_EQ(output_features(model), 10);
  EXPECT_EQ(count_linear_layers(model), 2);

  ModelSpec no_linear;
  no_linear.input = {5};
  no_linear.layers = {layer(LayerType::Tanh)};
  EXPECT_EQ(output_features(no_linear), 5);
  EXPECT_EQ(count_linear_layers(no_linear), 0);
}

TEST(ModelSpecDescribe, NumbersMatchAHandCount) {
  // 3 -> linear(4) -> relu -> layernorm -> dropout -> linear(2, no bias) -> gelu -> tanh -> sigmoid
  ModelSpec model;
  model.input = {3};
  model.layers = {linear(4),
                  layer(LayerType::Relu),
                  layer(LayerType::LayerNorm),
                  layer(LayerType::Dropout, 0.5),
                  linear(2, false),
                  layer(LayerType::Gelu),
                  layer(LayerType::Tanh),
                  layer(LayerType::Sigmoid)};
  const auto info = describe_layers(model);
  ASSERT_EQ(info.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(info[i].index, i);

  // linear 3 -> 4 with bias: W is 4x3, b has 4 entries.
  EXPECT_EQ(info[0].in_features, 3);
  EXPECT_EQ(info[0].out_features, 4);
  EXPECT_EQ(info[0].params, 3 * 4 + 4);
  EXPECT_DOUBLE_EQ(info[0].forward_flops, 2 * 3 * 4 + 4);          // multiply-adds, plus the bias add
  EXPECT_DOUBLE_EQ(info[0].backward_input_flops, 2 * 3 * 4);       // g W
  EXPECT_DOUBLE_EQ(info[0].backward_weight_flops, 2 * 3 * 4 + 4);  // g^T x, plus the bias gradient
  EXPECT_EQ(info[0].activation_bytes, 3 * 4);                      // its float32 input
  EXPECT_EQ(info[0].output_bytes, 4 * 4);

  // relu on 4: 1 FLOP per element each way, keeps 4 floats.
  EXPECT_EQ(info[1].params, 0);
  EXPECT_DOUBLE_EQ(info[1].forward_flops, 4);
  EXPECT_DOUBLE_EQ(info[1].backward_input_flops, 4);
  EXPECT_DOUBLE_EQ(info[1].backward_weight_flops, 0);
  EXPECT_EQ(info[1].activation_bytes, 4 * 4);

  // layernorm on 4: gamma and beta; 8/10/3 FLOPs per element; its input only
  // (the backward recomputes the mean and rstd).
  EXPECT_EQ(info[2].params, 2 * 4);
  EXPECT_DOUBLE_EQ(info[2].forward_flops, 8 * 4);
  EXPECT_DOUBLE_EQ(info[2].backward_input_flops, 10 * 4);
  EXPECT_DOUBLE_EQ(info[2].backward_weight_flops, 3 * 4);
  EXPECT_EQ(info[2].activation_bytes, 4 * 4);

  // dropout on 4: a one-byte mask per element.
  EXPECT_EQ(info[3].params, 0);
  EXPECT_DOUBLE_EQ(info[3].forward_flops, 2 * 4);
  EXPECT_DOUBLE_EQ(info[3].backward_input_flops, 1 * 4);
  EXPECT_EQ(info[3].activation_bytes, 4);

  // linear 4 -> 2 without bias.
  EXPECT_EQ(info[4].in_features, 4);
  EXPECT_EQ(info[4].out_features, 2);
  EXPECT_EQ(info[4].params, 4 * 2);
  EXPECT_DOUBLE_EQ(info[4].forward_flops, 2 * 4 * 2);
  EXPECT_DOUBLE_EQ(info[4].backward_weight_flops, 2 * 4 * 2);
  EXPECT_EQ(info[4].output_bytes, 2 * 4);

  // gelu, tanh, sigmoid on 2.
  EXPECT_DOUBLE_EQ(info[5].forward_flops, 8 * 2);
  EXPECT_DOUBLE_EQ(info[5].backward_input_flops, 12 * 2);
  EXPECT_DOUBLE_EQ(info[6].forward_flops, 4 * 2);
  EXPECT_DOUBLE_EQ(info[6].backward_input_flops, 2 * 2);
  EXPECT_DOUBLE_EQ(info[7].forward_flops, 4 * 2);
  EXPECT_DOUBLE_EQ(info[7].backward_input_flops, 3 * 2);
  for (int i = 5; i < 8; ++i) {
    EXPECT_EQ(info[i].in_features, 2);
    EXPECT_EQ(info[i].out_features, 2);
    EXPECT_EQ(info[i].activation_bytes, 2 * 4);
    EXPECT_EQ(info[i].output_bytes, 2 * 4);
  }
}

TEST(ModelSpecDescribe, RejectsInconsistentSpecsNamingTheLayer) {
  ModelSpec model;
  model.input = {4};
  model.layers = {linear(8), layer(LayerType::Relu), linear(0)};
  expect_error_mentions(model, "model.layers[2]: linear needs out >= 1");

  model.layers = {linear(8), layer(LayerType::Dropout, 1.0)};
  expect_error_mentions(model, "model.layers[1]: dropout needs p in [0, 1)");
  model.layers = {layer(LayerType::Dropout, -0.1)};
  expect_error_mentions(model, "model.layers[0]: dropout");

  model.layers = {};
  expect_error_mentions(model, "model.layers is empty");

  model.layers = {linear(2)};
  model.input = {};
  expect_error_mentions(model, "model.input is empty");
  model.input = {4, 0};
  expect_error_mentions(model, "model.input[1]");
}

}  // namespace
}  // namespace pipelab
