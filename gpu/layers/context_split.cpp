#include "gpu/layers/context_split.h"

#include "gpu/device/cuda_check.h"

namespace pipelab::gpu {
namespace {

constexpr size_t kFloat = sizeof(float);

// core/nn/context_split.cpp's reorder: every (rank, chunk) run between the
// sample-major `whole` and the rank-major `staged`.
void reorder(const ContextSlice& slice, int64_t width, const float* from, float* to,
             bool to_rank_major, cudaStream_t stream) {
  for (int j = 0; j < slice.cp; ++j)
    for (int half = 0; half < 2; ++half) {
      const ContextChunkCopy copy = context_chunk_copy(slice, width, j, half);
      const size_t whole_pitch = static_cast<size_t>(copy.whole_stride) * kFloat;
      const size_t staged_pitch = static_cast<size_t>(copy.staged_stride) * kFloat;
      const float* source = from + (to_rank_major ? copy.whole_offset : copy.staged_offset);
      float* target = to + (to_rank_major ? copy.staged_offset : copy.whole_offset);
      PIPELAB_CUDA_CHECK(cudaMemcpy2DAsync(
          target, to_rank_major ? staged_pitch : whole_pitch, source,
          to_rank_major ? whole_pitch : staged_pitch, static_cast<size_t>(copy.run) * kFloat,
          static_cast<size_t>(copy.count), cudaMemcpyDeviceToDevice, stream));
    }
}

DeviceTensor staging(const ContextSlice& slice, int64_t width, DeviceContext& context) {
  return DeviceTensor::uninitialized(slice.batch * slice.seq, width, &context.allocator(),
                                     MemoryCategory::Workspace);
}

// The rank's own part of the staging buffer: its positions of every sample.
int64_t own_offset(const ContextSlice& slice, int64_t width) {
  return slice.rank * slice.batch * slice.local_positions() * width;
}

size_t local_bytes(const ContextSlice& slice, int64_t width) {
  return static_cast<size_t>(slice.batch * slice.local_positions() * width) * kFloat;
}

// Copies each key/value head's k and v between the QKV rows and the packed
// rows, one strided copy per head.
void copy_keys(const float* from, float* to, const AttentionShape& shape, int64_t rows,
               bool to_packed, cudaStream_t stream) {
  AttentionShape packed = shape;
  packed.packed_keys = true;
  const size_t qkv_pitch = static_cast<size_t>(shape.qkv_width()) * kFloat;
  const size_t packed_pitch = static_cast<size_t>(packed.key_width()) * kFloat;
  for (const PackedKeyRun& run : packed_key_runs(shape)) {
    const float* source = from + (to_packed ? run.qkv_column : run.packed_column);
    float* target = to + (to_packed ? run.packed_column : run.qkv_column);
    PIPELAB_CUDA_CHECK(cudaMemcpy2DAsync(
        target, to_packed ? packed_pitch : qkv_pitch, source, to_packed ? qkv_pitch : packed_pitch,
        static_cast<size_t>(run.width) * kFloat, static_cast<size_t>(rows),
        cudaMemcpyDeviceToDevice, stream));
  }
}

}  // namespace

std::vector<PackedKeyRun> packed_key_runs(const AttentionShape& shape) {
  AttentionShape packed = shape;
  packed.packed_keys = true;
  std::vector<PackedKeyRun> runs;
  for (int64_t kv = 0; kv < shape.key_value_heads(); ++kv) {
    const int64_t head = kv * shape.group();  // the group's first query head reads this k and v
    runs.push_back({shape.k_column(head), packed.key_column(head), 2 * shape.head_dim});
  }
  return runs;
}

DeviceBuffer upload_positions(const std::vector<int64_t>& positions, DeviceContext& context) {
  const int64_t bytes = static_cast<int64_t>(positions.size() * sizeof(int64_t));
  DeviceBuffer buffer(bytes, &context.allocator(), MemoryCategory::Workspace);
  // From pageable memory the call returns once the values are staged.
  if (bytes > 0)
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), positions.data(), static_cast<size_t>(bytes),
                                       cudaMemcpyHostToDevice, context.stream()));
  return buffer;
}

void gather_context(const float* local, const ContextSlice& slice, int64_t width, float* whole,
                    const DeviceSequenceCollective& all_gather, DeviceContext& context) {
  const cudaStream_t stream = context.stream();
  DeviceTensor staged = staging(slice, width, context);
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(staged.data() + own_offset(slice, width), local,
                                     local_bytes(slice, width), cudaMemcpyDeviceToDevice, stream));
  all_gather(staged);
  reorder(slice, width, staged.data(), whole, /*to_rank_major=*/false, stream);
}

void scatter_context(const float* whole, const ContextSlice& slice, int64_t width, float* local,
                     const DeviceSequenceCollective& reduce_scatter, DeviceContext& context) {
  const cudaStream_t stream = context.stream();
  DeviceTensor staged = staging(slice, width, context);
  reorder(slice, width, whole, staged.data(), /*to_rank_major=*/true, stream);
  reduce_scatter(staged);
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(local, staged.data() + own_offset(slice, width),
                                     local_bytes(slice, width), cudaMemcpyDeviceToDevice, stream));
}

void pack_keys(const float* qkv, const AttentionShape& shape, int64_t rows, float* packed,
               cudaStream_t stream) {
  copy_keys(qkv, packed, shape, rows, /*to_packed=*/true, stream);
}

void unpack_keys(const float* packed, const AttentionShape& shape, int64_t rows, float* qkv,
                 cudaStream_t stream) {
  copy_keys(packed, qkv, shape, rows, /*to_packed=*/false, stream);
}

}  // namespace pipelab::gpu
