#include "gpu/layers/batch_norm.h"

#include <cassert>
#include <vector>

#include "gpu/device/cuda_check.h"

namespace pipelab::gpu {
namespace {

struct BatchNormState : LayerState {
  GpuBatchNorm::Statistics statistics;
  int64_t bytes() const override { return statistics.channels.bytes(); }
};

}  // namespace

GpuBatchNorm::GpuBatchNorm(int index, const ImageShape& image, const BatchNormOptions& options,
                           DeviceContext& context)
    : GpuLayer(LayerType::BatchNorm, index, image.size(), image.size(), context),
      image_(image),
      options_(options),
      gamma_(1, image.channels, &context.allocator(), MemoryCategory::Weights),
      beta_(1, image.channels, &context.allocator(), MemoryCategory::Weights),
      gamma_grad_(1, image.channels, &context.allocator(), MemoryCategory::Gradients),
      beta_grad_(1, image.channels, &context.allocator(), MemoryCategory::Gradients),
      running_mean_(1, image.channels, &context.allocator(), MemoryCategory::Weights),
      running_var_(1, image.channels, &context.allocator(), MemoryCategory::Weights) {
  gamma_.fill(1.0f);
  running_var_.fill(1.0f);
}

kernels::ChannelLayout GpuBatchNorm::layout(const DeviceTensor& x) const {
  assert(x.cols() == image_.size());
  return {x.rows(), image_.channels, image_.pixels()};
}

DeviceBuffer GpuBatchNorm::make_doubles(int64_t count, MemoryCategory category) const {
  return DeviceBuffer(count * static_cast<int64_t>(sizeof(double)), &context().allocator(),
                      category);
}

DeviceBuffer GpuBatchNorm::make_statistics(MemoryCategory category) const {
  return DeviceBuffer(image_.channels * static_cast<int64_t>(sizeof(kernels::ChannelStatistics)),
                      &context().allocator(), category);
}

void GpuBatchNorm::all_reduce_sums(DeviceBuffer& sums, int64_t doubles, double* count) const {
  const cudaStream_t stream = context().allocator().stream();
  const size_t bytes = static_cast<size_t>(doubles) * sizeof(double);
  std::vector<double> values(static_cast<size_t>(doubles));
  PIPELAB_CUDA_CHECK(
      cudaMemcpyAsync(values.data(), sums.data(), bytes, cudaMemcpyDeviceToHost, stream));
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (count) values.push_back(*count);
  all_reduce_(values);
  if (count) *count = values.back();
  // From pageable memory: the call returns once `values` has been staged.
  PIPELAB_CUDA_CHECK(
      cudaMemcpyAsync(sums.data(), values.data(), bytes, cudaMemcpyHostToDevice, stream));
}

GpuBatchNorm::Statistics GpuBatchNorm::batch_statistics(const DeviceTensor& x) const {
  const kernels::ChannelLayout l = layout(x);
  const cudaStream_t stream = context().allocator().stream();
  DeviceBuffer sums = make_doubles(2 * l.channels, MemoryCategory::Workspace);
  kernels::batch_norm_sums(x.data(), l, sums.as<double>(), stream);
  Statistics stats;
  stats.count = static_cast<double>(l.rows * l.pixels);
  if (all_reduce_) all_reduce_sums(sums, 2 * l.channels, &stats.count);
  stats.channels = make_statistics(MemoryCategory::Activations);
  kernels::batch_norm_statistics(sums.as<double>(), stats.count, options_.eps, l.channels,
                                 stats.channels.as<kernels::ChannelStatistics>(), stream);
  return stats;
}

void GpuBatchNorm::fold_into_running(const Statistics& stats, const ForwardInfo& info) {
  if (!folded_.first_time(info)) return;  // a recompute
  kernels::batch_norm_fold_running(
      stats.channels.as<kernels::ChannelStatistics>(), stats.count, options_.momentum, options_.eps,
      image_.channels, running_mean_.data(), running_var_.data(), running_mean_.stream());
}

DeviceTensor GpuBatchNorm::forward(const DeviceTensor& x, const ForwardInfo& info) {
  std::unique_ptr<LayerState> unused;
  return forward_keeping(x, info, unused);
}

DeviceTensor GpuBatchNorm::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                          const ForwardInfo& info) {
  return backward_input_with(x, dy, info, nullptr);
}

void GpuBatchNorm::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  backward_weight_with(x, dy, nullptr);
}

DeviceTensor GpuBatchNorm::forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                                           std::unique_ptr<LayerState>& state) {
  const kernels::ChannelLayout l = layout(x);
  auto kept = std::make_unique<BatchNormState>();
  if (info.training) {
    kept->statistics = batch_statistics(x);
    fold_into_running(kept->statistics, info);
  } else {
    kept->statistics.channels = make_statistics(MemoryCategory::Workspace);
    kernels::batch_norm_running_statistics(
        running_mean_.data(), running_var_.data(), options_.eps, l.channels,
        kept->statistics.channels.as<kernels::ChannelStatistics>(), running_mean_.stream());
  }
  DeviceTensor y = make_activation(x.rows(), out_features());
  kernels::batch_norm_forward(x.data(), kept->statistics.channels.as<kernels::ChannelStatistics>(),
                              gamma_.data(), beta_.data(), l, y.data(), y.stream());
  if (info.training) state = std::move(kept);  // evaluation has no backward
  return y;
}

const GpuBatchNorm::Statistics& GpuBatchNorm::statistics_for(const DeviceTensor& x,
                                                             LayerState* state,
                                                             Statistics& recomputed) const {
  if (auto* kept = dynamic_cast<BatchNormState*>(state)) return kept->statistics;
  recomputed = batch_statistics(x);
  return recomputed;
}

DeviceBuffer GpuBatchNorm::gradient_sums(const DeviceTensor& x, const DeviceTensor& dy,
                                         const Statistics& stats) const {
  assert(x.same_shape(dy));
  const kernels::ChannelLayout l = layout(x);
  DeviceBuffer sums = make_doubles(2 * l.channels, MemoryCategory::Workspace);
  kernels::batch_norm_gradient_sums(x.data(), dy.data(),
                                    stats.channels.as<kernels::ChannelStatistics>(), l,
                                    sums.as<double>(), context().allocator().stream());
  return sums;
}

DeviceTensor GpuBatchNorm::backward_input_with(const DeviceTensor& x, const DeviceTensor& dy,
                                               const ForwardInfo&, LayerState* state) {
  Statistics recomputed;
  const Statistics& stats = statistics_for(x, state, recomputed);
  const kernels::ChannelLayout l = layout(x);
  DeviceBuffer sums = gradient_sums(x, dy, stats);
  if (all_reduce_) all_reduce_sums(sums, 2 * l.channels, nullptr);
  DeviceTensor dx = make_activation(x.rows(), in_features());
  kernels::batch_norm_backward_input(x.data(), dy.data(),
                                     stats.channels.as<kernels::ChannelStatistics>(), gamma_.data(),
                                     sums.as<double>(), stats.count, l, dx.data(), dx.stream());
  return dx;
}

void GpuBatchNorm::backward_weight_with(const DeviceTensor& x, const DeviceTensor& dy,
                                        LayerState* state) {
  // This replica's share only: data parallelism sums gamma's and beta's
  // gradients over the replicas as it does every weight's.
  Statistics recomputed;
  const Statistics& stats = statistics_for(x, state, recomputed);
  const DeviceBuffer sums = gradient_sums(x, dy, stats);
  kernels::batch_norm_add_weight_gradients(sums.as<double>(), image_.channels, gamma_grad_.data(),
                                           beta_grad_.data(), gamma_grad_.stream());
}

}  // namespace pipelab::gpu
