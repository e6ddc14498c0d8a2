// Shapes, parameters, FLOPs and activation bytes of the image layers, and the
// messages for image models that do not work.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/model/model_spec.h"
#include "model_test_support.h"

namespace pipelab {
namespace {

LayerSpec conv(int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = 0, bool bias = true) {
  LayerSpec spec;
  spec.type = LayerType::Conv2d;
  spec.out = out;
  spec.kernel = kernel;
  spec.stride = stride;
  spec.padding = padding;
  spec.bias = bias;
  return spec;
}

LayerSpec of(LayerType type) {
  LayerSpec spec;
  spec.type = type;
  return spec;
}

LayerSpec pool(LayerType type, int64_t kernel, int64_t stride) {
  LayerSpec spec = of(type);
  spec.kernel = kernel;
  spec.stride = stride;
  return spec;
}

LayerSpec residual(int64_t out, int64_t stride) {
  LayerSpec spec = of(LayerType::ResidualBlock);
  spec.out = out;
  spec.stride = stride;
  return spec;
}

LayerSpec linear(int64_t out) {
  LayerSpec spec;
  spec.out = out;
  return spec;
}

ModelSpec image_model(std::vector<LayerSpec> layers, std::vector<int64_t> input = {1, 28, 28}) {
  ModelSpec model;
  model.input = std::move(input);
  model.layers = std::move(layers);
  return model;
}

using testing::expect_error_mentions;

TEST(ImageLayers, ConvolutionShapesAndCostsFollowTheFormulas) {
  const auto infos = describe_layers(image_model({conv(8, 5, 2, 2)}, {3, 32, 30}));
  const LayerInfo& c = infos[0];
  EXPECT_EQ(c.image_in, (ImageShape{3, 32, 30}));
  EXPECT_EQ(c.image_out, (ImageShape{8, 16, 15}));  // floor((32 + 4 - 5) / 2) + 1 = 16
  EXPECT_EQ(c.out_features, 8 * 16 * 15);
  EXPECT_EQ(c.params, 8 * 3 * 25 + 8);
  const double macs = 8.0 * 16 * 15 * 3 * 25;
  EXPECT_DOUBLE_EQ(c.forward_flops, 2 * macs + 8 * 16 * 15);
  EXPECT_DOUBLE_EQ(c.backward_input_flops, 2 * macs);
  EXPECT_EQ(c.activation_bytes, 3 * 32 * 30 * 4);
}

TEST(ImageLayers, PoolsFlattenAndGlobalPoolChangeTheShape) {
  const auto infos = describe_layers(image_model(
      {conv(4, 3, 1, 1), pool(LayerType::MaxPool, 2, 2), pool(LayerType::AvgPool, 3, 1), of(LayerType::Relu),
       of(LayerType::BatchNorm), of(LayerType::GlobalAvgPool), of(LayerType::BatchNorm), linear(10)}));
  EXPECT_EQ(infos[1].image_out, (ImageShape{4, 14, 14}));
  EXPECT_EQ(infos[2].image_out, (ImageShape{4, 12, 12}));
  EXPECT_EQ(infos[3].image_out, (ImageShape{4, 12, 12}));  // elementwise layers keep the image
  EXPECT_EQ(infos[4].params, 2 * 4);                       // per channel
  EXPECT_FALSE(infos[5].image_out.valid());
  EXPECT_EQ(infos[5].out_features, 4);
  EXPECT_EQ(infos[6].params, 2 * 4);  // batchnorm over flat features: per feature
  EXPECT_EQ(infos[7].params, 4 * 10 + 10);

  const auto flat = describe_layers(image_model({conv(2, 3), of(LayerType::Flatten), linear(3)}));
  EXPECT_FALSE(flat[1].image_out.valid());
  EXPECT_EQ(flat[1].out_features, 2 * 26 * 26);
  EXPECT_EQ(output_features(image_model({conv(2, 3), of(LayerType::Flatten), linear(3)})), 3);
}

TEST(ImageLayers, ResidualBlockCountsItsConvolutionsNormsAndProjection) {
  const auto same = describe_layers(image_model({conv(16, 3, 1, 1), residual(16, 1)}));
  EXPECT_EQ(same[1].image_out, (ImageShape{16, 28, 28}));
  EXPECT_EQ(same[1].params, 2 * (16 * 16 * 9) + 2 * (2 * 16));
  const auto down = describe_layers(image_model({conv(16, 3, 1, 1), residual(32, 2)}));
  EXPECT_EQ(down[1].image_out, (ImageShape{32, 14, 14}));
  EXPECT_EQ(down[1].params, 32 * 16 * 9 + 32 * 32 * 9 + 32 * 16 + 3 * (2 * 32));
  // Kept: the input and five tensors of the output's size.
  EXPECT_EQ(down[1].activation_bytes, (16 * 28 * 28 + 5 * 32 * 14 * 14) * 4);
}

TEST(ImageLayers, MistakesNameTheLayerAndTheFix) {
  expect_error_mentions(image_model({conv(4, 3)}, {784}), "model.layers[0]: conv2d works on images");
  expect_error_mentions(image_model({linear(10), conv(4, 3)}), "keep image layers before");
  expect_error_mentions(image_model({conv(4, 7)}, {1, 5, 5}), "does not fit its 1 x 5 x 5 input");
  expect_error_mentions(image_model({conv(4, 3, 1, 3)}), "padding = 3 must be in [0, kernel)");
  expect_error_mentions(image_model({conv(4, 3, 0)}), "stride >= 1");
  expect_error_mentions(image_model({conv(0, 3)}), "out (output channels) >= 1");
  expect_error_mentions(image_model({pool(LayerType::MaxPool, 2, 2), pool(LayerType::MaxPool, 2, 2),
                                     pool(LayerType::MaxPool, 2, 2), pool(LayerType::MaxPool, 2, 2),
                                     pool(LayerType::MaxPool, 2, 2)}),
                        "model.layers[4]: maxpool's 2 x 2 window");
  LayerSpec bad_norm = of(LayerType::BatchNorm);
  bad_norm.momentum = 0;
  expect_error_mentions(image_model({bad_norm}), "momentum must be in (0, 1]");
  ModelSpec sequence;
  sequence.input = {16};
  LayerSpec embedding = of(LayerType::Embedding);
  embedding.vocab = 10;
  embedding.dim = 8;
  sequence.layers = {embedding, of(LayerType::BatchNorm)};
  expect_error_mentions(sequence, "not on token sequences");
}

}  // namespace
}  // namespace pipelab
