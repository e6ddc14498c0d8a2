// GpuActivation: relu, gelu (tanh approximation), tanh or sigmoid, elementwise
// (width in = out), as core/nn/activations.h; the backward recomputes f'(x)
// from the forward input.
#pragma once

#include <memory>

#include "gpu/layers/layer.h"
#include "gpu/kernels/activation_math.h"

namespace pipelab::gpu {

class GpuActivation : public GpuLayer {
 public:
  // `type` is Relu, Gelu, Tanh or Sigmoid.
  GpuActivation(LayerType type, int index, int64_t width, DeviceContext& context);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;

  Activation activation() const { return activation_; }

 private:
  const Activation activation_;
};

// The kernel family for an activation LayerType; throws std::invalid_argument
// for other types.
Activation activation_for(LayerType type);

}  // namespace pipelab::gpu
