#include "gpu/kernels/embedding.h"

#include <algorithm>

#include "gpu/kernels/embedding_math.h"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

__global__ void lookup_kernel(const float* ids, int64_t count, const float* table, int64_t begin,
                              int64_t held, int64_t dim, float* y) {
  const int64_t total = count * dim;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t token = i / dim;
    const int64_t c = i - token * dim;
    const int64_t row = embedding_math::table_row(ids[token], begin, held);
    y[i] = row >= 0 ? table[row * dim + c] : 0.0f;
  }
}

__global__ void add_position_kernel(const float* positions, int64_t seq, float* y, int64_t count,
                                    int64_t dim) {
  const int64_t total = count * dim;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t token = i / dim;
    const int64_t c = i - token * dim;
    y[i] += positions[embedding_math::position_of(token, seq) * dim + c];
  }
}

// One thread per (column, slice of the table's rows): walks the tokens in
// order and adds those whose row is in its slice, so every row sums its
// tokens in token order (as the CPU does) and no two threads write one
// element. The slices give the launch its threads: one per column alone
// (768 for GPT-2) left a 16k-token walk to three blocks.
__global__ void token_backward_kernel(const float* __restrict__ ids, int64_t count,
                                      const float* __restrict__ dy, int64_t begin, int64_t held,
                                      int64_t dim, int64_t slices, float* __restrict__ table_grad) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c >= dim) return;
  const int64_t first = blockIdx.y * held / slices, end = (blockIdx.y + 1) * held / slices;
  for (int64_t token = 0; token < count; ++token) {
    const int64_t row = embedding_math::table_row(ids[token], begin, held);
    if (row >= first && row < end) table_grad[row * dim + c] += dy[token * dim + c];
  }
}

// One thread per (position, column): walks the sequences in order.
__global__ void position_backward_kernel(const float* dy, int64_t count, int64_t seq, int64_t dim,
                                         float* position_grad) {
  const int64_t total = seq * dim;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    for (int64_t token = i / dim; token < count; token += seq)
      position_grad[i] += dy[token * dim + i % dim];
}

}  // namespace

void token_embedding_forward(const float* ids, int64_t count, const float* table, int64_t begin,
                             int64_t held, int64_t dim, float* y, cudaStream_t stream) {
  if (count * dim == 0) return;
  lookup_kernel<<<grid_for(count * dim), kBlockThreads, 0, stream>>>(ids, count, table, begin, held,
                                                                     dim, y);
  PIPELAB_CHECK_LAUNCH();
}

void add_position_embedding(const float* positions, int64_t seq, float* y, int64_t count,
                            int64_t dim, cudaStream_t stream) {
  if (count * dim == 0) return;
  add_position_kernel<<<grid_for(count * dim), kBlockThreads, 0, stream>>>(positions, seq, y, count,
                                                                           dim);
  PIPELAB_CHECK_LAUNCH();
}

void token_embedding_backward(const float* ids, int64_t count, const float* dy, int64_t begin,
                              int64_t held, int64_t dim, float* table_grad, cudaStream_t stream) {
  if (count * dim == 0 || held == 0) return;
  // About 64k threads in all, at most one slice per row.
  const int64_t slices = std::clamp<int64_t>(65536 / dim, 1, std::min<int64_t>(held, 65535));
  const dim3 grid(static_cast<unsigned>((dim + kBlockThreads - 1) / kBlockThreads),
                  static_cast<unsigned>(slices));
  token_backward_kernel<<<grid, kBlockThreads, 0, stream>>>(ids, count, dy, begin, held, dim,
                                                            slices, table_grad);
  PIPELAB_CHECK_LAUNCH();
}

void position_embedding_backward(const float* dy, int64_t count, int64_t seq, int64_t dim,
                                 float* position_grad, cudaStream_t stream) {
  if (count * dim == 0) return;
  position_backward_kernel<<<grid_for(seq * dim), kBlockThreads, 0, stream>>>(dy, count, seq, dim,
                                                                              position_grad);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
