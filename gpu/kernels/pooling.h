// Pooling kernels over a batch of samples [channels, height, width]
// (core/nn/pooling.h has the math; image_math.h the window addressing):
//   max_pool_forward          y = the window's largest input; argmax[n][o]
//                             keeps its index within the sample for the backward
//   avg_pool_forward          y = the window's sum over kernel^2
//   pool_backward             dx gathered from dy (max: through argmax;
//                             average: argmax null)
//   global_avg_pool_forward   y[n][c] = mean over the pixels of x[n][c]
//   global_avg_pool_backward  dx[n][c][p] = dy[n][c] / pixels
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/image_math.h"

namespace pipelab::gpu::kernels {

void max_pool_forward(const float* x, const image_math::WindowGeometry& geometry, int64_t batch,
                      float* y, int32_t* argmax, cudaStream_t stream);
void avg_pool_forward(const float* x, const image_math::WindowGeometry& geometry, int64_t batch,
                      float* y, cudaStream_t stream);
void pool_backward(const float* dy, const int32_t* argmax,
                   const image_math::WindowGeometry& geometry, int64_t batch, float* dx,
                   cudaStream_t stream);
void global_avg_pool_forward(const float* x, int64_t rows, int64_t channels, int64_t pixels,
                             float* y, cudaStream_t stream);
void global_avg_pool_backward(const float* dy, int64_t rows, int64_t channels, int64_t pixels,
                              float* dx, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
