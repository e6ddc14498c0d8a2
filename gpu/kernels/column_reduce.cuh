// The device half of column_reduce.h: one block per tile of 32 columns and
// chunk of rows (blockIdx.y of gridDim.y); its 32 x 16 threads read whole
// 128-byte rows of the tile (coalesced), each of the 16 thread rows sums
// every 16th row of the chunk, and shared memory adds the 16 partials in a
// fixed order. CUDA code only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/column_reduce.h"

namespace pipelab::gpu::kernels {

inline constexpr int kColumnTile = 32;      // columns per block (threadIdx.x)
inline constexpr int kColumnRowLanes = 16;  // row lanes per block (threadIdx.y)

inline dim3 column_tile_block() { return dim3(kColumnTile, kColumnRowLanes); }
inline unsigned column_tiles(int64_t cols) {
  return static_cast<unsigned>((cols + kColumnTile - 1) / kColumnTile);
}
// The grid of the first pass: column tiles by row chunks (column_chunks).
inline dim3 column_grid(int64_t rows, int64_t cols) {
  return dim3(column_tiles(cols), static_cast<unsigned>(column_chunks(rows, cols)));
}

// The sum of value(r, c, cols) over this block's chunk of rows, for column c
// (c may be past the end: then 0). Every thread of the block must call it;
// the result is valid in threads with threadIdx.y == 0.
template <typename Value>
__device__ inline float column_tile_sum(Value value, int64_t c, int64_t rows, int64_t cols) {
  __shared__ float partial[kColumnRowLanes][kColumnTile + 1];  // +1: no bank conflicts
  const int64_t first = blockIdx.y * rows / gridDim.y, end = (blockIdx.y + 1) * rows / gridDim.y;
  float sum = 0.0f;
  if (c < cols)
    for (int64_t r = first + threadIdx.y; r < end; r += kColumnRowLanes) sum += value(r, c, cols);
  __syncthreads();  // a previous call in the same kernel may still read partial
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  float total = 0.0f;
  if (threadIdx.y == 0)
    for (int lane = 0; lane < kColumnRowLanes; ++lane) total += partial[lane][threadIdx.x];
  return total;
}

}  // namespace pipelab::gpu::kernels
