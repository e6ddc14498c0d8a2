// SwiGLU: forward by its definition, the gradient of both halves against
// central differences, wide rows against double precision, and the GELU
// kernels GeluLayer runs.
#include "core/nn/swiglu.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/nn/activations.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

TEST(SwiGlu, ForwardIsSiluOfGateTimesUp) {
  const Tensor x = random_tensor(3, 8, 1, -4.0f, 4.0f);
  Tensor y(3, 4);
  swiglu_forward(x, y);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 4; ++c) {
      const double g = x.at(r, c);
      const double expected = g / (1.0 + std::exp(-g)) * x.at(r, 4 + c);
      EXPECT_NEAR(y.at(r, c), expected, 1e-6 * (1 + std::fabs(expected)));
    }
}

TEST(SwiGlu, GradientMatchesFiniteDifferences) {
  Tensor x = random_tensor(3, 10, 2, -3.0f, 3.0f);
  const Tensor upstream = random_tensor(3, 5, 3);
  const auto loss = [&] {
    Tensor y(3, 5);
    swiglu_forward(x, y);
    return weighted_sum(y, upstream);
  };
  Tensor dx(3, 10);
  swiglu_backward(x, upstream, dx);
  expect_gradient_matches(x, loss, dx, "swiglu dX", 1e-2, 2e-3, 1e-2);
}

// Rows of 300 gate columns run as one full 256-column chunk and a padded tail;
// both the values and the analytic gradient match double precision, out to
// gates of +-100 where exp saturates (fast_math.h clamps its argument).
TEST(SwiGlu, WideRowsMatchDoublePrecision) {
  const int64_t half = 300;
  Tensor x = random_tensor(2, 2 * half, 6, -12.0f, 12.0f);
  x.at(0, 0) = 100.0f;
  x.at(0, 1) = -100.0f;
  x.at(1, half - 1) = 90.0f;
  x.at(1, half - 2) = -90.0f;
  const Tensor dy = random_tensor(2, half, 7);
  Tensor y(2, half);
  swiglu_forward(x, y);
  Tensor dx(2, 2 * half);
  swiglu_backward(x, dy, dx);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < half; ++c) {
      const double g = x.at(r, c);
      const double u = x.at(r, half + c);
      const double s = 1.0 / (1.0 + std::exp(-g));
      const double grad = dy.at(r, c);
      const double expected = g * s * u;
      EXPECT_NEAR(y.at(r, c), expected, 1e-6 * (1 + std::fabs(expected))) << r << ", " << c;
      const double dgate = grad * u * s * (1.0 + g * (1.0 - s));
      const double dup = grad * g * s;
      EXPECT_NEAR(dx.at(r, c), dgate, 1e-6 * (1 + std::fabs(dgate))) << r << ", " << c;
      EXPECT_NEAR(dx.at(r, half + c), dup, 1e-6 * (1 + std::fabs(dup))) << r << ", " << c;
    }
}

TEST(SwiGlu, GeluKernelsMatchTheLayer) {
  GeluLayer layer(0, 6, nullptr);
  const Tensor x = random_tensor(2, 6, 4, -3.0f, 3.0f);
  const Tensor dy = random_tensor(2, 6, 5);
  Tensor y(2, 6);
  gelu_forward(x.data(), y.data(), x.size());
  EXPECT_TRUE(testing::bitwise_equal(y, layer.forward(x, {})));
  Tensor dx(2, 6);
  gelu_backward(x.data(), dy.data(), dx.data(), x.size());
  EXPECT_TRUE(testing::bitwise_equal(dx, layer.backward_input(x, dy, {})));
}

}  // namespace
}  // namespace pipelab
