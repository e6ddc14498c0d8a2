// LayerNormLayer: normalises each row (sample) over its features, then scales
// and shifts with learnable gain and bias (PyTorch's nn.LayerNorm(width),
// eps = 1e-5, biased variance):
//   y = (x - mean) / sqrt(var + eps) * gain + bias
// Gain starts at 1 and bias at 0. The backward recomputes mean and 1/std from x
// (one cheap pass) instead of keeping them per micro-batch.
//
// The math is also exposed as kernels over caller-allocated tensors (x, dy, y,
// dx [rows, width]; gain, bias and their gradients [1, width]), which the layer
// and the Transformer block (gpt_block.h) share.
#pragma once

#include "core/nn/layer.h"

namespace pipelab {

void layer_norm_forward(const Tensor& x, const Tensor& gain, const Tensor& bias, Tensor& y);
// With xhat = (x - mean) / std and dxhat = dy * gain, per row:
//   dx = (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) / std
void layer_norm_backward_input(const Tensor& x, const Tensor& gain, const Tensor& dy, Tensor& dx);
// gain_grad += sum over rows of dy * xhat; bias_grad += sum over rows of dy.
void layer_norm_backward_weight(const Tensor& x, const Tensor& dy, Tensor& gain_grad,
                                Tensor& bias_grad);

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
