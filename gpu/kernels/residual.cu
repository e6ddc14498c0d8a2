#include "gpu/kernels/residual.h"

#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void residual_kernel(float* y, const float* residual, const float* bias, int64_t rows,
                                int64_t cols) {
  const int64_t count = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] += bias ? residual[i] + bias[i % cols] : residual[i];
}

}  // namespace

void add_residual(float* y, const float* residual, const float* bias, int64_t rows, int64_t cols,
                  cudaStream_t stream) {
  if (rows * cols == 0) return;
  residual_kernel<<<grid_for(rows * cols), kBlockThreads, 0, stream>>>(y, residual, bias, rows,
                                                                       cols);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
