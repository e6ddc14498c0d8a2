#include "gpu/kernels/bf16.h"

#include "gpu/kernels/bf16_math.h"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void to_bf16_kernel(const float* source, uint16_t* target, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    target[i] = bf16_math::to_bf16_bits(source[i]);
}

// Four values a thread at a time (16 bytes in, 8 out), for counts and
// pointers that allow it: the attention's [rows, seq] matrices are rounded
// at memory speed.
__global__ void to_bf16_by_four_kernel(const float4* source, uint2* target, int64_t quads) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < quads;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 v = source[i];
    target[i] = make_uint2(bf16_math::to_bf16_pair_bits(v.x, v.y),
                           bf16_math::to_bf16_pair_bits(v.z, v.w));
  }
}

__global__ void from_bf16_kernel(const uint16_t* source, float* target, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    target[i] = bf16_math::bf16_bits_to_float(source[i]);
}

}  // namespace

void to_bf16(const float* source, uint16_t* target, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  const bool by_four = count % 4 == 0 && reinterpret_cast<uintptr_t>(source) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(target) % 8 == 0;
  if (by_four) {
    to_bf16_by_four_kernel<<<grid_for(count / 4), kBlockThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(source), reinterpret_cast<uint2*>(target), count / 4);
    PIPELAB_CHECK_LAUNCH();
    return;
  }
  to_bf16_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(source, target, count);
  PIPELAB_CHECK_LAUNCH();
}

void from_bf16(const uint16_t* source, float* target, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  from_bf16_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(source, target, count);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
