#include "gpu/layers/sequence_split.h"

#include "gpu/device/cuda_check.h"

namespace pipelab::gpu {
namespace {

constexpr size_t kFloat = sizeof(float);

// core/nn/sequence_split.cpp's reorder: shard j's slice of every sample
// between the sample-major `whole` and the shard-major `staged`.
void reorder(const SequenceSlice& slice, int64_t width, const float* from, float* to,
             bool to_shard_major, cudaStream_t stream) {
  for (int j = 0; j < slice.tp; ++j) {
    const SequenceShardCopy copy = sequence_shard_copy(slice, width, j);
    const size_t sample_major_pitch = static_cast<size_t>(copy.sample_major_stride) * kFloat;
    const size_t shard_major_pitch = static_cast<size_t>(copy.run) * kFloat;
    const float* source =
        from + (to_shard_major ? copy.sample_major_offset : copy.shard_major_offset);
    float* target = to + (to_shard_major ? copy.shard_major_offset : copy.sample_major_offset);
    PIPELAB_CUDA_CHECK(
        cudaMemcpy2DAsync(target, to_shard_major ? shard_major_pitch : sample_major_pitch, source,
                          to_shard_major ? sample_major_pitch : shard_major_pitch,
                          static_cast<size_t>(copy.run) * kFloat, static_cast<size_t>(copy.count),
                          cudaMemcpyDeviceToDevice, stream));
  }
}

DeviceTensor staging(const SequenceSlice& slice, int64_t width, DeviceContext& context) {
  return DeviceTensor::uninitialized(slice.batch * slice.positions(), width, &context.allocator(),
                                     MemoryCategory::Workspace);
}

// The shard's own part of the staging buffer: its slice of every sample.
int64_t own_offset(const SequenceSlice& slice, int64_t width) {
  return slice.shard * slice.batch * slice.local_positions * width;
}

}  // namespace

void gather_sequence(const float* local, const SequenceSlice& slice, int64_t width, float* whole,
                     const DeviceSequenceCollective& all_gather, DeviceContext& context) {
  const cudaStream_t stream = context.stream();
  DeviceTensor staged = staging(slice, width, context);
  const size_t local_bytes =
      static_cast<size_t>(slice.batch * slice.local_positions * width) * kFloat;
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(staged.data() + own_offset(slice, width), local, local_bytes,
                                     cudaMemcpyDeviceToDevice, stream));
  all_gather(staged);
  reorder(slice, width, staged.data(), whole, /*to_shard_major=*/false, stream);
}

void scatter_sequence(const float* whole, const SequenceSlice& slice, int64_t width, float* local,
                      const DeviceSequenceCollective& reduce_scatter, DeviceContext& context) {
  const cudaStream_t stream = context.stream();
  DeviceTensor staged = staging(slice, width, context);
  reorder(slice, width, whole, staged.data(), /*to_shard_major=*/true, stream);
  reduce_scatter(staged);
  const size_t local_bytes =
      static_cast<size_t>(slice.batch * slice.local_positions * width) * kFloat;
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(local, staged.data() + own_offset(slice, width), local_bytes,
                                     cudaMemcpyDeviceToDevice, stream));
}

}  // namespace pipelab::gpu
