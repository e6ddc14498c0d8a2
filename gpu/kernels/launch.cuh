// Launch helpers shared by the kernel files (CUDA code only).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/device/cuda_check.h"

namespace pipelab::gpu::kernels {

// Threads per block of the elementwise and per-row kernels: a multiple of the
// warp size, as the block reductions require.
inline constexpr int kBlockThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill any current
// GPU several times over, never more than the work needs.
inline int grid_for(int64_t n, int threads = kBlockThreads) {
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<int>(std::clamp<int64_t>(blocks, 1, 8192));
}

// A grid-stride loop: i runs over [0, count) spread across every thread of the launch.
#define PIPELAB_GRID_STRIDE_LOOP(i, count)                                                     \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (count); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Kernel launches report configuration errors through cudaGetLastError.
#define PIPELAB_CHECK_LAUNCH() PIPELAB_CUDA_CHECK(cudaGetLastError())

}  // namespace pipelab::gpu::kernels
