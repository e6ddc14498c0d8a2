// The attention softmax's rules (core/nn/attention.h), for the host and the
// device. Probabilities are [batch * heads * seq, seq], row (b heads + h) seq
// + i for query i of head h of sequence b; a causal row i sees keys [0, i].
//   forward   p_j = exp(s_j scale - max) / sum, in float, the sum in double,
//             zero at masked keys
//   backward  ds_j = p_j (dp_j - sum_k p_k dp_k), the dot in double
// Attention-probability dropout (core/nn/block_dropout.h) keys element
// (head seq + query) seq + key of a sample, with head counted in the whole block.
#pragma once

#include <math.h>

#include <cstdint>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::attention_math {

// Keys [0, visible) of query row i are unmasked.
PIPELAB_HOST_DEVICE inline int64_t visible_keys(int64_t query, int64_t seq, bool causal) {
  return causal ? query + 1 : seq;
}

PIPELAB_HOST_DEVICE inline float exp_shifted(float scaled_score, float max_score) {
  return expf(scaled_score - max_score);
}

PIPELAB_HOST_DEVICE inline float softmax_gradient(float p, float dp, float row_dot) {
  return p * (dp - row_dot);
}

// The dropout element of (head, query, key) within a sample.
PIPELAB_HOST_DEVICE inline int64_t dropout_element(int64_t head, int64_t query, int64_t key,
                                                   int64_t seq) {
  return (head * seq + query) * seq + key;
}

}  // namespace pipelab::gpu::attention_math
