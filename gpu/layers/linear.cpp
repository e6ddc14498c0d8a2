#include "gpu/layers/linear.h"

#include <cassert>

#include "gpu/layers/cublas_gemm.h"
#include "gpu/kernels/bias.h"

namespace pipelab::gpu {

GpuLinear::GpuLinear(int index, int64_t in_features, int64_t out_features, bool bias,
                     DeviceContext& context, bool add_bias_in_forward)
    : GpuLayer(LayerType::Linear, index, in_features, out_features, context),
      add_bias_in_forward_(add_bias_in_forward),
      weight_(in_features, out_features, &context.allocator(), MemoryCategory::Weights),
      bias_(bias ? 1 : 0, bias ? out_features : 0, &context.allocator(), MemoryCategory::Weights),
      weight_grad_(in_features, out_features, &context.allocator(), MemoryCategory::Gradients),
      bias_grad_(bias ? 1 : 0, bias ? out_features : 0, &context.allocator(),
                 MemoryCategory::Gradients) {}

DeviceTensor GpuLinear::forward(const DeviceTensor& x, const ForwardInfo& info) {
  (void)info;
  assert(x.cols() == in_features());
  DeviceTensor y = make_activation(x.rows(), out_features());
  linear_forward(context().cublas(), x, weight_, add_bias_in_forward_ ? &bias_ : nullptr, y);
  return y;
}

DeviceTensor GpuLinear::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                       const ForwardInfo& info) {
  (void)x;  // dX needs only W
  (void)info;
  assert(dy.cols() == out_features() && dy.rows() == x.rows());
  DeviceTensor dx = make_activation(dy.rows(), in_features());
  linear_backward_input(context().cublas(), dy, weight_, dx);
  return dx;
}

void GpuLinear::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  assert(x.cols() == in_features() && dy.cols() == out_features() && dy.rows() == x.rows());
  linear_backward_weight(context().cublas(), x, dy, weight_grad_, &bias_grad_);
}

std::vector<DeviceTensor*> GpuLinear::params() {
  if (has_bias()) return {&weight_, &bias_};
  return {&weight_};
}

std::vector<DeviceTensor*> GpuLinear::grads() {
  if (has_bias()) return {&weight_grad_, &bias_grad_};
  return {&weight_grad_};
}

void GpuLinear::add_bias(DeviceTensor& y) const {
  if (!has_bias()) return;
  assert(y.cols() == out_features());
  kernels::add_bias_rows(y.data(), bias_.data(), y.rows(), y.cols(), y.stream());
}

}  // namespace pipelab::gpu
