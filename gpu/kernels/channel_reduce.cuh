// Per-channel sums over a batch of images laid out [rows][channels][pixels]
// (batch norm's statistics and gradient sums, a convolution's bias gradient):
// one block per channel sums, in double, over the rows * pixels values of its
// channel. CUDA code only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/block_reduce.cuh"

namespace pipelab::gpu::kernels {

// The sum of value(i) over the elements i of channel c; every thread of the
// block must call it and gets the total.
template <typename Value>
__device__ inline double channel_sum(Value value, int64_t c, int64_t rows, int64_t channels,
                                     int64_t pixels) {
  double sum = 0.0;
  const int64_t count = rows * pixels;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    const int64_t n = k / pixels;
    sum += value((n * channels + c) * pixels + k % pixels);
  }
  return block_sum(sum);
}

}  // namespace pipelab::gpu::kernels
