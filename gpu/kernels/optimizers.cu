#include "gpu/kernels/optimizers.h"

#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void sgd_kernel(float* param, const float* grad, int64_t count, float lr,
                           float weight_decay) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    optimizer_math::sgd_update(param[i], grad[i], lr, weight_decay);
}

__global__ void sgd_momentum_kernel(float* param, const float* grad, float* velocity, int64_t count,
                                    float lr, float momentum, float weight_decay) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    optimizer_math::sgd_momentum_update(param[i], velocity[i], grad[i], lr, momentum, weight_decay);
}

__global__ void adam_kernel(float* param, const float* grad, float* first_moment,
                            float* second_moment, int64_t count,
                            optimizer_math::AdamScalars scalars) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    optimizer_math::adam_update(param[i], first_moment[i], second_moment[i], grad[i], scalars);
}

}  // namespace

void sgd_step(float* param, const float* grad, float* velocity, int64_t count, float lr,
              float momentum, float weight_decay, cudaStream_t stream) {
  if (count == 0) return;
  if (velocity)
    sgd_momentum_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(param, grad, velocity, count,
                                                                       lr, momentum, weight_decay);
  else
    sgd_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(param, grad, count, lr, weight_decay);
  PIPELAB_CHECK_LAUNCH();
}

void adam_step(float* param, const float* grad, float* first_moment, float* second_moment,
               int64_t count, const optimizer_math::AdamScalars& scalars, cudaStream_t stream) {
  if (count == 0) return;
  adam_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(param, grad, first_moment,
                                                             second_moment, count, scalars);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
