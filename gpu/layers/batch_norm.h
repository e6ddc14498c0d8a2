// GpuBatchNorm: batch normalisation as core/nn/batch_norm.h, the same
// semantics on the GPU: statistics per channel over the micro-batch (and,
// synced, over the data-parallel replicas), running statistics moved once per
// (step, first sample) so a recompute does not move them again, evaluation on
// the running statistics, and the backward's two per-channel sums.
//
// The per-channel sums are reduced on the device (kernels/batch_norm.h); a
// synced layer copies them to the host for the stage's all-reduce callback
// (which sends them through the backend's data-parallel all-reduce) and back.
// The forward keeps each channel's mean and 1/std (in double, as the CPU) as
// the micro-batch's state; without one the backward recomputes them from x.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "core/model/image_shape.h"
#include "core/nn/batch_norm.h"
#include "gpu/kernels/batch_norm.h"
#include "gpu/layers/layer.h"

namespace pipelab::gpu {

class GpuBatchNorm : public GpuLayer {
 public:
  // `image` gives the channels and pixels; a flat input of `width` features is
  // {width, 1, 1}.
  GpuBatchNorm(int index, const ImageShape& image, const BatchNormOptions& options,
               DeviceContext& context);

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
  std::vector<DeviceTensor*> params() override { return {&gamma_, &beta_}; }
  std::vector<DeviceTensor*> grads() override { return {&gamma_grad_, &beta_grad_}; }
  std::vector<DeviceTensor*> buffers() override { return {&running_mean_, &running_var_}; }

  // Synchronised batch norm: `all_reduce` sums the batch statistics (in the
  // forward) and the gradient sums (in the input-gradient half) over the
  // replicas.
  void connect_batch_statistics(BatchStatisticsAllReduce all_reduce) override {
    all_reduce_ = std::move(all_reduce);
  }

  DeviceTensor& gamma() { return gamma_; }
  DeviceTensor& beta() { return beta_; }
  DeviceTensor& running_mean() { return running_mean_; }
  DeviceTensor& running_var() { return running_var_; }

  // A micro-batch's per-channel statistics on the device.
  struct Statistics {
    DeviceBuffer channels;  // [channels] ChannelStatistics
    double count = 0;       // values per channel, over every replica that shares them
  };

 private:
  kernels::ChannelLayout layout(const DeviceTensor& x) const;
  Statistics batch_statistics(const DeviceTensor& x) const;
  // The statistics the forward kept, or the batch's again (into `recomputed`).
  const Statistics& statistics_for(const DeviceTensor& x, LayerState* state,
                                   Statistics& recomputed) const;
  void fold_into_running(const Statistics& stats, const ForwardInfo& info);
  // Per channel: sum(dy), then sum(dy xhat), as [2 channels] doubles.
  DeviceBuffer gradient_sums(const DeviceTensor& x, const DeviceTensor& dy,
                             const Statistics& stats) const;
  // Sums the [doubles] values at `sums` over the replicas (through the host),
  // `count` appended when given, as the CPU layer's all-reduce vector.
  void all_reduce_sums(DeviceBuffer& sums, int64_t doubles, double* count) const;
  DeviceBuffer make_doubles(int64_t count, MemoryCategory category) const;
  DeviceBuffer make_statistics(MemoryCategory category) const;  // [channels] ChannelStatistics

  ImageShape image_;
  BatchNormOptions options_;
  BatchStatisticsAllReduce all_reduce_;
  DeviceTensor gamma_;  // [1, C], Weights, starts at 1
  DeviceTensor beta_;   // [1, C], Weights, starts at 0
  DeviceTensor gamma_grad_;
  DeviceTensor beta_grad_;
  DeviceTensor running_mean_;  // [1, C], Weights (not trained), starts at 0
  DeviceTensor running_var_;   // [1, C], starts at 1
  RunningStatisticsFolds folded_;
};

}  // namespace pipelab::gpu
