#include "core/nn/swiglu.h"

#include <cassert>
#include <cmath>

namespace pipelab {

void swiglu_forward(const Tensor& x, Tensor& y) {
  const int64_t half = y.cols();
  assert(x.cols() == 2 * half && x.rows() == y.rows());
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ gate = x.row(r);
    const float* __restrict__ up = gate + half;
    float* __restrict__ out = y.row(r);
    for (int64_t c = 0; c < half; ++c) {
      const float g = gate[c];
      out[c] = g / (1.0f + std::exp(-g)) * up[c];
    }
  }
}

void swiglu_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
  const int64_t half = dy.cols();
  assert(x.cols() == 2 * half && x.same_shape(dx) && x.rows() == dy.rows());
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float* __restrict__ gate = x.row(r);
    const float* __restrict__ up = gate + half;
    const float* __restrict__ grad = dy.row(r);
    float* __restrict__ dgate = dx.row(r);
    float* __restrict__ dup = dgate + half;
    for (int64_t c = 0; c < half; ++c) {
      const float g = gate[c];
      const float s = 1.0f / (1.0f + std::exp(-g));
      dgate[c] = grad[c] * up[c] * s * (1.0f + g * (1.0f - s));
      dup[c] = grad[c] * g * s;
    }
  }
}

}  // namespace pipelab
