// Fused attention on the device (flash_attention_math.h has the arithmetic):
// one kernel for the forward, two for the backward, none of them with a
// [seq, seq] matrix in global memory. Each thread owns one query row (the
// forward and dQ) or one key row (dK and dV); the rows it reads from the
// others (keys and values, or queries and output gradients) are staged in
// shared memory a tile at a time.
//
// The forward writes the output rows and lse (one float per sequence, head
// and query: [batch * heads * seq]); the backward takes lse back and
// overwrites every column of dqkv. Heads of width 8, 16, 32 or 64 only
// (flash_attention_supports); the callers fall back to the unfused path
// otherwise.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/flash_attention_math.h"

namespace pipelab::gpu::kernels {

bool flash_attention_supports(int64_t head_dim);

void flash_attention_forward(flash_math::FlashInput qkv, const flash_math::FlashLayout& layout,
                             const BlockDropoutKey& dropout, float* out, float* lse,
                             cudaStream_t stream);

// `row_dots` is scratch of lse's size (D_i).
void flash_attention_backward(flash_math::FlashInput qkv, const float* dout, const float* lse,
                              const flash_math::FlashLayout& layout, const BlockDropoutKey& dropout,
                              float* row_dots, float* dqkv, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
