#include "gpu/kernels/bias.h"

#include "gpu/kernels/column_reduce.cuh"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void broadcast_rows_kernel(float* y, const float* bias, int64_t rows, int64_t cols) {
  const int64_t count = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = bias[i % cols];
}

__global__ void add_bias_rows_kernel(float* y, const float* bias, int64_t rows, int64_t cols) {
  const int64_t count = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] += bias[i % cols];
}

// What add_column_sums adds up: the element itself.
struct ElementValue {
  const float* x;
  __device__ float operator()(int64_t r, int64_t c, int64_t cols) const { return x[r * cols + c]; }
};

__global__ void column_partials_kernel(const float* x, int64_t rows, int64_t cols,
                                       float* partials) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(kColumnTile) + threadIdx.x;
  const float total = column_tile_sum(ElementValue{x}, c, rows, cols);
  if (threadIdx.y == 0 && c < cols) partials[blockIdx.y * cols + c] = total;
}

}  // namespace

void broadcast_rows(float* y, const float* bias, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows * cols == 0) return;
  broadcast_rows_kernel<<<grid_for(rows * cols), kBlockThreads, 0, stream>>>(y, bias, rows, cols);
  PIPELAB_CHECK_LAUNCH();
}

void add_bias_rows(float* y, const float* bias, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows * cols == 0) return;
  add_bias_rows_kernel<<<grid_for(rows * cols), kBlockThreads, 0, stream>>>(y, bias, rows, cols);
  PIPELAB_CHECK_LAUNCH();
}

void add_column_sums(float* sums, const float* x, int64_t rows, int64_t cols, float* scratch,
                     cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  column_partials_kernel<<<column_grid(rows, cols), column_tile_block(), 0, stream>>>(x, rows, cols,
                                                                                      scratch);
  PIPELAB_CHECK_LAUNCH();
  add_column_partials(scratch, column_chunks(rows, cols), cols, sums, stream);
}

}  // namespace pipelab::gpu::kernels
