// The attention softmax's rules (core/nn/attention.h), for the host and the
// device. Probabilities are [batch * heads * seq, seq], row (b heads + h) seq
// + i for query i of head h of sequence b; a causal row i sees keys [0, i].
//   forward   p_j = exp(s_j scale - max) / sum, in float, the sum in double,
//             zero at masked keys
//   backward  ds_j = p_j (dp_j - sum_k p_k dp_k), the dot in double
// Attention-probability dropout (core/nn/block_dropout.h) keys element
// (head seq + query) seq + key of a sample, with head counted in the whole block.
//
// Context parallelism (core/nn/attention.h's context-parallel form): a rank's
// rows of P are its `count` queries per (sample, head), [batch * heads *
// count, seq], query i at the global position positions[i]; the causal mask
// and the dropout keys use that position, so every rank draws and masks what
// one device does at the same place.
#pragma once

#include <math.h>

#include <cstdint>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::attention_math {

// Keys [0, visible) of query row i are unmasked.
PIPELAB_HOST_DEVICE inline int64_t visible_keys(int64_t query, int64_t seq, bool causal) {
  return causal ? query + 1 : seq;
}

// The queries of P's rows. Default: every position, row i of a head at i.
struct QueryRows {
  int64_t count = 0;                   // per (sample, head); 0 means seq
  const int64_t* positions = nullptr;  // count global positions (device memory), or null: 0, 1, ...
};

// The global position of the query in row `row` of P.
PIPELAB_HOST_DEVICE inline int64_t query_position(int64_t row, int64_t seq,
                                                  const QueryRows& queries) {
  const int64_t count = queries.count > 0 ? queries.count : seq;
  const int64_t i = row % count;
  return queries.positions ? queries.positions[i] : i;
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
