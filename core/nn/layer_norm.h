// LayerNormLayer: normalises each row (sample) over its features, then scales
// and shifts with learnable gain and bias (PyTorch's nn.LayerNorm(width),
// eps = 1e-5, biased variance):
//   y = (x - mean) / sqrt(var + eps) * gain + bias
// Gain starts at 1 and bias at 0. The backward recomputes mean and 1/std from x
// (one cheap pass) instead of keeping them per micro-batch.
#pragma once

#include "core/nn/layer.h"

namespace pipelab {

class LayerNormLayer : public Layer {
 public:
  static constexpr double kEpsilon = 1e-5;

  LayerNormLayer(int index, int64_t width, DeviceAllocator* allocator);

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  std::vector<Tensor*> params() override { return {&gain_, &bias_}; }
  std::vector<Tensor*> grads() override { return {&gain_grad_, &bias_grad_}; }

  Tensor& gain() { return gain_; }
  Tensor& bias() { return bias_; }
  Tensor& gain_grad() { return gain_grad_; }
  Tensor& bias_grad() { return bias_grad_; }

 private:
  Tensor gain_;       // [1, width], Weights
  Tensor bias_;       // [1, width], Weights
  Tensor gain_grad_;  // [1, width], Gradients
  Tensor bias_grad_;  // [1, width], Gradients
};

}  // namespace pipelab
