#include "core/nn/linear.h"

#include <cblas.h>

#include <algorithm>
#include <cassert>

#include "core/nn/blas_int.h"
#include "core/nn/fast_math.h"

namespace pipelab {

void linear_forward(const Tensor& x, const Tensor& weight, const Tensor* bias, Tensor& y) {
  const int64_t batch = x.rows();
  const int64_t in = weight.rows();
  const int64_t out = weight.cols();
  assert(x.cols() == in && y.rows() == batch && y.cols() == out);
  if (y.empty()) return;
  // Seeding Y with the bias and using beta = 1 adds it inside the GEMM's pass.
  if (bias) {
    assert(bias->size() == out);
    for (int64_t r = 0; r < batch; ++r) std::copy(bias->data(), bias->data() + out, y.row(r));
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(batch), blas_int(out),
              blas_int(in), 1.0f, x.data(), blas_int(in), weight.data(), blas_int(out),
              bias ? 1.0f : 0.0f, y.data(), blas_int(out));
}

void linear_backward_input(const Tensor& dy, const Tensor& weight, Tensor& dx) {
  const int64_t batch = dy.rows();
  const int64_t in = weight.rows();
  const int64_t out = weight.cols();
  assert(dy.cols() == out && dx.rows() == batch && dx.cols() == in);
  if (dx.empty()) return;
  if (out == 0) {
    dx.set_zero();
    return;
  }
  // dX [batch, in] = dY [batch, out] * W^T, W being [in, out].
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(batch), blas_int(in), blas_int(out),
              1.0f, dy.data(), blas_int(out), weight.data(), blas_int(out), 0.0f, dx.data(),
              blas_int(in));
}

namespace {

// column_sums [cols] += the sum of dy's rows: the bias gradient, one pass over
// dy, compiled for AVX2 too.
PIPELAB_VECTOR_CLONES void add_column_sums(const Tensor& dy, float* __restrict__ column_sums) {
  const int64_t cols = dy.cols();
  for (int64_t r = 0; r < dy.rows(); ++r) {
    const float* __restrict__ g = dy.row(r);
    for (int64_t c = 0; c < cols; ++c) column_sums[c] += g[c];
  }
}

}  // namespace

void linear_backward_weight(const Tensor& x, const Tensor& dy, Tensor& weight_grad,
                            Tensor* bias_grad) {
  const int64_t batch = x.rows();
  const int64_t in = weight_grad.rows();
  const int64_t out = weight_grad.cols();
  assert(x.cols() == in && dy.cols() == out && dy.rows() == batch);
  if (batch == 0) return;
  // dW [in, out] += X^T [in, batch] * dY [batch, out]; beta = 1 accumulates.
  if (!weight_grad.empty())
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(in), blas_int(out),
                blas_int(batch), 1.0f, x.data(), blas_int(in), dy.data(), blas_int(out), 1.0f,
                weight_grad.data(), blas_int(out));
  if (bias_grad) {
    assert(bias_grad->size() == out);
    add_column_sums(dy, bias_grad->data());
  }
}

void add_row_vector(const Tensor& bias, Tensor& y) {
  assert(bias.size() == y.cols());
  const float* __restrict__ b = bias.data();
  const int64_t width = y.cols();
  for (int64_t r = 0; r < y.rows(); ++r) {
    float* __restrict__ out = y.row(r);
    for (int64_t c = 0; c < width; ++c) out[c] += b[c];
  }
}

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
  Tensor y = make_activation(x.rows(), out_features());
  linear_forward(x, weight_, add_bias_in_forward_ && has_bias() ? &bias_ : nullptr, y);
  return y;
}

Tensor LinearLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  (void)x;  // dX needs only W; x is checked in debug builds
  (void)info;
  assert(dy.cols() == out_features() && dy.rows() == x.rows());
  Tensor dx = make_activation(dy.rows(), in_features());
  linear_backward_input(dy, weight_, dx);
  return dx;
}

void LinearLayer::backward_weight(const Tensor& x, const Tensor& dy) {
  linear_backward_weight(x, dy, weight_grad_, has_bias() ? &bias_grad_ : nullptr);
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
  add_row_vector(bias_, y);
}

}  // namespace pipelab
