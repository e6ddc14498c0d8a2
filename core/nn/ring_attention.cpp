#include "core/nn/ring_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

constexpr float kNoScore = -std::numeric_limits<float>::infinity();

float dot(const float* a, const float* b, int64_t n) {
  float sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

bool masked(bool causal, int64_t query_position, int64_t key_position) {
  return causal && key_position > query_position;
}

}  // namespace

RingAttentionForward::RingAttentionForward(const float* queries, const int64_t* positions,
                                           int64_t tokens, int64_t head_dim, float scale,
                                           bool causal)
    : queries_(queries),
      positions_(positions),
      tokens_(tokens),
      head_dim_(head_dim),
      scale_(scale),
      causal_(causal),
      max_(static_cast<size_t>(tokens), kNoScore),
      sum_(static_cast<size_t>(tokens), 0.0f),
      acc_(static_cast<size_t>(tokens * head_dim), 0.0f) {}

void RingAttentionForward::add(const AttentionBlock& block) {
  std::vector<float> scores(static_cast<size_t>(block.tokens));
  for (int64_t i = 0; i < tokens_; ++i) {
    const float* q = queries_ + i * head_dim_;
    float block_max = kNoScore;
    for (int64_t j = 0; j < block.tokens; ++j) {
      scores[j] = masked(causal_, positions_[i], block.positions[j])
                      ? kNoScore
                      : scale_ * dot(q, block.keys + j * head_dim_, head_dim_);
      block_max = std::max(block_max, scores[j]);
    }
    if (block_max == kNoScore) continue;  // every key of the block is in this query's future
    // Rescale what the earlier blocks summed to the new max, then add this block's.
    const float new_max = std::max(max_[i], block_max);
    const float rescale = max_[i] == kNoScore ? 0.0f : std::exp(max_[i] - new_max);
    float* acc = acc_.data() + i * head_dim_;
    for (int64_t d = 0; d < head_dim_; ++d) acc[d] *= rescale;
    sum_[i] *= rescale;
    for (int64_t j = 0; j < block.tokens; ++j) {
      if (scores[j] == kNoScore) continue;
      const float weight = std::exp(scores[j] - new_max);
      sum_[i] += weight;
      const float* v = block.values + j * head_dim_;
      for (int64_t d = 0; d < head_dim_; ++d) acc[d] += weight * v[d];
    }
    max_[i] = new_max;
  }
}

void RingAttentionForward::finish(float* output, float* log_sum_exp) const {
  for (int64_t i = 0; i < tokens_; ++i) {
    const float* acc = acc_.data() + i * head_dim_;
    float* out = output + i * head_dim_;
    if (sum_[i] == 0.0f) {
      std::fill(out, out + head_dim_, 0.0f);
      log_sum_exp[i] = kNoScore;
      continue;
    }
    for (int64_t d = 0; d < head_dim_; ++d) out[d] = acc[d] / sum_[i];
    log_sum_exp[i] = max_[i] + std::log(sum_[i]);
  }
}

void ring_attention_block_backward(const RingAttentionGradientInput& input,
                                   const AttentionBlock& block, float* query_grad, float* key_grad,
                                   float* value_grad) {
  const int64_t n = input.head_dim;
  for (int64_t i = 0; i < input.tokens; ++i) {
    if (input.log_sum_exp[i] == kNoScore) continue;  // saw no key: nothing flows back
    const float* q = input.queries + i * n;
    const float* dout = input.output_grad + i * n;
    const float delta = dot(dout, input.output + i * n, n);  // D_i
    float* dq = query_grad + i * n;
    for (int64_t j = 0; j < block.tokens; ++j) {
      if (masked(input.causal, input.positions[i], block.positions[j])) continue;
      const float* k = block.keys + j * n;
      const float* v = block.values + j * n;
      const float p = std::exp(input.scale * dot(q, k, n) - input.log_sum_exp[i]);
      const float ds = p * (dot(dout, v, n) - delta);
      float* dk = key_grad + j * n;
      float* dv = value_grad + j * n;
      for (int64_t d = 0; d < n; ++d) {
        dv[d] += p * dout[d];
        dq[d] += input.scale * ds * k[d];
        dk[d] += input.scale * ds * q[d];
      }
    }
  }
}

}  // namespace pipelab
