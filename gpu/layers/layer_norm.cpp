#include "gpu/layers/layer_norm.h"

#include <cassert>

#include "gpu/kernels/column_reduce.h"
#include "gpu/kernels/layer_norm.h"

namespace pipelab::gpu {

GpuLayerNorm::GpuLayerNorm(int index, int64_t width, DeviceContext& context)
    : GpuLayer(LayerType::LayerNorm, index, width, width, context),
      gain_(1, width, &context.allocator(), MemoryCategory::Weights),
      bias_(1, width, &context.allocator(), MemoryCategory::Weights),
      gain_grad_(1, width, &context.allocator(), MemoryCategory::Gradients),
      bias_grad_(1, width, &context.allocator(), MemoryCategory::Gradients) {
  gain_.fill(1.0f);
}

DeviceTensor GpuLayerNorm::forward(const DeviceTensor& x, const ForwardInfo&) {
  assert(x.cols() == in_features());
  DeviceTensor y = make_activation(x.rows(), x.cols());
  kernels::layer_norm_forward(x.data(), gain_.data(), bias_.data(), y.data(), nullptr, nullptr,
                              x.rows(), x.cols(), y.stream());
  return y;
}

DeviceTensor GpuLayerNorm::row_statistics(const DeviceTensor& x) const {
  DeviceTensor stats =
      DeviceTensor::uninitialized(2, x.rows(), &context().allocator(), MemoryCategory::Workspace);
  kernels::layer_norm_statistics(x.data(), stats.data(), stats.data() + x.rows(), x.rows(),
                                 x.cols(), stats.stream());
  return stats;
}

DeviceTensor GpuLayerNorm::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                          const ForwardInfo&) {
  assert(x.same_shape(dy) && x.cols() == in_features());
  const DeviceTensor stats = row_statistics(x);
  DeviceTensor dx = make_activation(x.rows(), x.cols());
  kernels::layer_norm_backward_input(x.data(), dy.data(), gain_.data(), stats.data(),
                                     stats.data() + x.rows(), dx.data(), x.rows(), x.cols(),
                                     dx.stream());
  return dx;
}

void GpuLayerNorm::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  assert(x.same_shape(dy) && x.cols() == in_features());
  const DeviceTensor stats = row_statistics(x);
  DeviceTensor scratch =
      DeviceTensor::uninitialized(2, kernels::column_partial_floats(x.rows(), x.cols()),
                                  gain_grad_.allocator(), MemoryCategory::Workspace);
  kernels::layer_norm_backward_weight(x.data(), dy.data(), stats.data(), stats.data() + x.rows(),
                                      gain_grad_.data(), bias_grad_.data(), x.rows(), x.cols(),
                                      scratch.data(), gain_grad_.stream());
}

}  // namespace pipelab::gpu
