// Elementwise activation layers (width in = out). Each backward recomputes what
// it needs from the forward input x, so a stage keeps only layer inputs.
//   relu     y = max(x, 0);                        dy/dx = 1 if x > 0 else 0
//   gelu     PyTorch's approximate='tanh' form:
//            y = 0.5 x (1 + tanh(k (x + 0.044715 x^3))),  k = sqrt(2 / pi)
//   tanh     y = tanh(x);                          dy/dx = 1 - y^2
//   sigmoid  y = 1 / (1 + exp(-x));                dy/dx = y (1 - y)
#pragma once

#include <memory>

#include "core/nn/layer.h"

namespace pipelab {

// GeluLayer's math over n contiguous floats, for callers with their own
// buffers (the Transformer block's feed-forward): y = gelu(x); dx = dy * gelu'(x).
// Their tanh is fast_math.h's vectorised rational (within 3.4e-8 of tanh), not
// std::tanh: the same results to about an ulp, several times faster.
void gelu_forward(const float* x, float* y, int64_t n);
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n);

class ReluLayer : public Layer {
 public:
  ReluLayer(int index, int64_t width, DeviceAllocator* allocator)
      : Layer(LayerType::Relu, index, width, width, allocator) {}
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
};

class GeluLayer : public Layer {
 public:
  GeluLayer(int index, int64_t width, DeviceAllocator* allocator)
      : Layer(LayerType::Gelu, index, width, width, allocator) {}
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
};

class TanhLayer : public Layer {
 public:
  TanhLayer(int index, int64_t width, DeviceAllocator* allocator)
      : Layer(LayerType::Tanh, index, width, width, allocator) {}
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
};

class SigmoidLayer : public Layer {
 public:
  SigmoidLayer(int index, int64_t width, DeviceAllocator* allocator)
      : Layer(LayerType::Sigmoid, index, width, width, allocator) {}
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
};

// One of the four above for an activation LayerType.
std::unique_ptr<Layer> make_activation_layer(LayerType type, int index, int64_t width,
                                             DeviceAllocator* allocator);

}  // namespace pipelab
