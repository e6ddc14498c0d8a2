// Embedding kernels (core/nn/embedding.h has the definition; embedding_math.h
// the index rules). Ids are the stage input's floats, `count` of them (batch
// x seq, row-major); y and dy are [count, dim]; a vocabulary shard holds table
// rows [begin, begin + held).
//   token_embedding_forward     y[i] = table[id_i - begin], or zeros when the
//                               shard does not hold id_i
//   add_position_embedding      y[i] += positions[i % seq]
//   token_embedding_backward    table_grad[id_i - begin] += dy[i] for held ids
//   position_embedding_backward position_grad[i % seq] += dy[i]
// The backward kernels give each output element one thread that adds its
// contributions in token order, as the CPU loop does: no atomics, so the
// sums are deterministic and equal the CPU's bit for bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void token_embedding_forward(const float* ids, int64_t count, const float* table, int64_t begin,
                             int64_t held, int64_t dim, float* y, cudaStream_t stream);
void add_position_embedding(const float* positions, int64_t seq, float* y, int64_t count,
                            int64_t dim, cudaStream_t stream);
void token_embedding_backward(const float* ids, int64_t count, const float* dy, int64_t begin,
                              int64_t held, int64_t dim, float* table_grad, cudaStream_t stream);
void position_embedding_backward(const float* dy, int64_t count, int64_t seq, int64_t dim,
                                 float* position_grad, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
