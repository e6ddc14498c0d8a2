#include "gpu/kernels/column_reduce.h"

#include <algorithm>

#include "gpu/kernels/column_reduce.cuh"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void add_partials_kernel(const float* partials, int64_t chunks, int64_t cols,
                                    float* sums) {
  PIPELAB_GRID_STRIDE_LOOP(c, cols) {
    float total = 0.0f;
    for (int64_t k = 0; k < chunks; ++k) total += partials[k * cols + c];
    sums[c] += total;
  }
}

}  // namespace

int64_t column_chunks(int64_t rows, int64_t cols) {
  const int64_t wanted = std::max<int64_t>(1, 512 / column_tiles(cols));
  const int64_t most = std::max<int64_t>(1, rows / 128);
  return std::min(wanted, most);
}

void add_column_partials(const float* partials, int64_t chunks, int64_t cols, float* sums,
                         cudaStream_t stream) {
  if (cols == 0) return;
  add_partials_kernel<<<grid_for(cols), kBlockThreads, 0, stream>>>(partials, chunks, cols, sums);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
