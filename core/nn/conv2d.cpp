#include "core/nn/conv2d.h"

#include <cblas.h>

#include <cassert>
#include <cmath>

#include "core/nn/blas_int.h"
#include "core/nn/init.h"

namespace pipelab {

ConvGeometry conv_geometry(const ImageShape& in, int64_t out_channels, const Window& window) {
  return {in, window_output(in, window, out_channels), window};
}

namespace {

// Calls visit(cols_index, image_index) for every entry of cols that sees the
// input (image_index >= 0) or the padding (image_index < 0): the one walk
// im2col and col2im share, so they cannot disagree.
template <typename Visit>
void for_each_tap(const ConvGeometry& g, Visit&& visit) {
  const int64_t k = g.window.kernel;
  const int64_t positions = g.out.pixels();
  for (int64_t c = 0; c < g.in.channels; ++c) {
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int64_t kj = 0; kj < k; ++kj) {
        const int64_t row = ((c * k) + ki) * k + kj;
        for (int64_t oh = 0; oh < g.out.height; ++oh) {
          const int64_t ih = oh * g.window.stride - g.window.padding + ki;
          const bool row_inside = ih >= 0 && ih < g.in.height;
          for (int64_t ow = 0; ow < g.out.width; ++ow) {
            const int64_t iw = ow * g.window.stride - g.window.padding + kj;
            const bool inside = row_inside && iw >= 0 && iw < g.in.width;
            visit(row * positions + oh * g.out.width + ow,
                  inside ? (c * g.in.height + ih) * g.in.width + iw : int64_t{-1});
          }
        }
      }
    }
  }
}

}  // namespace

void im2col(const float* image, const ConvGeometry& geometry, float* cols) {
  for_each_tap(geometry, [&](int64_t at, int64_t source) { cols[at] = source >= 0 ? image[source] : 0.0f; });
}

void col2im_add(const float* cols, const ConvGeometry& geometry, float* image) {
  for_each_tap(geometry, [&](int64_t at, int64_t target) {
    if (target >= 0) image[target] += cols[at];
  });
}

void conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor* bias,
                    const ConvGeometry& g, float* cols, Tensor& y) {
  const int64_t taps = g.taps();
  const int64_t positions = g.out.pixels();
  const int64_t channels = g.out.channels;
  assert(x.cols() == g.in.size() && y.cols() == g.out.size() && x.rows() == y.rows());
  for (int64_t n = 0; n < x.rows(); ++n) {
    im2col(x.row(n), g, cols);
    float* out = y.row(n);
    if (bias) {
      for (int64_t o = 0; o < channels; ++o)
        for (int64_t p = 0; p < positions; ++p) out[o * positions + p] = bias->data()[o];
    }
    // y_n [channels, positions] = W [channels, taps] cols [taps, positions] (+ the bias seeded in y).
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(channels), blas_int(positions),
                blas_int(taps), 1.0f, weight.data(), blas_int(taps), cols, blas_int(positions),
                bias ? 1.0f : 0.0f, out, blas_int(positions));
  }
}

void conv2d_backward_input(const Tensor& dy, const Tensor& weight, const ConvGeometry& g,
                           float* cols, Tensor& dx) {
  const int64_t taps = g.taps();
  const int64_t positions = g.out.pixels();
  const int64_t channels = g.out.channels;
  assert(dy.cols() == g.out.size() && dx.cols() == g.in.size() && dx.rows() == dy.rows());
  dx.set_zero();
  for (int64_t n = 0; n < dy.rows(); ++n) {
    // dcols [taps, positions] = W^T [taps, channels] dy_n [channels, positions].
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(taps), blas_int(positions),
                blas_int(channels), 1.0f, weight.data(), blas_int(taps), dy.row(n), blas_int(positions),
                0.0f, cols, blas_int(positions));
    col2im_add(cols, g, dx.row(n));
  }
}

void conv2d_backward_weight(const Tensor& x, const Tensor& dy, const ConvGeometry& g, float* cols,
                            Tensor& weight_grad, Tensor* bias_grad) {
  const int64_t taps = g.taps();
  const int64_t positions = g.out.pixels();
  const int64_t channels = g.out.channels;
  assert(x.cols() == g.in.size() && dy.cols() == g.out.size() && x.rows() == dy.rows());
  for (int64_t n = 0; n < x.rows(); ++n) {
    im2col(x.row(n), g, cols);
    // dW [channels, taps] += dy_n [channels, positions] cols^T [positions, taps].
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(channels), blas_int(taps),
                blas_int(positions), 1.0f, dy.row(n), blas_int(positions), cols, blas_int(positions),
                1.0f, weight_grad.data(), blas_int(taps));
    if (bias_grad) {
      const float* g_n = dy.row(n);
      for (int64_t o = 0; o < channels; ++o) {
        double sum = 0;
        for (int64_t p = 0; p < positions; ++p) sum += g_n[o * positions + p];
        bias_grad->data()[o] += static_cast<float>(sum);
      }
    }
  }
}

Conv2dLayer::Conv2dLayer(int index, const ConvGeometry& geometry, bool bias, DeviceAllocator* allocator)
    : Layer(LayerType::Conv2d, index, geometry.in.size(), geometry.out.size(), allocator),
      geometry_(geometry),
      weight_(geometry.out.channels, geometry.taps(), allocator, MemoryCategory::Weights),
      bias_(bias ? 1 : 0, bias ? geometry.out.channels : 0, allocator, MemoryCategory::Weights),
      weight_grad_(geometry.out.channels, geometry.taps(), allocator, MemoryCategory::Gradients),
      bias_grad_(bias ? 1 : 0, bias ? geometry.out.channels : 0, allocator, MemoryCategory::Gradients) {}

void Conv2dLayer::init(uint64_t seed, int part) {
  const double fan_in = static_cast<double>(geometry_.taps());
  const int key_index = index() * 4 + part;  // a block's convolutions draw apart
  init_uniform_block(weight_, layer_key(seed, RandomStream::ConvWeight, key_index), std::sqrt(6.0 / fan_in),
                     weight_.cols());
  if (has_bias())
    init_uniform_block(bias_, layer_key(seed, RandomStream::ConvBias, key_index), 1.0 / std::sqrt(fan_in),
                       bias_.cols());
}

Tensor Conv2dLayer::scratch() const {
  return Tensor::uninitialized(geometry_.taps(), geometry_.out.pixels(), allocator(), MemoryCategory::Workspace);
}

Tensor Conv2dLayer::forward(const Tensor& x, const ForwardInfo& info) {
  (void)info;
  Tensor y = Tensor::uninitialized(x.rows(), out_features(), allocator(), MemoryCategory::Activations);
  Tensor cols = scratch();
  conv2d_forward(x, weight_, has_bias() ? &bias_ : nullptr, geometry_, cols.data(), y);
  return y;
}

Tensor Conv2dLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  (void)x;  // the input gradient needs only W
  (void)info;
  Tensor dx = make_activation(dy.rows(), in_features());
  Tensor cols = scratch();
  conv2d_backward_input(dy, weight_, geometry_, cols.data(), dx);
  return dx;
}

void Conv2dLayer::backward_weight(const Tensor& x, const Tensor& dy) {
  Tensor cols = scratch();
  conv2d_backward_weight(x, dy, geometry_, cols.data(), weight_grad_, has_bias() ? &bias_grad_ : nullptr);
}

std::vector<Tensor*> Conv2dLayer::params() {
  if (has_bias()) return {&weight_, &bias_};
  return {&weight_};
}

std::vector<Tensor*> Conv2dLayer::grads() {
  if (has_bias()) return {&weight_grad_, &bias_grad_};
  return {&weight_grad_};
}

}  // namespace pipelab
