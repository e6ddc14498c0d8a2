// Warp and block sums (and the block maximum) for the per-row kernels (layer norm, losses). A block
// must have a multiple of 32 threads; every thread gets the block's total.
// The summation order is fixed by the thread layout, so results are the same
// from run to run.
#pragma once

#include <cuda_runtime.h>
#include <math.h>

namespace pipelab::gpu::kernels {

template <typename T>
__device__ inline T warp_sum(T value) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;  // lane 0 holds the warp's total
}

template <typename T>
__device__ inline T block_sum(T value) {
  __shared__ T warp_totals[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  value = warp_sum(value);
  __syncthreads();  // a previous call may still be reading warp_totals
  if (lane == 0) warp_totals[warp] = value;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x + 31) >> 5;
  T total = lane < warps ? warp_totals[lane] : T(0);
  total = warp_sum(total);
  return __shfl_sync(0xffffffffu, total, 0);
}

// The block's maximum (fmaxf, so order does not matter); every thread gets it.
__device__ inline float block_max(float value) {
  __shared__ float warp_maxima[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  for (int offset = 16; offset > 0; offset >>= 1)
    value = fmaxf(value, __shfl_down_sync(0xffffffffu, value, offset));
  __syncthreads();  // a previous call may still be reading warp_maxima
  if (lane == 0) warp_maxima[warp] = value;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x + 31) >> 5;
  float best = lane < warps ? warp_maxima[lane] : -INFINITY;
  for (int offset = 16; offset > 0; offset >>= 1)
    best = fmaxf(best, __shfl_down_sync(0xffffffffu, best, offset));
  return __shfl_sync(0xffffffffu, best, 0);
}

}  // namespace pipelab::gpu::kernels
