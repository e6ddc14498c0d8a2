#include "core/nn/residual_block.h"

namespace pipelab {

void HostResidualParts::relu_in_place(Tensor& t) {
  float* v = t.data();
  for (int64_t i = 0; i < t.size(); ++i) v[i] = v[i] > 0.0f ? v[i] : 0.0f;
}

Tensor HostResidualParts::relu_gradient(const Tensor& relu_out, const Tensor& dy) {
  Tensor d = dy.clone();
  const float* y = relu_out.data();
  float* g = d.data();
  for (int64_t i = 0; i < d.size(); ++i)
    if (!(y[i] > 0.0f)) g[i] = 0.0f;
  return d;
}

template class BasicResidualBlock<HostResidualParts>;

}  // namespace pipelab
