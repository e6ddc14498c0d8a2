// GpuLinear: y = x W + b with W [in, out] and b [1, out] (core/nn/linear.h),
// through cuBLAS (cublas_gemm.h): forward, BI (dX = dY W^T) and BW
// (dW += X^T dY, db += column sums of dY).
#pragma once

#include "gpu/layers/layer.h"

namespace pipelab::gpu {

class GpuLinear : public GpuLayer {
 public:
  // Weights and bias start at zero: copy initial values in (GpuSequential does,
  // from core/nn/init.h). add_bias_in_forward = false leaves the bias out of
  // forward, for a row-parallel shard that adds it after the all-reduce.
  GpuLinear(int index, int64_t in_features, int64_t out_features, bool bias, DeviceContext& context,
            bool add_bias_in_forward = true);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  void backward_weight(const DeviceTensor& x, const DeviceTensor& dy) override;
  std::vector<DeviceTensor*> params() override;
  std::vector<DeviceTensor*> grads() override;
  std::vector<DeviceTensor*> gemm_weights() override { return {&weight_}; }

  // y += b on every row (no-op without a bias).
  void add_bias(DeviceTensor& y) const;

  bool has_bias() const { return !bias_.empty(); }
  DeviceTensor& weight() { return weight_; }
  DeviceTensor& bias() { return bias_; }
  DeviceTensor& weight_grad() { return weight_grad_; }
  DeviceTensor& bias_grad() { return bias_grad_; }

 private:
  const bool add_bias_in_forward_;
  DeviceTensor weight_;       // [in, out], Weights
  DeviceTensor bias_;         // [1, out] or empty, Weights
  DeviceTensor weight_grad_;  // [in, out], Gradients
  DeviceTensor bias_grad_;    // [1, out] or empty, Gradients
};

}  // namespace pipelab::gpu
