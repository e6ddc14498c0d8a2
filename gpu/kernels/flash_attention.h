// Fused attention on the device (flash_attention_math.h has the arithmetic):
// one kernel for the forward, two for the backward, none of them with a
// [seq, seq] matrix in global memory. Two implementations:
//  - bf16 q, k and v (bf16-mixed), heads of width 16, 32, 64 or 128: tensor
//    cores (flash_attention_mma.cu), 64 x 64 tiles of m16n8k16 mma.sync products;
//  - otherwise float32, heads of width 8, 16, 32 or 64
//    (flash_attention.cu): each thread owns one query row (the forward and
//    dQ) or one key row (dK and dV) and the rows it reads from the others are
//    staged in shared memory a tile at a time.
// The forward writes the output rows and lse (one float per sequence, head
// and query: [batch * heads * seq]); the backward takes the forward's output
// and lse back and overwrites every column of dqkv. Other widths are not
// supported (flash_attention_supports): the callers use the unfused path.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/flash_attention_math.h"

namespace pipelab::gpu::kernels {

// Whether heads of `head_dim` run fused, for float32 or bf16 inputs.
bool flash_attention_supports(int64_t head_dim, bool bf16_inputs);

void flash_attention_forward(flash_math::FlashInput qkv, const flash_math::FlashLayout& layout,
                             const BlockDropoutKey& dropout, float* out, float* lse,
                             cudaStream_t stream);

// `out` and `lse` are the forward's (`out` float32, or rounded to bf16 as a
// caller keeps it); `row_dots` is scratch of lse's size (D_i).
void flash_attention_backward(flash_math::FlashInput qkv, flash_math::FlashInput out,
                              const float* dout, const float* lse,
                              const flash_math::FlashLayout& layout, const BlockDropoutKey& dropout,
                              float* row_dots, float* dqkv, cudaStream_t stream);

// The tensor-core kernels alone (bf16 inputs), for the dispatch above and for tests.
bool flash_attention_mma_supports(int64_t head_dim);
void flash_attention_mma_forward(const uint16_t* qkv, const flash_math::FlashLayout& layout,
                                 const BlockDropoutKey& dropout, float* out, float* lse,
                                 cudaStream_t stream);
void flash_attention_mma_backward(const uint16_t* qkv, flash_math::FlashInput out,
                                  const float* dout, const float* lse,
                                  const flash_math::FlashLayout& layout,
                                  const BlockDropoutKey& dropout, float* row_dots, float* dqkv,
                                  cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
