#include "core/nn/layer_norm.h"

#include <cassert>
#include <cmath>

namespace pipelab {
namespace {

// Mean and 1/sqrt(var + eps) of one row, accumulated in double.
struct RowStatistics {
  float mean = 0;
  float inverse_std = 0;
};

RowStatistics row_statistics(const float* x, int64_t width) {
  double sum = 0;
  for (int64_t c = 0; c < width; ++c) sum += x[c];
  const double mean = sum / static_cast<double>(width);
  double squares = 0;
  for (int64_t c = 0; c < width; ++c) {
    const double d = x[c] - mean;
    squares += d * d;
  }
  const double variance = squares / static_cast<double>(width);
  return {static_cast<float>(mean),
          static_cast<float>(1.0 / std::sqrt(variance + LayerNormLayer::kEpsilon))};
}

}  // namespace

void layer_norm_forward(const Tensor& x, const Tensor& gain, const Tensor& bias, Tensor& y) {
  assert(x.same_shape(y) && gain.size() == x.cols() && bias.size() == x.cols());
  const int64_t width = x.cols();
  const float* g = gain.data();
  const float* b = bias.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* in = x.row(r);
    float* out = y.row(r);
    const RowStatistics stats = row_statistics(in, width);
    for (int64_t c = 0; c < width; ++c)
      out[c] = (in[c] - stats.mean) * stats.inverse_std * g[c] + b[c];
  }
}

void layer_norm_backward_input(const Tensor& x, const Tensor& gain, const Tensor& dy, Tensor& dx) {
  assert(x.same_shape(dy) && x.same_shape(dx) && gain.size() == x.cols());
  const int64_t width = x.cols();
  const float* g = gain.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* in = x.row(r);
    const float* grad = dy.row(r);
    float* out = dx.row(r);
    const RowStatistics stats = row_statistics(in, width);
    double sum_dxhat = 0;
    double sum_dxhat_xhat = 0;
    for (int64_t c = 0; c < width; ++c) {
      const float xhat = (in[c] - stats.mean) * stats.inverse_std;
      const float dxhat = grad[c] * g[c];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += static_cast<double>(dxhat) * xhat;
    }
    const float mean_dxhat = static_cast<float>(sum_dxhat / static_cast<double>(width));
    const float mean_dxhat_xhat = static_cast<float>(sum_dxhat_xhat / static_cast<double>(width));
    for (int64_t c = 0; c < width; ++c) {
      const float xhat = (in[c] - stats.mean) * stats.inverse_std;
      out[c] = stats.inverse_std * (grad[c] * g[c] - mean_dxhat - xhat * mean_dxhat_xhat);
    }
  }
}

void layer_norm_backward_weight(const Tensor& x, const Tensor& dy, Tensor& gain_grad,
                                Tensor& bias_grad) {
  assert(x.same_shape(dy) && gain_grad.size() == x.cols() && bias_grad.size() == x.cols());
  const int64_t width = x.cols();
  float* dgain = gain_grad.data();
  float* dbias = bias_grad.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* in = x.row(r);
    const float* grad = dy.row(r);
    const RowStatistics stats = row_statistics(in, width);
    for (int64_t c = 0; c < width; ++c) {
      dgain[c] += grad[c] * (in[c] - stats.mean) * stats.inverse_std;
      dbias[c] += grad[c];
    }
  }
}

LayerNormLayer::LayerNormLayer(int index, int64_t width, DeviceAllocator* allocator)
    : Layer(LayerType::LayerNorm, index, width, width, allocator),
      gain_(1, width, allocator, MemoryCategory::Weights),
      bias_(1, width, allocator, MemoryCategory::Weights),
      gain_grad_(1, width, allocator, MemoryCategory::Gradients),
      bias_grad_(1, width, allocator, MemoryCategory::Gradients) {
  gain_.fill(1.0f);
}

Tensor LayerNormLayer::forward(const Tensor& x, const ForwardInfo&) {
  assert(x.cols() == in_features());
  Tensor y = make_activation(x.rows(), in_features());
  layer_norm_forward(x, gain_, bias_, y);
  return y;
}

Tensor LayerNormLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo&) {
  assert(x.same_shape(dy) && x.cols() == in_features());
  Tensor dx = make_activation(x.rows(), in_features());
  layer_norm_backward_input(x, gain_, dy, dx);
  return dx;
}

void LayerNormLayer::backward_weight(const Tensor& x, const Tensor& dy) {
  assert(x.same_shape(dy) && x.cols() == in_features());
  layer_norm_backward_weight(x, dy, gain_grad_, bias_grad_);
}

}  // namespace pipelab
