#include "gpu/layers/activation.h"

#include <cassert>
#include <stdexcept>
#include <string>

#include "gpu/kernels/activations.h"

namespace pipelab::gpu {

Activation activation_for(LayerType type) {
  switch (type) {
    case LayerType::Relu:
      return Activation::Relu;
    case LayerType::Gelu:
      return Activation::Gelu;
    case LayerType::Tanh:
      return Activation::Tanh;
    case LayerType::Sigmoid:
      return Activation::Sigmoid;
    default:
      break;
  }
  throw std::invalid_argument(std::string(layer_type_name(type)) + " is not an activation layer");
}

GpuActivation::GpuActivation(LayerType type, int index, int64_t width, DeviceContext& context)
    : GpuLayer(type, index, width, width, context), activation_(activation_for(type)) {}

DeviceTensor GpuActivation::forward(const DeviceTensor& x, const ForwardInfo&) {
  DeviceTensor y = make_activation(x.rows(), x.cols());
  kernels::activation_forward(activation_, x.data(), y.data(), x.size(), y.stream());
  return y;
}

DeviceTensor GpuActivation::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                           const ForwardInfo&) {
  assert(x.same_shape(dy));
  DeviceTensor dx = make_activation(x.rows(), x.cols());
  kernels::activation_backward(activation_, x.data(), dy.data(), dx.data(), x.size(), dx.stream());
  return dx;
}

}  // namespace pipelab::gpu
