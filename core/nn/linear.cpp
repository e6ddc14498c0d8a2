#include "core/nn/linear.h"

#include <cblas.h>

#include <algorithm>
#include <cassert>

#include "core/nn/blas_int.h"

namespace pipelab {

LinearLayer::LinearLayer(int index, int64_t in_features, int64_t out_features, bool bias,
                         DeviceAllocator* allocator, bool add_bias_in_forward)
    : Layer(LayerType::Linear, index, in_features, out_features, allocator),
      add_bias_in_forward_(add_bias_in_forward),
      weight_(in_features, out_features, allocator, MemoryCategory::Weights),
      bias_(bias ? 1 : 0, bias ? out_features : 0, allocator, MemoryCategory::Weights),
      weight_grad_(in_features, out_features, allocator, MemoryCategory::Gradients),
      bias_grad_(bias ? 1 : 0, bias ? out_features : 0, allocator, MemoryCategory::Gradients) {}

Tensor LinearLayer::forward(const Tensor& x, const ForwardInfo& info) {
  (void)info;
  assert(x.cols() == in_features());
  const int64_t batch = x.rows();
  Tensor y = make_activation(batch, out_features());
  if (y.empty()) return y;
  // Seeding Y with the bias and using beta = 1 adds it inside the GEMM's pass.
  const bool with_bias = add_bias_in_forward_ && has_bias();
  if (with_bias) add_bias(y);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(batch), blas_int(out_features()),
              blas_int(in_features()), 1.0f, x.data(), blas_int(in_features()), weight_.data(),
              blas_int(out_features()), with_bias ? 1.0f : 0.0f, y.data(),
              blas_int(out_features()));
  return y;
}

Tensor LinearLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  (void)x;  // dX needs only W; x is checked in debug builds
  (void)info;
  assert(dy.cols() == out_features() && dy.rows() == x.rows());
  const int64_t batch = dy.rows();
  Tensor dx = make_activation(batch, in_features());
  if (dx.empty() || out_features() == 0) return dx;
  // dX [batch, in] = dY [batch, out] * W^T, W being [in, out].
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(batch), blas_int(in_features()),
              blas_int(out_features()), 1.0f, dy.data(), blas_int(out_features()), weight_.data(),
              blas_int(out_features()), 0.0f, dx.data(), blas_int(in_features()));
  return dx;
}

void LinearLayer::backward_weight(const Tensor& x, const Tensor& dy) {
  assert(x.cols() == in_features() && dy.cols() == out_features() && dy.rows() == x.rows());
  const int64_t batch = x.rows();
  if (batch == 0) return;
  // dW [in, out] += X^T [in, batch] * dY [batch, out]; beta = 1 accumulates.
  if (!weight_grad_.empty())
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(in_features()),
                blas_int(out_features()), blas_int(batch), 1.0f, x.data(), blas_int(in_features()),
                dy.data(), blas_int(out_features()), 1.0f, weight_grad_.data(),
                blas_int(out_features()));
  if (has_bias()) {
    float* db = bias_grad_.data();
    const int64_t width = out_features();
    for (int64_t r = 0; r < batch; ++r) {
      const float* g = dy.row(r);
      for (int64_t c = 0; c < width; ++c) db[c] += g[c];
    }
  }
}

std::vector<Tensor*> LinearLayer::params() {
  if (has_bias()) return {&weight_, &bias_};
  return {&weight_};
}

std::vector<Tensor*> LinearLayer::grads() {
  if (has_bias()) return {&weight_grad_, &bias_grad_};
  return {&weight_grad_};
}

void LinearLayer::add_bias(Tensor& y) const {
  if (!has_bias()) return;
  assert(y.cols() == out_features());
  const float* b = bias_.data();
  const int64_t width = out_features();
  for (int64_t r = 0; r < y.rows(); ++r) {
    float* out = y.row(r);
    for (int64_t c = 0; c < width; ++c) out[c] += b[c];
  }
}

}  // namespace pipelab
