// SwiGLU: forward by its definition, the gradient of both halves against
// central differences, and the GELU kernels GeluLayer runs.
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
