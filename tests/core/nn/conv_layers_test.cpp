// The image layers (conv2d, pools, flatten, batchnorm, residual block): their
// forward against direct loops, and every analytic gradient against central
// differences.
#include <gtest/gtest.h>

#include <memory>

#include "core/nn/batch_norm.h"
#include "core/nn/conv2d.h"
#include "core/nn/pooling.h"
#include "core/nn/residual_block.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

// y[n, o, oh, ow] by the definition of a convolution, in double.
double direct_conv(const Tensor& x, const Tensor& w, const Tensor* b, const ConvGeometry& g, int64_t n, int64_t o,
                   int64_t oh, int64_t ow) {
  const int64_t k = g.window.kernel;
  double sum = b ? b->data()[o] : 0.0;
  for (int64_t c = 0; c < g.in.channels; ++c)
    for (int64_t ki = 0; ki < k; ++ki)
      for (int64_t kj = 0; kj < k; ++kj) {
        const int64_t ih = oh * g.window.stride - g.window.padding + ki;
        const int64_t iw = ow * g.window.stride - g.window.padding + kj;
        if (ih < 0 || iw < 0 || ih >= g.in.height || iw >= g.in.width) continue;
        sum += static_cast<double>(w.at(o, (c * k + ki) * k + kj)) * x.at(n, (c * g.in.height + ih) * g.in.width + iw);
      }
  return sum;
}

TEST(Conv2d, ForwardEqualsTheDefinitionWithStrideAndPadding) {
  const ConvGeometry g = conv_geometry({2, 7, 6}, 3, Window{3, 2, 1});
  ASSERT_EQ(g.out, (ImageShape{3, 4, 3}));
  Conv2dLayer conv(0, g, /*bias=*/true, nullptr);
  conv.init(7);
  const Tensor x = random_tensor(2, g.in.size(), 1);
  const Tensor y = conv.forward(x, ForwardInfo{});
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t o = 0; o < 3; ++o)
      for (int64_t oh = 0; oh < 4; ++oh)
        for (int64_t ow = 0; ow < 3; ++ow)
          EXPECT_NEAR(y.at(n, (o * 4 + oh) * 3 + ow), direct_conv(x, conv.weight(), &conv.bias(), g, n, o, oh, ow),
                      1e-5);
}

TEST(Conv2d, InitialWeightsDependOnSeedAndLayerOnly) {
  const ConvGeometry g = conv_geometry({1, 5, 5}, 4, Window{3, 1, 0});
  Conv2dLayer a(3, g, true, nullptr), b(3, g, true, nullptr), c(4, g, true, nullptr);
  a.init(1);
  b.init(1);
  c.init(1);
  EXPECT_TRUE(testing::bitwise_equal(a.weight(), b.weight()));
  EXPECT_FALSE(testing::bitwise_equal(a.weight(), c.weight()));
  const double bound = std::sqrt(6.0 / 9.0);
  for (float v : a.weight().to_vector()) EXPECT_LE(std::fabs(v), bound);
}

TEST(Conv2d, GradientsMatchFiniteDifferences) {
  for (const Window window : {Window{3, 1, 1}, Window{3, 2, 0}, Window{2, 2, 1}, Window{1, 1, 0}}) {
    SCOPED_TRACE("kernel " + std::to_string(window.kernel) + " stride " + std::to_string(window.stride) +
                 " padding " + std::to_string(window.padding));
    const ConvGeometry g = conv_geometry({2, 5, 4}, 3, window);
    Conv2dLayer conv(0, g, true, nullptr);
    conv.init(3);
    Tensor x = random_tensor(2, g.in.size(), 2);
    const Tensor upstream = random_tensor(2, g.out.size(), 4);
    const ForwardInfo info;
    const auto loss = [&] { return weighted_sum(conv.forward(x, info), upstream); };
    const Tensor dx = conv.backward_input(x, upstream, info);
    expect_gradient_matches(x, loss, dx, "conv dX");
    conv.zero_grad();
    conv.backward_weight(x, upstream);
    const Tensor dw = conv.weight_grad().clone();
    const Tensor db = conv.bias_grad().clone();
    expect_gradient_matches(conv.weight(), loss, dw, "conv dW");
    expect_gradient_matches(conv.bias(), loss, db, "conv db");
  }
}

// For L = sum(y * w): dL/dx from backward_input against differences.
void check_input_gradient(Layer& layer, Tensor x, const char* what) {
  const ForwardInfo info;
  const Tensor upstream = random_tensor(x.rows(), layer.out_features(), 99);
  const Tensor dx = layer.backward_input(x, upstream, info);
  expect_gradient_matches(x, [&] { return weighted_sum(layer.forward(x, info), upstream); }, dx, what,
                          /*step=*/1e-3);
}

TEST(Pooling, MaxPoolPicksTheLargestAndItsGradientGoesThere) {
  const ImageShape in{1, 4, 4};
  WindowPoolLayer pool(LayerType::MaxPool, 0, in, Window{2, 2, 0}, nullptr);
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[i] = static_cast<float>((i * 7) % 16);
  const Tensor x = Tensor::from_values(1, 16, values);
  const Tensor y = pool.forward(x, ForwardInfo{});
  ASSERT_EQ(y.cols(), 4);
  // Window (0, 0) holds indices 0, 1, 4, 5: values 0, 7, 12, 3.
  EXPECT_EQ(y.at(0, 0), 12.0f);
  check_input_gradient(pool, random_tensor(2, 16, 5), "maxpool dX");
  WindowPoolLayer padded(LayerType::MaxPool, 0, {2, 5, 5}, Window{3, 2, 1}, nullptr);
  check_input_gradient(padded, random_tensor(2, 50, 6), "padded maxpool dX");
}

TEST(Pooling, AvgPoolCountsPaddingAsZeros) {
  WindowPoolLayer pool(LayerType::AvgPool, 0, {1, 2, 2}, Window{2, 1, 1}, nullptr);
  const Tensor x = Tensor::from_values(1, 4, {1, 2, 3, 4});
  const Tensor y = pool.forward(x, ForwardInfo{});
  ASSERT_EQ(y.cols(), 9);
  EXPECT_FLOAT_EQ(y.at(0, 0), 0.25f);  // only input 1 inside, divided by 4
  EXPECT_FLOAT_EQ(y.at(0, 4), 2.5f);   // the whole image
  check_input_gradient(pool, random_tensor(2, 4, 7), "avgpool dX");
  WindowPoolLayer strided(LayerType::AvgPool, 0, {3, 6, 6}, Window{2, 2, 0}, nullptr);
  check_input_gradient(strided, random_tensor(2, 108, 8), "strided avgpool dX");
}

TEST(Pooling, GlobalAverageAndFlatten) {
  GlobalAvgPoolLayer pool(0, {2, 2, 2}, nullptr);
  const Tensor x = Tensor::from_values(1, 8, {1, 2, 3, 4, 10, 20, 30, 40});
  const Tensor y = pool.forward(x, ForwardInfo{});
  EXPECT_FLOAT_EQ(y.at(0, 0), 2.5f);
  EXPECT_FLOAT_EQ(y.at(0, 1), 25.0f);
  check_input_gradient(pool, random_tensor(3, 8, 9), "global avgpool dX");
  FlattenLayer flatten(0, 8, nullptr);
  EXPECT_TRUE(testing::bitwise_equal(flatten.forward(x, ForwardInfo{}), x));
}

TEST(BatchNorm, NormalisesEachChannelOverBatchAndPixels) {
  BatchNormLayer norm(0, {2, 3, 1}, BatchNormOptions{}, nullptr);
  const Tensor x = random_tensor(4, 6, 10, -3.0f, 5.0f);
  const Tensor y = norm.forward(x, ForwardInfo{});
  for (int64_t c = 0; c < 2; ++c) {
    double sum = 0, sum_sq = 0;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t p = 0; p < 3; ++p) {
        sum += y.at(n, c * 3 + p);
        sum_sq += y.at(n, c * 3 + p) * y.at(n, c * 3 + p);
      }
    EXPECT_NEAR(sum / 12, 0.0, 1e-6);
    EXPECT_NEAR(sum_sq / 12, 1.0, 1e-4);  // 1 - eps / var
  }
}

TEST(BatchNorm, GradientsMatchFiniteDifferencesForImagesAndFeatures) {
  for (const ImageShape image : {ImageShape{3, 2, 2}, ImageShape{5, 1, 1}}) {
    BatchNormLayer norm(0, image, BatchNormOptions{}, nullptr);
    norm.gamma().copy_from(random_tensor(1, image.channels, 11, 0.5f, 1.5f));
    norm.beta().copy_from(random_tensor(1, image.channels, 12));
    Tensor x = random_tensor(4, image.size(), 13);
    const Tensor upstream = random_tensor(4, image.size(), 14);
    const ForwardInfo info;
    const auto loss = [&] { return weighted_sum(norm.forward(x, info), upstream); };
    const Tensor dx = norm.backward_input(x, upstream, info);
    expect_gradient_matches(x, loss, dx, "batchnorm dX", 1e-3);
    norm.zero_grad();
    norm.backward_weight(x, upstream);
    const Tensor gamma_grad = norm.grads()[0]->clone();
    const Tensor beta_grad = norm.grads()[1]->clone();
    expect_gradient_matches(norm.gamma(), loss, gamma_grad, "batchnorm dgamma", 1e-3);
    expect_gradient_matches(norm.beta(), loss, beta_grad, "batchnorm dbeta", 1e-3);
  }
}

TEST(BatchNorm, RunningStatisticsMoveOncePerMicrobatchAndServeEvaluation) {
  BatchNormLayer norm(0, {1, 2, 1}, BatchNormOptions{0.5, 1e-5}, nullptr);
  const Tensor x = Tensor::from_values(2, 2, {1, 3, 5, 7});  // mean 4, biased var 5, unbiased 20/3
  ForwardInfo info;
  info.step = 3;
  norm.forward(x, info);
  EXPECT_FLOAT_EQ(norm.running_mean().data()[0], 2.0f);                          // 0.5 * 0 + 0.5 * 4
  EXPECT_NEAR(norm.running_var().data()[0], 0.5 + 0.5 * 20.0 / 3.0, 1e-5);     // from 1
  norm.forward(x, info);  // the same micro-batch again (a recompute): no move
  EXPECT_FLOAT_EQ(norm.running_mean().data()[0], 2.0f);
  info.first_sample = 2;  // the next micro-batch moves them
  norm.forward(x, info);
  EXPECT_FLOAT_EQ(norm.running_mean().data()[0], 3.0f);
  ForwardInfo evaluation;
  evaluation.training = false;
  const Tensor y = norm.forward(x, evaluation);
  const double var = norm.running_var().data()[0];
  EXPECT_NEAR(y.at(0, 0), (1.0 - 3.0) / std::sqrt(var + 1e-5), 1e-5);
}

TEST(ResidualBlock, GradientsMatchFiniteDifferencesWithAndWithoutProjection) {
  for (const auto& [channels, stride] : {std::pair<int64_t, int64_t>{2, 1}, {3, 2}}) {
    SCOPED_TRACE("out " + std::to_string(channels) + " stride " + std::to_string(stride));
    const ResidualShape shape = residual_shape({2, 4, 4}, channels, stride);
    EXPECT_EQ(shape.projection, channels != 2 || stride != 1);
    ResidualBlockLayer block(0, shape, BatchNormOptions{}, nullptr);
    block.init(21);
    Tensor x = random_tensor(3, shape.in.size(), 22);
    const Tensor upstream = random_tensor(3, shape.out.size(), 23);
    const ForwardInfo info;
    const auto loss = [&] { return weighted_sum(block.forward(x, info), upstream); };
    const Tensor dx = block.backward_input(x, upstream, info);
    expect_gradient_matches(x, loss, dx, "residual dX", 1e-3, 3e-3, 2e-2);
    block.zero_grad();
    block.backward_weight(x, upstream);
    std::vector<Tensor> grads;
    for (Tensor* g : block.grads()) grads.push_back(g->clone());
    const std::vector<Tensor*> params = block.params();
    ASSERT_EQ(params.size(), grads.size());
    for (size_t i = 0; i < params.size(); ++i)
      expect_gradient_matches(*params[i], loss, grads[i], "residual param " + std::to_string(i), 1e-3, 3e-3,
                              2e-2);
  }
}

TEST(ResidualBlock, SplitBackwardWithKeptStateEqualsTheFusedOne) {
  const ResidualShape shape = residual_shape({2, 4, 4}, 4, 2);
  ResidualBlockLayer split(0, shape, BatchNormOptions{}, nullptr), fused(0, shape, BatchNormOptions{}, nullptr);
  split.init(5);
  fused.init(5);
  const Tensor x = random_tensor(2, shape.in.size(), 1);
  const Tensor dy = random_tensor(2, shape.out.size(), 2);
  const ForwardInfo info;
  std::unique_ptr<LayerState> state;
  const Tensor y = split.forward_keeping(x, info, state);
  ASSERT_TRUE(state);
  EXPECT_GT(state->bytes(), 0);
  const Tensor dx_split = split.backward_input_with(x, dy, info, state.get());
  split.backward_weight_with(x, dy, state.get());
  const Tensor dx_fused = fused.backward(x, dy, info);
  EXPECT_LT(testing::max_abs_difference(dx_split, dx_fused), 1e-5);
  const std::vector<Tensor*> a = split.grads(), b = fused.grads();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LT(testing::max_abs_difference(*a[i], *b[i]), 1e-4) << i;
}

}  // namespace
}  // namespace pipelab
