// GpuResidualBlock: He et al.'s basic residual block as core/nn/residual_block.h,
//   y = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))
// composed of the GPU convolution and batch norm layers in the CPU block's
// order, with the CPU's initial weights. The forward keeps what the backward
// needs as the micro-batch's state (offloading can move its tensors); the
// input-gradient half leaves the inner gradients there for the weight half,
// so zero-bubble schedules can run them apart.
#pragma once

#include <memory>

#include "core/model/image_layers.h"
#include "gpu/layers/batch_norm.h"
#include "gpu/layers/conv2d.h"

namespace pipelab::gpu {

class GpuResidualBlock : public GpuLayer {
 public:
  GpuResidualBlock(int index, const ResidualShape& shape, const BatchNormOptions& norm,
                   DeviceContext& context);

  void init(uint64_t seed);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  void backward_weight(const DeviceTensor& x, const DeviceTensor& dy) override;
  DeviceTensor forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                               std::unique_ptr<LayerState>& state) override;
  DeviceTensor backward_input_with(const DeviceTensor& x, const DeviceTensor& dy,
                                   const ForwardInfo& info, LayerState* state) override;
  void backward_weight_with(const DeviceTensor& x, const DeviceTensor& dy,
                            LayerState* state) override;
  std::vector<DeviceTensor*> params() override;
  std::vector<DeviceTensor*> grads() override;
  std::vector<DeviceTensor*> buffers() override;
  // Synced batch norm: every batch norm of the block sums its statistics.
  void connect_batch_statistics(BatchStatisticsAllReduce all_reduce) override;

 private:
  struct Kept;
  // The convolutions and batch norms, in order (params() and grads() follow it).
  std::vector<GpuLayer*> parts();
  std::vector<GpuBatchNorm*> batch_norms();
  DeviceTensor run_forward(const DeviceTensor& x, const ForwardInfo& info, Kept& kept);
  DeviceTensor run_backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                  const ForwardInfo& info, Kept& kept);

  ResidualShape shape_;
  GpuConv2d conv1_;
  GpuBatchNorm bn1_;
  GpuConv2d conv2_;
  GpuBatchNorm bn2_;
  std::unique_ptr<GpuConv2d> projection_;  // with its batch norm, when shape_.projection
  std::unique_ptr<GpuBatchNorm> projection_bn_;
};

}  // namespace pipelab::gpu
