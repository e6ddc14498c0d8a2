// GpuLayerNorm: PyTorch's nn.LayerNorm(width) (eps = 1e-5, biased variance) as
// core/nn/layer_norm.h: y = (x - mean) / sqrt(var + eps) * gain + bias, gain
// starting at 1 and bias at 0. Like the CPU layer it keeps nothing per micro-
// batch: BI and BW recompute each row's mean and 1/std from x into a small
// Workspace buffer (one cheap pass) before their kernels.
#pragma once

#include "gpu/layers/layer.h"

namespace pipelab::gpu {

class GpuLayerNorm : public GpuLayer {
 public:
  GpuLayerNorm(int index, int64_t width, DeviceContext& context);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  void backward_weight(const DeviceTensor& x, const DeviceTensor& dy) override;
  std::vector<DeviceTensor*> params() override { return {&gain_, &bias_}; }
  std::vector<DeviceTensor*> grads() override { return {&gain_grad_, &bias_grad_}; }

  DeviceTensor& gain() { return gain_; }
  DeviceTensor& bias() { return bias_; }
  DeviceTensor& gain_grad() { return gain_grad_; }
  DeviceTensor& bias_grad() { return bias_grad_; }

 private:
  // [2, rows] Workspace: row 0 the means, row 1 the 1/std of x's rows.
  DeviceTensor row_statistics(const DeviceTensor& x) const;

  DeviceTensor gain_;       // [1, width], Weights
  DeviceTensor bias_;       // [1, width], Weights
  DeviceTensor gain_grad_;  // [1, width], Gradients
  DeviceTensor bias_grad_;  // [1, width], Gradients
};

}  // namespace pipelab::gpu
