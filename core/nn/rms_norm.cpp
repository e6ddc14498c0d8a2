#include "core/nn/rms_norm.h"

#include <cassert>
#include <cmath>

#include "core/nn/fast_math.h"

namespace pipelab {
namespace {

// Row sums are kept in double, split over kLanes interleaved partial sums
// (element c to lane c % kLanes) added up at the end, as in layer_norm.cpp:
// independent lanes vectorise where one running sum waits on every add.
constexpr int64_t kLanes = 8;

// The sum over a row of a[c] * b[c], in double.
PIPELAB_VECTOR_CLONES double row_dot(const float* __restrict__ a, const float* __restrict__ b,
                                     int64_t width) {
  const int64_t full = width - width % kLanes;
  double lanes[kLanes] = {};
  for (int64_t c = 0; c < full; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(a[c + l]) * b[c + l];
  for (int64_t c = full; c < width; ++c) lanes[c - full] += static_cast<double>(a[c]) * b[c];
  double total = 0;
  for (int64_t l = 0; l < kLanes; ++l) total += lanes[l];
  return total;
}

// 1 / sqrt(mean(x^2) + eps) of one row.
float inverse_rms(const float* x, int64_t width) {
  return static_cast<float>(
      1.0 / std::sqrt(row_dot(x, x, width) / static_cast<double>(width) + kRmsNormEpsilon));
}

}  // namespace

PIPELAB_VECTOR_CLONES void rms_norm_forward(const Tensor& x, const Tensor& gain, Tensor& y) {
  assert(x.same_shape(y) && gain.size() == x.cols());
  const int64_t width = x.cols();
  const float* g = gain.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ in = x.row(r);
    float* __restrict__ out = y.row(r);
    const float scale = inverse_rms(in, width);
    for (int64_t c = 0; c < width; ++c) out[c] = in[c] * scale * g[c];
  }
}

PIPELAB_VECTOR_CLONES void rms_norm_backward_input(const Tensor& x, const Tensor& gain,
                                                   const Tensor& dy, Tensor& dx) {
  assert(x.same_shape(dy) && x.same_shape(dx) && gain.size() == x.cols());
  const int64_t width = x.cols();
  const float* __restrict__ g = gain.data();
  const int64_t full = width - width % kLanes;
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ in = x.row(r);
    const float* __restrict__ grad = dy.row(r);
    float* __restrict__ out = dx.row(r);
    const float scale = inverse_rms(in, width);
    double sum_dxhat_xhat[kLanes] = {};
    const auto accumulate = [&](int64_t c, int64_t l) {
      sum_dxhat_xhat[l] += static_cast<double>(grad[c] * g[c]) * (in[c] * scale);
    };
    for (int64_t c = 0; c < full; c += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) accumulate(c + l, l);
    for (int64_t c = full; c < width; ++c) accumulate(c, c - full);
    double total = 0;
    for (int64_t l = 0; l < kLanes; ++l) total += sum_dxhat_xhat[l];
    const float mean_dxhat_xhat = static_cast<float>(total / static_cast<double>(width));
    for (int64_t c = 0; c < width; ++c)
      out[c] = scale * (grad[c] * g[c] - in[c] * scale * mean_dxhat_xhat);
  }
}

PIPELAB_VECTOR_CLONES void rms_norm_backward_weight(const Tensor& x, const Tensor& dy,
                                                    Tensor& gain_grad) {
  assert(x.same_shape(dy) && gain_grad.size() == x.cols());
  const int64_t width = x.cols();
  float* __restrict__ dgain = gain_grad.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ in = x.row(r);
    const float* __restrict__ grad = dy.row(r);
    const float scale = inverse_rms(in, width);
    for (int64_t c = 0; c < width; ++c) dgain[c] += grad[c] * in[c] * scale;
  }
}

}  // namespace pipelab
