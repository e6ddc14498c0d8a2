// The kernels of a convolution by im2col (core/nn/conv2d.h has the math;
// image_math.h the index math), over a batch of samples one after another:
//   im2col              cols[n] [taps, positions] from image n
//   col2im              image n's elements = the sums of the cols[n] entries
//                       that saw them (overwrites; gathered, no atomics)
//   broadcast_channels  y[n][c][p] = bias[c] (seeds Y before a GEMM with beta = 1)
//   add_channel_sums    sums[c] += sum over n and p of x[n][c][p] (the bias gradient)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/image_math.h"

namespace pipelab::gpu::kernels {

void im2col(const float* images, const image_math::WindowGeometry& geometry, int64_t batch,
            float* cols, cudaStream_t stream);
void col2im(const float* cols, const image_math::WindowGeometry& geometry, int64_t batch,
            float* images, cudaStream_t stream);
void broadcast_channels(float* y, const float* bias, int64_t rows, int64_t channels, int64_t pixels,
                        cudaStream_t stream);
void add_channel_sums(float* sums, const float* x, int64_t rows, int64_t channels, int64_t pixels,
                      cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
