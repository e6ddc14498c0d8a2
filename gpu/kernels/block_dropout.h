// The Transformer block's dropout masks (core/nn/block_dropout.h; keys in
// block_dropout_math.h), bit-identical to the CPU's. Being linear, each call
// maps a gradient the same way; `in` may equal `out`.
//   attention_dropout  probabilities [batch * heads * queries, seq] of a shard whose
//                      first head is first_head in the whole block (site 1);
//                      queries = seq but under context parallelism
//                      (attention_math::QueryRows: keyed by the global positions)
//   residual_dropout   x [batch * seq, dim] at site 2 (after proj) or 3 (after ffn2);
//                      under sequence parallelism x holds positions
//                      [first_position, first_position + seq) of each sample;
//                      under context parallelism (`positions`: the rank's global
//                      positions, on the device) positions[first_position + t]
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/attention_math.h"
#include "gpu/kernels/block_dropout_math.h"

namespace pipelab::gpu::kernels {

inline constexpr uint64_t kAttentionSite = 1;
inline constexpr uint64_t kProjectionSite = 2;
inline constexpr uint64_t kFeedForwardSite = 3;

void attention_dropout(const float* in, float* out, int64_t batch, int64_t heads, int64_t seq,
                       int64_t first_head, const BlockDropoutKey& key, cudaStream_t stream,
                       const attention_math::QueryRows& queries = {});
void residual_dropout(const float* in, float* out, int64_t batch, int64_t seq, int64_t dim,
                      uint64_t site, const BlockDropoutKey& key, cudaStream_t stream,
                      int64_t first_position = 0, const int64_t* positions = nullptr);

}  // namespace pipelab::gpu::kernels
