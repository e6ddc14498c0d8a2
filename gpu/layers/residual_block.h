// GpuResidualBlock: the basic residual block (core/nn/basic_residual_block.h)
// on the GPU, over GpuConv2d and GpuBatchNorm: the CPU block's math, order
// and initial weights.
#pragma once

#include "core/nn/basic_residual_block.h"
#include "gpu/layers/batch_norm.h"
#include "gpu/layers/conv2d.h"

namespace pipelab::gpu {

struct DeviceResidualParts {
  using Tensor = DeviceTensor;
  using Layer = GpuLayer;
  using Context = DeviceContext&;
  using Conv = GpuConv2d;
  using Norm = GpuBatchNorm;
  static void relu_in_place(DeviceTensor& t);
  static DeviceTensor relu_gradient(const DeviceTensor& relu_out, const DeviceTensor& dy);
};

}  // namespace pipelab::gpu

namespace pipelab {
extern template class BasicResidualBlock<gpu::DeviceResidualParts>;
}  // namespace pipelab

namespace pipelab::gpu {

class GpuResidualBlock : public BasicResidualBlock<DeviceResidualParts> {
 public:
  using BasicResidualBlock::BasicResidualBlock;
  // The convolutions' weights: under bf16-mixed their GEMMs read bf16 copies.
  std::vector<DeviceTensor*> gemm_weights() override {
    std::vector<DeviceTensor*> weights;
    for (GpuConv2d* conv : convolutions()) {
      const std::vector<DeviceTensor*> conv_weights = conv->gemm_weights();
      weights.insert(weights.end(), conv_weights.begin(), conv_weights.end());
    }
    return weights;
  }
};

}  // namespace pipelab::gpu
