#include "gpu/kernels/swiglu.h"

#include "gpu/kernels/launch.cuh"
#include "gpu/kernels/swiglu_math.h"

namespace pipelab::gpu::kernels {
namespace {

// One thread per output element (r, c): gate x[r][c], up x[r][half + c].
__global__ void forward_kernel(const float* x, float* y, int64_t rows, int64_t half) {
  const int64_t count = rows * half;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / half;
    const int64_t c = i - r * half;
    const float* row = x + r * 2 * half;
    y[i] = swiglu_math::value(row[c], row[half + c]);
  }
}

__global__ void backward_kernel(const float* x, const float* dy, float* dx, int64_t rows,
                                int64_t half) {
  const int64_t count = rows * half;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / half;
    const int64_t c = i - r * half;
    const float* row = x + r * 2 * half;
    float* grad = dx + r * 2 * half;
    grad[c] = swiglu_math::gate_gradient(row[c], row[half + c], dy[i]);
    grad[half + c] = swiglu_math::up_gradient(row[c], dy[i]);
  }
}

}  // namespace

void swiglu_forward(const float* x, float* y, int64_t rows, int64_t half, cudaStream_t stream) {
  if (rows * half == 0) return;
  forward_kernel<<<grid_for(rows * half), kBlockThreads, 0, stream>>>(x, y, rows, half);
  PIPELAB_CHECK_LAUNCH();
}

void swiglu_backward(const float* x, const float* dy, float* dx, int64_t rows, int64_t half,
                     cudaStream_t stream) {
  if (rows * half == 0) return;
  backward_kernel<<<grid_for(rows * half), kBlockThreads, 0, stream>>>(x, dy, dx, rows, half);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
