// The attention probabilities' softmax, fused with the score scale and the
// causal mask (attention_math.h has the rules; core/nn/attention.h the
// definition), over [batch * heads * seq, seq] rows, one block per row:
//   scaled_masked_softmax    p = softmax(scale s + mask), zero at masked keys;
//                            `scores` and `probabilities` may be the same buffer
//   softmax_backward         ds = p (dp - rowsum(p dp)), in place over dp
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void scaled_masked_softmax(const float* scores, float* probabilities, int64_t rows, int64_t seq,
                           float scale, bool causal, cudaStream_t stream);
void softmax_backward(const float* probabilities, float* gradient, int64_t rows, int64_t seq,
                      cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
