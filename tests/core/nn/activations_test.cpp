// fast_math.h's tanh and exp against tanh and exp in double over dense sweeps
// of the floats, their special values, and the GELU kernels built on it against a
// double-precision reference and against the std::tanh form they replaced.
#include "core/nn/activations.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/nn/fast_math.h"

namespace pipelab {
namespace {

constexpr double kScale = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kCubic = 0.044715;

double gelu_reference(double v) {
  return 0.5 * v * (1.0 + std::tanh(kScale * (v + kCubic * v * v * v)));
}

double gelu_derivative_reference(double v) {
  const double t = std::tanh(kScale * (v + kCubic * v * v * v));
  return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * kScale * (1.0 + 3.0 * kCubic * v * v);
}

// The kernels before fast_math.h: the same float expressions on std::tanh.
float gelu_std_tanh(float v) {
  const float t = std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v));
  return 0.5f * v * (1.0f + t);
}

float gelu_derivative_std_tanh(float v) {
  const float t = std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v));
  const float inner_derivative = 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * v * v);
  return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * inner_derivative;
}

// Every 61st float from 0 to the largest finite one (35 million), both
// signs: the max abs error against tanh in double, and the largest distance
// in ulps from glibc's tanhf.
TEST(FastTanh, DenseSweepOfTheFloats) {
  double max_error = 0.0;
  float worst = 0.0f;
  int64_t max_ulps = 0;
  const uint32_t infinity_bits = std::bit_cast<uint32_t>(std::numeric_limits<float>::infinity());
  for (uint32_t bits = 0; bits < infinity_bits; bits += 61) {
    const float x = std::bit_cast<float>(bits);
    const float t = fast_tanh(x);
    const double error = std::fabs(static_cast<double>(t) - std::tanh(static_cast<double>(x)));
    if (error > max_error) {
      max_error = error;
      worst = x;
    }
    // Both results lie in [0, 1], where the bit patterns count ulps.
    const int64_t ulps = std::abs(static_cast<int64_t>(std::bit_cast<uint32_t>(t)) -
                                  static_cast<int64_t>(std::bit_cast<uint32_t>(std::tanh(x))));
    max_ulps = std::max(max_ulps, ulps);
    ASSERT_EQ(fast_tanh(-x), -t) << "odd at " << x;
  }
  EXPECT_LT(max_error, 5e-8) << "worst at " << worst;  // measured 3.4e-8
  EXPECT_LE(max_ulps, 2);
}

TEST(FastTanh, SpecialValues) {
  const float infinity = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fast_tanh(infinity), 1.0f);
  EXPECT_EQ(fast_tanh(-infinity), -1.0f);
  EXPECT_TRUE(std::isnan(fast_tanh(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(fast_tanh(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(fast_tanh(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(fast_tanh(-0.0f)));
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(fast_tanh(tiny), tiny);
  EXPECT_EQ(fast_tanh(1e-20f), 1e-20f);
  // Exactly +-1 once saturated, so 1 - t^2 is exactly 0 there.
  for (float x : {9.07f, 9.5f, 10.0f, 10.5f, 100.0f, 1e20f, std::numeric_limits<float>::max()}) {
    EXPECT_EQ(fast_tanh(x), 1.0f) << x;
    EXPECT_EQ(fast_tanh(-x), -1.0f) << x;
  }
}

// fast_exp over the floats of its clamp range [-87, 88] (every 401st bit
// pattern, 5.6 million points): relative error against exp in double, and the
// distance in ulps from it rounded to float.
TEST(FastExp, DenseSweepOfTheClampRange) {
  double max_error = 0.0;
  float worst = 0.0f;
  int64_t max_ulps = 0;
  const auto check = [&](float x) {
    const float e = fast_exp(x);
    const double exact = std::exp(static_cast<double>(x));
    const double error = std::fabs(static_cast<double>(e) - exact) / exact;
    if (error > max_error) {
      max_error = error;
      worst = x;
    }
    // Both are positive floats, whose bit patterns count ulps.
    const int64_t ulps =
        std::abs(static_cast<int64_t>(std::bit_cast<uint32_t>(e)) -
                 static_cast<int64_t>(std::bit_cast<uint32_t>(static_cast<float>(exact))));
    max_ulps = std::max(max_ulps, ulps);
  };
  for (uint32_t bits = 0; bits <= std::bit_cast<uint32_t>(kFastExpHigh); bits += 401)
    check(std::bit_cast<float>(bits));
  for (uint32_t bits = 0; bits <= std::bit_cast<uint32_t>(-kFastExpLow); bits += 401)
    check(-std::bit_cast<float>(bits));
  EXPECT_LT(max_error, 2e-7) << "worst at " << worst;  // measured 1.0e-7
  EXPECT_LE(max_ulps, 1) << "worst at " << worst;
}

TEST(FastExp, SpecialValues) {
  const float infinity = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
  EXPECT_EQ(fast_exp(-0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(fast_exp(std::numeric_limits<float>::quiet_NaN())));
  // Clamped: below -87 it gives exp(-87), a normal float near 0, never a NaN.
  EXPECT_EQ(fast_exp(-infinity), fast_exp(kFastExpLow));
  EXPECT_LT(fast_exp(-1000.0f), 2e-38f);
  EXPECT_GT(fast_exp(-1000.0f), 0.0f);
  EXPECT_EQ(fast_exp(infinity), fast_exp(kFastExpHigh));
  EXPECT_TRUE(std::isfinite(fast_exp(infinity)));
}

// y and dy/dx over [-12, 12] in steps of 2^-14 (393217 points) against the
// double-precision reference, relative where the value exceeds 1 in size.
TEST(FastGelu, MatchesDoublePrecisionReference) {
  std::vector<float> x;
  for (int i = -12 * 16384; i <= 12 * 16384; ++i) x.push_back(static_cast<float>(i) / 16384.0f);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> y(n), dx(n), ones(n, 1.0f);
  gelu_forward(x.data(), y.data(), n);
  gelu_backward(x.data(), ones.data(), dx.data(), n);
  double forward_error = 0.0, backward_error = 0.0;
  double old_forward_error = 0.0, old_backward_error = 0.0;
  double forward_change = 0.0, backward_change = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    const double y_ref = gelu_reference(v);
    const double d_ref = gelu_derivative_reference(v);
    const double y_scale = std::max(1.0, std::fabs(y_ref));
    const double d_scale = std::max(1.0, std::fabs(d_ref));
    forward_error = std::max(forward_error, std::fabs(y[i] - y_ref) / y_scale);
    backward_error = std::max(backward_error, std::fabs(dx[i] - d_ref) / d_scale);
    old_forward_error =
        std::max(old_forward_error, std::fabs(gelu_std_tanh(x[i]) - y_ref) / y_scale);
    old_backward_error =
        std::max(old_backward_error, std::fabs(gelu_derivative_std_tanh(x[i]) - d_ref) / d_scale);
    forward_change = std::max(forward_change, std::fabs(y[i] - gelu_std_tanh(x[i])) / y_scale);
    backward_change =
        std::max(backward_change,
                 std::fabs(dx[i] - gelu_derivative_std_tanh(x[i])) / d_scale);
  }
  // Measured: forward 1.2e-7 (std::tanh kernels 1.5e-7), backward 6.1e-7
  // (5.6e-7); the two differ by at most 1.8e-7 and 1.1e-6, errors of
  // opposite sign at the same point.
  EXPECT_LT(forward_error, 1e-6);
  EXPECT_LT(backward_error, 1e-6);
  // No worse than the std::tanh kernels by more than a couple of float ulps.
  EXPECT_LT(forward_error, old_forward_error + 1.2e-7);
  EXPECT_LT(backward_error, old_backward_error + 2.4e-7);
  EXPECT_LT(forward_change, 2.5e-7);
  EXPECT_LT(backward_change, 1.5e-6);
}

// Where tanh saturates and beyond, including overflow of v^3 and +-inf, NaN:
// exactly what the std::tanh kernels gave (NaN where they gave NaN).
TEST(FastGelu, SpecialValuesAsWithStdTanh) {
  const float infinity = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f,   -0.0f,   4.5f,     -4.5f,    6.0f,     -6.0f,
                                20.0f,  -20.0f,  1e6f,     -1e6f,    1e13f,    -1e13f,
                                1e20f,  -1e20f,  infinity, -infinity, std::numeric_limits<float>::quiet_NaN()};
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> y(n), dx(n), dy(n, 0.75f);
  gelu_forward(x.data(), y.data(), n);
  gelu_backward(x.data(), dy.data(), dx.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float old_y = gelu_std_tanh(x[i]);
    const float old_dx = 0.75f * gelu_derivative_std_tanh(x[i]);
    if (std::isnan(old_y)) {
      EXPECT_TRUE(std::isnan(y[i])) << x[i];
    } else if (std::fabs(x[i]) >= 6.0f) {
      EXPECT_EQ(y[i], old_y) << x[i];  // tanh is exactly +-1 for both
    } else {
      EXPECT_NEAR(y[i], old_y, 1e-6) << x[i];
    }
    if (std::isnan(old_dx)) {
      EXPECT_TRUE(std::isnan(dx[i])) << x[i];
    } else if (std::fabs(x[i]) >= 6.0f) {
      EXPECT_EQ(dx[i], old_dx) << x[i];
    } else {
      EXPECT_NEAR(dx[i], old_dx, 1e-6) << x[i];
    }
  }
}

// The kernels work in chunks with a padded tail: any length gives what one
// element at a time gives, and writes nothing past n.
TEST(FastGelu, AnyLengthMatchesElementwise) {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{255}, int64_t{256}, int64_t{257},
                    int64_t{1000}}) {
    std::vector<float> x(n), dy(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = -6.0f + 12.0f * static_cast<float>((i * 37) % 101) / 100.0f;
      dy[i] = 0.5f + static_cast<float>(i % 7);
    }
    const float sentinel = 12345.0f;
    std::vector<float> y(n + 1, sentinel), dx(n + 1, sentinel);
    gelu_forward(x.data(), y.data(), n);
    gelu_backward(x.data(), dy.data(), dx.data(), n);
    EXPECT_EQ(y[n], sentinel);
    EXPECT_EQ(dx[n], sentinel);
    for (int64_t i = 0; i < n; ++i) {
      float one_y = 0.0f, one_dx = 0.0f;
      gelu_forward(&x[i], &one_y, 1);
      gelu_backward(&x[i], &dy[i], &one_dx, 1);
      ASSERT_EQ(y[i], one_y) << "n " << n << " i " << i;
      ASSERT_EQ(dx[i], one_dx) << "n " << n << " i " << i;
    }
  }
}

}  // namespace
}  // namespace pipelab
