// Host-only checks (no GPU needed): the image layers' index math and batch
// norm's formulas that the kernels share with the host (kernels/image_math.h,
// kernels/batch_norm_math.h) against core/nn's convolution, pools and batch
// norm, over geometries with padding, strides and uneven windows.
#include "gpu/kernels/image_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/nn/batch_norm.h"
#include "core/nn/conv2d.h"
#include "core/nn/pooling.h"
#include "gpu/kernels/batch_norm_math.h"
#include "gpu/layers/window_geometry.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::random_tensor;

struct WindowCase {
  ImageShape in;
  Window window;
};

// Odd sizes, strides that skip inputs, windows larger than the stride, padding.
const WindowCase kWindows[] = {
    {{2, 5, 7}, {3, 1, 1}}, {{3, 6, 6}, {3, 2, 1}}, {{1, 7, 5}, {2, 2, 0}},
    {{2, 4, 4}, {1, 2, 0}}, {{2, 9, 8}, {3, 3, 2}}, {{1, 4, 6}, {4, 1, 2}},
};

TEST(ImageMathTest, Im2colAndCol2imEqualCore) {
  for (const WindowCase& c : kWindows) {
    const ConvGeometry conv = conv_geometry(c.in, 4, c.window);
    const image_math::WindowGeometry g = window_geometry(conv.in, conv.out, conv.window);
    ASSERT_EQ(g.taps(), conv.taps());
    const Tensor image = random_tensor(1, c.in.size(), 3);
    std::vector<float> cols(static_cast<size_t>(conv.taps() * conv.out.pixels()));
    im2col(image.data(), conv, cols.data());
    for (size_t at = 0; at < cols.size(); ++at)
      ASSERT_EQ(image_math::cols_value(image.data(), g, static_cast<int64_t>(at)), cols[at]) << at;

    const Tensor grad_cols = random_tensor(1, static_cast<int64_t>(cols.size()), 4);
    std::vector<float> expected(static_cast<size_t>(c.in.size()), 0.0f);
    col2im_add(grad_cols.data(), conv, expected.data());
    for (int64_t i = 0; i < c.in.size(); ++i)
      ASSERT_EQ(image_math::col2im_value(grad_cols.data(), g, i), expected[static_cast<size_t>(i)])
          << i;
  }
}

TEST(ImageMathTest, WindowPoolsEqualCoreBothWays) {
  for (const WindowCase& c : kWindows) {
    if (c.window.padding >= c.window.kernel) continue;  // the model refuses such pools
    const ImageShape out = window_output(c.in, c.window, c.in.channels);
    const image_math::WindowGeometry g = window_geometry(c.in, out, c.window);
    // Rounded values make ties, so "the first of equals" is checked too.
    Tensor x = random_tensor(2, c.in.size(), 5, 3.0);
    for (int64_t i = 0; i < x.size(); ++i)
      x.data()[i] = static_cast<float>(static_cast<int>(x.data()[i]));
    const Tensor dy = random_tensor(2, out.size(), 6);
    for (LayerType type : {LayerType::MaxPool, LayerType::AvgPool}) {
      WindowPoolLayer pool(type, 0, c.in, c.window, nullptr);
      const Tensor y = pool.forward(x, ForwardInfo{});
      const Tensor dx = pool.backward_input(x, dy, ForwardInfo{});
      const bool max = type == LayerType::MaxPool;
      for (int64_t n = 0; n < x.rows(); ++n) {
        std::vector<int32_t> argmax(static_cast<size_t>(out.size()));
        for (int64_t o = 0; o < out.size(); ++o) {
          argmax[static_cast<size_t>(o)] =
              static_cast<int32_t>(image_math::window_argmax(x.row(n), g, o));
          const float value = max ? x.row(n)[argmax[static_cast<size_t>(o)]]
                                  : image_math::window_average(x.row(n), g, o);
          ASSERT_EQ(value, y.row(n)[o]) << layer_type_name(type) << " output " << o;
        }
        for (int64_t i = 0; i < c.in.size(); ++i)
          ASSERT_EQ(image_math::pool_input_gradient(dy.row(n), max ? argmax.data() : nullptr, g, i),
                    dx.row(n)[i])
              << layer_type_name(type) << " input " << i;
      }
    }
  }
}

// Batch norm through the shared formulas, sums in the CPU's order: the
// layer's output, input gradient, weight gradients and running statistics.
TEST(BatchNormMathTest, EqualsCoreBatchNorm) {
  const ImageShape image{3, 2, 5};
  const BatchNormOptions options{0.2, 1e-5};
  BatchNormLayer norm(0, image, options, nullptr);
  for (int64_t c = 0; c < image.channels; ++c) {
    norm.gamma().data()[c] = 0.5f + 0.25f * static_cast<float>(c);
    norm.beta().data()[c] = -0.1f * static_cast<float>(c);
  }
  const Tensor x = random_tensor(4, image.size(), 7, 2.0);
  const Tensor dy = random_tensor(4, image.size(), 8);
  ForwardInfo info;
  std::unique_ptr<LayerState> state;
  const Tensor y = norm.forward_keeping(x, info, state);
  const Tensor dx = norm.backward_input_with(x, dy, info, state.get());
  norm.backward_weight_with(x, dy, state.get());

  const int64_t pixels = image.pixels();
  const double count = static_cast<double>(x.rows() * pixels);
  for (int64_t c = 0; c < image.channels; ++c) {
    double sum = 0, squares = 0;
    for (int64_t n = 0; n < x.rows(); ++n) {
      double s = 0, q = 0;
      for (int64_t p = 0; p < pixels; ++p) {
        const float v = x.row(n)[c * pixels + p];
        s += v;
        q += static_cast<double>(v) * v;
      }
      sum += s;
      squares += q;
    }
    const auto stats = batch_norm_math::batch_statistics(sum, squares, count, options.eps);
    const float gamma = norm.gamma().data()[c];
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t n = 0; n < x.rows(); ++n) {
      double s = 0, t = 0;
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t i = c * pixels + p;
        ASSERT_EQ(batch_norm_math::normalise(x.row(n)[i], stats, gamma, norm.beta().data()[c]),
                  y.row(n)[i]);
        s += dy.row(n)[i];
        t += batch_norm_math::gradient_xhat_term(x.row(n)[i], dy.row(n)[i], stats);
      }
      sum_dy += s;
      sum_dy_xhat += t;
    }
    for (int64_t n = 0; n < x.rows(); ++n)
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t i = c * pixels + p;
        ASSERT_EQ(batch_norm_math::input_gradient(x.row(n)[i], dy.row(n)[i], stats, gamma,
                                                  sum_dy / count, sum_dy_xhat / count),
                  dx.row(n)[i]);
      }
    // Gradients accumulate into zeroed tensors: the sums, as floats.
    EXPECT_EQ(static_cast<float>(sum_dy_xhat), norm.grads()[0]->data()[c]);
    EXPECT_EQ(static_cast<float>(sum_dy), norm.grads()[1]->data()[c]);

    float running_mean = 0.0f, running_var = 1.0f;
    batch_norm_math::fold_into_running(running_mean, running_var, stats, count, options.momentum,
                                       options.eps);
    EXPECT_EQ(running_mean, norm.running_mean().data()[c]);
    EXPECT_EQ(running_var, norm.running_var().data()[c]);
    // Evaluation normalises with the running statistics.
    const auto running =
        batch_norm_math::running_statistics(running_mean, running_var, options.eps);
    const Tensor y_eval = norm.forward(x, ForwardInfo{0, 0, false});
    EXPECT_EQ(
        batch_norm_math::normalise(x.row(1)[c * pixels], running, gamma, norm.beta().data()[c]),
        y_eval.row(1)[c * pixels]);
  }
}

}  // namespace
}  // namespace pipelab::gpu
