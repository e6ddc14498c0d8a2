#include "gpu/layers/residual_block.h"

#include "gpu/kernels/activations.h"

namespace pipelab::gpu {

void DeviceResidualParts::relu_in_place(DeviceTensor& t) {
  kernels::activation_forward(Activation::Relu, t.data(), t.data(), t.size(), t.stream());
}

DeviceTensor DeviceResidualParts::relu_gradient(const DeviceTensor& relu_out,
                                                const DeviceTensor& dy) {
  DeviceTensor d = DeviceTensor::uninitialized(dy.rows(), dy.cols(), relu_out.allocator(),
                                               MemoryCategory::Activations);
  kernels::activation_backward(Activation::Relu, relu_out.data(), dy.data(), d.data(), d.size(),
                               d.stream());
  return d;
}

}  // namespace pipelab::gpu

namespace pipelab {
template class BasicResidualBlock<gpu::DeviceResidualParts>;
}  // namespace pipelab
