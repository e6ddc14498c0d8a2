#include "core/nn/layer_norm.h"

#include <cassert>
#include <cmath>

#include "core/nn/fast_math.h"

namespace pipelab {
namespace {

// Row sums are kept in double, split over kLanes interleaved partial sums
// (element c goes to lane c % kLanes) that are added up at the end: one
// running double sum waits out each add's latency, element after element,
// while independent lanes vectorise. The lanes are written out, so the order
// of the additions (and the result) is the same in every build and clone.
constexpr int64_t kLanes = 8;

double lane_total(const double* lanes) {
  double total = 0;
  for (int64_t l = 0; l < kLanes; ++l) total += lanes[l];
  return total;
}

// Mean and 1/sqrt(var + eps) of one row.
struct RowStatistics {
  float mean = 0;
  float inverse_std = 0;
};

PIPELAB_VECTOR_CLONES RowStatistics row_statistics(const float* __restrict__ x, int64_t width) {
  const int64_t full = width - width % kLanes;
  double sums[kLanes] = {};
  for (int64_t c = 0; c < full; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) sums[l] += x[c + l];
  for (int64_t c = full; c < width; ++c) sums[c - full] += x[c];
  const double mean = lane_total(sums) / static_cast<double>(width);
  double squares[kLanes] = {};
  for (int64_t c = 0; c < full; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      const double d = x[c + l] - mean;
      squares[l] += d * d;
    }
  for (int64_t c = full; c < width; ++c) {
    const double d = x[c] - mean;
    squares[c - full] += d * d;
  }
  const double variance = lane_total(squares) / static_cast<double>(width);
  return {static_cast<float>(mean),
          static_cast<float>(1.0 / std::sqrt(variance + LayerNormLayer::kEpsilon))};
}

}  // namespace

PIPELAB_VECTOR_CLONES void layer_norm_forward(const Tensor& x, const Tensor& gain,
                                              const Tensor& bias, Tensor& y) {
  assert(x.same_shape(y) && gain.size() == x.cols() && bias.size() == x.cols());
  const int64_t width = x.cols();
  const float* __restrict__ g = gain.data();
  const float* __restrict__ b = bias.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ in = x.row(r);
    float* __restrict__ out = y.row(r);
    const RowStatistics stats = row_statistics(in, width);
    for (int64_t c = 0; c < width; ++c)
      out[c] = (in[c] - stats.mean) * stats.inverse_std * g[c] + b[c];
  }
}

PIPELAB_VECTOR_CLONES void layer_norm_backward_input(const Tensor& x, const Tensor& gain,
                                                     const Tensor& dy, Tensor& dx) {
  assert(x.same_shape(dy) && x.same_shape(dx) && gain.size() == x.cols());
  const int64_t width = x.cols();
  const int64_t full = width - width % kLanes;
  const float* __restrict__ g = gain.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ in = x.row(r);
    const float* __restrict__ grad = dy.row(r);
    float* __restrict__ out = dx.row(r);
    const RowStatistics stats = row_statistics(in, width);
    double sum_dxhat[kLanes] = {};
    double sum_dxhat_xhat[kLanes] = {};
    const auto accumulate = [&](int64_t c, int64_t l) {
      const float xhat = (in[c] - stats.mean) * stats.inverse_std;
      const float dxhat = grad[c] * g[c];
      sum_dxhat[l] += dxhat;
      sum_dxhat_xhat[l] += static_cast<double>(dxhat) * xhat;
    };
    for (int64_t c = 0; c < full; c += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) accumulate(c + l, l);
    for (int64_t c = full; c < width; ++c) accumulate(c, c - full);
    const float mean_dxhat = static_cast<float>(lane_total(sum_dxhat) / static_cast<double>(width));
    const float mean_dxhat_xhat =
        static_cast<float>(lane_total(sum_dxhat_xhat) / static_cast<double>(width));
    for (int64_t c = 0; c < width; ++c) {
      const float xhat = (in[c] - stats.mean) * stats.inverse_std;
      out[c] = stats.inverse_std * (grad[c] * g[c] - mean_dxhat - xhat * mean_dxhat_xhat);
    }
  }
}

PIPELAB_VECTOR_CLONES void layer_norm_backward_weight(const Tensor& x, const Tensor& dy,
                                                      Tensor& gain_grad, Tensor& bias_grad) {
  assert(x.same_shape(dy) && gain_grad.size() == x.cols() && bias_grad.size() == x.cols());
  const int64_t width = x.cols();
  float* __restrict__ dgain = gain_grad.data();
  float* __restrict__ dbias = bias_grad.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ in = x.row(r);
    const float* __restrict__ grad = dy.row(r);
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
