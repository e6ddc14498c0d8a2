#include "gpu/kernels/embedding.h"

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

// One thread per column: walks the tokens in order, adding each held one.
__global__ void token_backward_kernel(const float* ids, int64_t count, const float* dy,
                                      int64_t begin, int64_t held, int64_t dim,
                                      float* table_grad) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < dim;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x)
    for (int64_t token = 0; token < count; ++token) {
      const int64_t row = embedding_math::table_row(ids[token], begin, held);
      if (row >= 0) table_grad[row * dim + c] += dy[token * dim + c];
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
  lookup_kernel<<<grid_for(count * dim), kBlockThreads, 0, stream>>>(ids, count, table, begin,
                                                                     held, dim, y);
  PIPELAB_CHECK_LAUNCH();
}

void add_position_embedding(const float* positions, int64_t seq, float* y, int64_t count,
                            int64_t dim, cudaStream_t stream) {
  if (count * dim == 0) return;
  add_position_kernel<<<grid_for(count * dim), kBlockThreads, 0, stream>>>(positions, seq, y,
                                                                           count, dim);
  PIPELAB_CHECK_LAUNCH();
}

void token_embedding_backward(const float* ids, int64_t count, const float* dy, int64_t begin,
                              int64_t held, int64_t dim, float* table_grad, cudaStream_t stream) {
  if (count * dim == 0 || held == 0) return;
  token_backward_kernel<<<grid_for(dim), kBlockThreads, 0, stream>>>(ids, count, dy, begin, held,
                                                                     dim, table_grad);
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
