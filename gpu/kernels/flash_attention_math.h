// Fused attention's arithmetic (FlashAttention, Dao et al. 2022, with
// FlashAttention-2's loop order), for the host and the device: the kernels in
// flash_attention.cu call these per row, and the host tests run the same
// calls in the same order against core/nn's attention.
//
// Forward, per query row i, over its visible keys j in ascending order, with
// an online softmax (no [seq, seq] matrix anywhere):
//   s_j = (q_i . k_j) scale;  when s_j exceeds the running max m, the running
//   sum l and output o shrink by exp(m - s_j) and m = s_j;
//   p = exp(s_j - m);  l += p;  o += p w_ij v_j  (w: the dropout weight)
//   out_i = o / l,  lse_i = m + log(l)
// Backward, with p_ij = exp(s_ij - lse_i) recomputed from the saved lse:
//   dp_ij = w_ij (dO_i . v_j),  D_i = sum_j p_ij dp_ij  (= dO_i . out_i)
//   ds_ij = p_ij (dp_ij - D_i)
//   dq_i = scale sum_j ds_ij k_j,  dk_j = scale sum_i ds_ij q_i,
//   dv_j = sum_i p_ij w_ij dO_i
// Grouped-query attention: key/value head g serves query heads
// [g group, (g + 1) group); its dk and dv sum over them.
// The dropout weight w is 0 for a dropped probability, 1 / (1 - p) for a
// kept one and 1 without dropout, keyed as the unfused path keys it
// (attention_math::dropout_element, the whole block's head number).
#pragma once

#include <math.h>

#include <cstdint>

#include "gpu/device/host_device.h"
#include "gpu/kernels/attention_math.h"
#include "gpu/kernels/bf16_math.h"
#include "gpu/kernels/block_dropout_math.h"

// Unrolled on the device (the per-row arrays then stay in registers); a
// plain loop on the host.
#if defined(__CUDACC__)
#define PIPELAB_FLASH_UNROLL _Pragma("unroll")
#else
#define PIPELAB_FLASH_UNROLL
#endif

namespace pipelab::gpu::flash_math {

// The site number of attention-probability dropout (core/nn/block_dropout.h).
inline constexpr uint64_t kProbabilitySite = 1;

// Where the operands sit: QKV rows [batch * seq, qkv_width] in
// core/nn/attention.h's query-group layout, output rows [batch * seq,
// heads * head_dim], and one float per (sequence, head, query) for lse and D.
struct FlashLayout {
  int64_t batch = 0, seq = 0, heads = 0, head_dim = 0;
  int64_t group = 1;  // query heads per key/value head
  int64_t first_head = 0;
  bool causal = true;
  float scale = 1.0f;

  PIPELAB_HOST_DEVICE int64_t kv_heads() const { return heads / group; }
  PIPELAB_HOST_DEVICE int64_t qkv_width() const { return (heads + 2 * kv_heads()) * head_dim; }
  PIPELAB_HOST_DEVICE int64_t width() const { return heads * head_dim; }
  PIPELAB_HOST_DEVICE int64_t q_column(int64_t h) const {
    return ((h / group) * (group + 2) + h % group) * head_dim;
  }
  // Key/value head g's k (its v follows).
  PIPELAB_HOST_DEVICE int64_t k_column_of_group(int64_t g) const {
    return (g * (group + 2) + group) * head_dim;
  }
  PIPELAB_HOST_DEVICE int64_t qkv_at(int64_t b, int64_t position, int64_t column) const {
    return (b * seq + position) * qkv_width() + column;
  }
  PIPELAB_HOST_DEVICE int64_t out_at(int64_t b, int64_t position, int64_t h) const {
    return (b * seq + position) * width() + h * head_dim;
  }
  PIPELAB_HOST_DEVICE int64_t row_at(int64_t b, int64_t h, int64_t query) const {
    return (b * heads + h) * seq + query;
  }
  // Keys [0, visible) of query i are unmasked; queries [first, seq) see key j.
  PIPELAB_HOST_DEVICE int64_t visible_keys(int64_t query) const {
    return attention_math::visible_keys(query, seq, causal);
  }
  PIPELAB_HOST_DEVICE int64_t first_query_seeing(int64_t key) const { return causal ? key : 0; }
};

// An operand as float32 values or as bf16 bits (bf16-mixed's rounded QKV).
struct FlashInput {
  const float* values = nullptr;
  const uint16_t* bf16 = nullptr;
  PIPELAB_HOST_DEVICE float operator[](int64_t i) const {
    return bf16 ? bf16_math::bf16_bits_to_float(bf16[i]) : values[i];
  }
};

// The dropout weight w of (sequence b, head h, query, key).
PIPELAB_HOST_DEVICE inline float dropout_weight(const BlockDropoutKey& dropout,
                                                const FlashLayout& at, int64_t b, int64_t h,
                                                int64_t query, int64_t key) {
  if (!(dropout.p > 0.0f)) return 1.0f;
  const uint64_t site_key = block_site_key(dropout, b, kProbabilitySite);
  const int64_t element = attention_math::dropout_element(at.first_head + h, query, key, at.seq);
  return block_keeps(site_key, element, dropout.p) ? dropout.scale : 0.0f;
}

template <int D>
PIPELAB_HOST_DEVICE inline float dot(const float* a, const float* b) {
  float sum = 0.0f;
  PIPELAB_FLASH_UNROLL
  for (int c = 0; c < D; ++c) sum += a[c] * b[c];
  return sum;
}

// One query row's running softmax and output.
template <int D>
struct ForwardRow {
  float max = -INFINITY;
  float sum = 0.0f;
  float out[D];
  PIPELAB_HOST_DEVICE ForwardRow() {
    PIPELAB_FLASH_UNROLL
    for (int c = 0; c < D; ++c) out[c] = 0.0f;
  }
};

// Folds key j (its k and v rows) into query row q's state; `weight` is its dropout weight.
template <int D>
PIPELAB_HOST_DEVICE inline void fold_key(ForwardRow<D>& row, const float* q, const float* k,
                                         const float* v, float scale, float weight) {
  const float s = dot<D>(q, k) * scale;
  if (s > row.max) {
    const float shrink = expf(row.max - s);  // 0 for the first key (max is -inf)
    row.sum *= shrink;
    PIPELAB_FLASH_UNROLL
    for (int c = 0; c < D; ++c) row.out[c] *= shrink;
    row.max = s;
  }
  const float p = expf(s - row.max);
  row.sum += p;
  const float weighted = p * weight;
  if (weighted != 0.0f) {
    PIPELAB_FLASH_UNROLL
    for (int c = 0; c < D; ++c) row.out[c] += weighted * v[c];
  }
}

template <int D>
PIPELAB_HOST_DEVICE inline float finish_row(ForwardRow<D>& row) {  // returns lse
  const float inverse = 1.0f / row.sum;
  PIPELAB_FLASH_UNROLL
  for (int c = 0; c < D; ++c) row.out[c] *= inverse;
  return row.max + logf(row.sum);
}

// p_ij from the row's score and saved lse.
template <int D>
PIPELAB_HOST_DEVICE inline float probability(const float* q, const float* k, float scale,
                                             float lse) {
  return expf(dot<D>(q, k) * scale - lse);
}

// D_i's term for key j: p_ij dp_ij, with dp_ij = w (dO_i . v_j).
template <int D>
PIPELAB_HOST_DEVICE inline float row_dot_term(float p, float weight, const float* dout,
                                              const float* v) {
  return weight == 0.0f ? 0.0f : p * weight * dot<D>(dout, v);
}

// ds_ij for key j.
template <int D>
PIPELAB_HOST_DEVICE inline float score_gradient(float p, float weight, const float* dout,
                                                const float* v, float row_dot) {
  const float dp = weight == 0.0f ? 0.0f : weight * dot<D>(dout, v);
  return p * (dp - row_dot);
}

// acc += factor x.
template <int D>
PIPELAB_HOST_DEVICE inline void add_scaled(float* acc, float factor, const float* x) {
  PIPELAB_FLASH_UNROLL
  for (int c = 0; c < D; ++c) acc[c] += factor * x[c];
}

}  // namespace pipelab::gpu::flash_math
