// ResidualBlockLayer: He et al.'s basic residual block on images [C, H, W]:
//   y = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))
// conv1 is 3 x 3 with the block's stride, conv2 3 x 3 with stride 1, both
// padded by 1 and without bias (the batch norms shift). The shortcut is x
// itself, or bn(conv1x1(x)) with the block's stride when the channels or the
// size change (model/image_layers.h: residual_shape).
//
// The forward keeps what the backward needs (each convolution's output, the
// first relu's output, the block's output and the batch norms' statistics) as
// the micro-batch's LayerState; the input-gradient half leaves the inner
// gradients there for the weight-gradient half, so zero-bubble schedules can
// run them apart.
#pragma once

#include <memory>

#include "core/model/image_layers.h"
#include "core/nn/batch_norm.h"
#include "core/nn/conv2d.h"

namespace pipelab {

class ResidualBlockLayer : public Layer {
 public:
  ResidualBlockLayer(int index, const ResidualShape& shape, const BatchNormOptions& norm,
                     DeviceAllocator* allocator);

  void init(uint64_t seed);

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  Tensor forward_keeping(const Tensor& x, const ForwardInfo& info, std::unique_ptr<LayerState>& state) override;
  Tensor backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                             LayerState* state) override;
  void backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) override;
  std::vector<Tensor*> params() override;
  std::vector<Tensor*> grads() override;
  std::vector<Tensor*> buffers() override;
  // Synced batch norm: every batch norm of the block sums its statistics.
  void connect_batch_statistics(BatchStatisticsAllReduce all_reduce) override;

  // The batch norms, in order (bn1, bn2, and the shortcut's when there is one),
  // for synchronised batch norm's connection.
  std::vector<BatchNormLayer*> batch_norms();
  const ResidualShape& shape() const { return shape_; }

 private:
  struct Kept;
  // The convolutions and batch norms, in order (params() and grads() follow it).
  std::vector<Layer*> parts();
  // forward_keeping's work, into `kept`.
  Tensor run_forward(const Tensor& x, const ForwardInfo& info, Kept& kept);
  // The inner gradients, into `kept`; returns dx.
  Tensor run_backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info, Kept& kept);

  ResidualShape shape_;
  Conv2dLayer conv1_;
  BatchNormLayer bn1_;
  Conv2dLayer conv2_;
  BatchNormLayer bn2_;
  std::unique_ptr<Conv2dLayer> projection_;  // with its batch norm, when shape_.projection
  std::unique_ptr<BatchNormLayer> projection_bn_;
};

}  // namespace pipelab
