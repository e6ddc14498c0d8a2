#include "core/nn/rms_norm.h"

#include <cassert>
#include <cmath>

namespace pipelab {
namespace {

// 1 / sqrt(mean(x^2) + eps) of one row, accumulated in double.
float inverse_rms(const float* x, int64_t width) {
  double squares = 0;
  for (int64_t c = 0; c < width; ++c) squares += static_cast<double>(x[c]) * x[c];
  return static_cast<float>(1.0 /
                            std::sqrt(squares / static_cast<double>(width) + kRmsNormEpsilon));
}

}  // namespace

void rms_norm_forward(const Tensor& x, const Tensor& gain, Tensor& y) {
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

void rms_norm_backward_input(const Tensor& x, const Tensor& gain, const Tensor& dy, Tensor& dx) {
  assert(x.same_shape(dy) && x.same_shape(dx) && gain.size() == x.cols());
  const int64_t width = x.cols();
  const float* g = gain.data();
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ in = x.row(r);
    const float* __restrict__ grad = dy.row(r);
    float* __restrict__ out = dx.row(r);
    const float scale = inverse_rms(in, width);
    double sum_dxhat_xhat = 0;
    for (int64_t c = 0; c < width; ++c)
      sum_dxhat_xhat += static_cast<double>(grad[c] * g[c]) * (in[c] * scale);
    const float mean_dxhat_xhat = static_cast<float>(sum_dxhat_xhat / static_cast<double>(width));
    for (int64_t c = 0; c < width; ++c)
      out[c] = scale * (grad[c] * g[c] - in[c] * scale * mean_dxhat_xhat);
  }
}

void rms_norm_backward_weight(const Tensor& x, const Tensor& dy, Tensor& gain_grad) {
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
