// The attention probabilities' softmax, fused with the score scale and the
// causal mask (attention_math.h has the rules; core/nn/attention.h the
// definition), over [batch * heads * queries, seq] rows (queries = seq but
// under context parallelism; attention_math::QueryRows), one block per row:
//   scaled_masked_softmax    p = softmax(scale s + mask), zero at masked keys;
//                            `scores` and `probabilities` may be the same buffer
//   softmax_backward         ds = p (dp - rowsum(p dp)), in place over dp
// Under bf16-mixed the next GEMM reads these rounded to bf16: given a bf16
// target, the kernel writes the rounded values there too (the forward) or
// instead (the backward, whose float32 ds nothing reads), so no separate
// rounding pass reads the [rows, seq] matrix again.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/attention_math.h"

namespace pipelab::gpu::kernels {

// probabilities_bf16 (null: none) also receives p rounded to bf16; `queries`
// says which query each row is (the causal mask compares its position).
void scaled_masked_softmax(const float* scores, float* probabilities, int64_t rows, int64_t seq,
                           float scale, bool causal, cudaStream_t stream,
                           uint16_t* probabilities_bf16 = nullptr,
                           const attention_math::QueryRows& queries = {});
// gradient_bf16 (null: none) receives ds rounded to bf16 in place of `gradient`,
// which then keeps dp.
void softmax_backward(const float* probabilities, float* gradient, int64_t rows, int64_t seq,
                      cudaStream_t stream, uint16_t* gradient_bf16 = nullptr);

}  // namespace pipelab::gpu::kernels
