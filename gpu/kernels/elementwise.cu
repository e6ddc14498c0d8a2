#include "gpu/kernels/elementwise.h"

#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void fill_kernel(float* data, int64_t count, float value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    data[i] = value;
}

__global__ void add_into_kernel(float* target, const float* source, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    target[i] += source[i];
}

__global__ void add_scaled_into_kernel(float* target, const float* source, float factor, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    target[i] += factor * source[i];
}

__global__ void scale_kernel(float* data, int64_t count, float factor) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    data[i] *= factor;
}

}  // namespace

void fill(float* data, int64_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(data, count, value);
  PIPELAB_CHECK_LAUNCH();
}

void add_into(float* target, const float* source, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  add_into_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(target, source, count);
  PIPELAB_CHECK_LAUNCH();
}

void add_scaled_into(float* target, const float* source, float factor, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  add_scaled_into_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(target, source, factor, count);
  PIPELAB_CHECK_LAUNCH();
}

void scale(float* data, int64_t count, float factor, cudaStream_t stream) {
  if (count == 0) return;
  scale_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(data, count, factor);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
