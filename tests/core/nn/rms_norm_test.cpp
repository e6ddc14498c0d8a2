// RMSNorm: forward against a double-precision reference, both gradients
// against central differences, and the layer-norm kernels the layer shares.
#include "core/nn/rms_norm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/nn/layer_norm.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

TEST(RmsNorm, ForwardMatchesDoubleReference) {
  const Tensor x = random_tensor(4, 7, 1, -3.0f, 3.0f);
  const Tensor gain = random_tensor(1, 7, 2, 0.5f, 1.5f);
  Tensor y(4, 7);
  rms_norm_forward(x, gain, y);
  for (int64_t r = 0; r < 4; ++r) {
    double squares = 0;
    for (int64_t c = 0; c < 7; ++c) squares += static_cast<double>(x.at(r, c)) * x.at(r, c);
    const double inverse_rms = 1.0 / std::sqrt(squares / 7 + 1e-5);
    for (int64_t c = 0; c < 7; ++c)
      EXPECT_NEAR(y.at(r, c), x.at(r, c) * inverse_rms * gain.at(0, c), 1e-6) << r << "," << c;
  }
}

TEST(RmsNorm, EpsilonMatchesLayerNorm) {
  EXPECT_EQ(kRmsNormEpsilon, LayerNormLayer::kEpsilon);
  // A zero row stays zero (eps keeps 1 / rms finite).
  const Tensor x(1, 4);
  const Tensor gain = random_tensor(1, 4, 3);
  Tensor y(1, 4);
  rms_norm_forward(x, gain, y);
  for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(y.at(0, c), 0.0f);
}

TEST(RmsNorm, InputAndGainGradientsMatchFiniteDifferences) {
  Tensor x = random_tensor(3, 6, 4, -2.0f, 2.0f);
  Tensor gain = random_tensor(1, 6, 5, 0.5f, 1.5f);
  const Tensor upstream = random_tensor(3, 6, 6);
  const auto loss = [&] {
    Tensor y(3, 6);
    rms_norm_forward(x, gain, y);
    return weighted_sum(y, upstream);
  };
  Tensor dx(3, 6);
  rms_norm_backward_input(x, gain, upstream, dx);
  expect_gradient_matches(x, loss, dx, "rmsnorm dX", 1e-2, 3e-3, 2e-2);
  Tensor dgain(1, 6);
  rms_norm_backward_weight(x, upstream, dgain);
  expect_gradient_matches(gain, loss, dgain, "rmsnorm dgain");
}

TEST(RmsNorm, WeightGradientAccumulates) {
  const Tensor x = random_tensor(2, 5, 7);
  const Tensor upstream = random_tensor(2, 5, 8);
  Tensor once(1, 5);
  rms_norm_backward_weight(x, upstream, once);
  Tensor twice(1, 5);
  rms_norm_backward_weight(x, upstream, twice);
  rms_norm_backward_weight(x, upstream, twice);
  for (int64_t c = 0; c < 5; ++c) EXPECT_FLOAT_EQ(twice.at(0, c), 2 * once.at(0, c));
}

TEST(RmsNorm, LayerNormKernelsMatchTheLayer) {
  LayerNormLayer layer(0, 6, nullptr);
  layer.gain().copy_from(random_tensor(1, 6, 9, 0.5f, 1.5f));
  layer.bias().copy_from(random_tensor(1, 6, 10));
  const Tensor x = random_tensor(3, 6, 11);
  const Tensor dy = random_tensor(3, 6, 12);
  Tensor y(3, 6);
  layer_norm_forward(x, layer.gain(), layer.bias(), y);
  EXPECT_TRUE(testing::bitwise_equal(y, layer.forward(x, {})));
  Tensor dx(3, 6);
  layer_norm_backward_input(x, layer.gain(), dy, dx);
  EXPECT_TRUE(testing::bitwise_equal(dx, layer.backward_input(x, dy, {})));
}

}  // namespace
}  // namespace pipelab
