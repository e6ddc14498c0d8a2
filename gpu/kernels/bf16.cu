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

__global__ void from_bf16_kernel(const uint16_t* source, float* target, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    target[i] = bf16_math::bf16_bits_to_float(source[i]);
}

}  // namespace

void to_bf16(const float* source, uint16_t* target, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  to_bf16_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(source, target, count);
  PIPELAB_CHECK_LAUNCH();
}

void from_bf16(const uint16_t* source, float* target, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  from_bf16_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(source, target, count);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
