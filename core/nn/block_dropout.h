// The three dropouts inside a GPT block, as Megatron-LM places them: on the
// attention probabilities (before they weight V), and on the outputs of proj
// and of ffn2, each before its residual add. Inverted dropout: kept values are
// scaled by 1 / (1 - p).
//
// Masks are counter-based like the dropout layer's (dropout.h), so they are
// never stored: forward, backward and any recompute regenerate them bit for
// bit, and every pipeline, micro-batch, data- or tensor-parallel split draws
// the same ones. Element e of site s for a sample is kept iff
//   unit_float(combine_key(combine_key(combine_key(combine_key(combine_key(
//       layer_key(seed, RandomStream::Dropout, layer), step), sample), s), e))) >= p
// with sample the row's index in the step's whole batch, and
//   s = 1 (attention probabilities): e = (head * seq + query) * seq + key, head
//         counted in the whole block (a tensor-parallel shard adds its offset);
//   s = 2 (after proj), s = 3 (after ffn2): e = position * dim + feature.
#pragma once

#include <cstdint>

#include "core/nn/tensor.h"

namespace pipelab {

enum class BlockDropoutSite : uint64_t {
  AttentionProbabilities = 1,
  AfterProjection = 2,
  AfterFeedForward = 3,
};

// One micro-batch's dropout in one block: p and the key's fields.
struct BlockDropout {
  float p = 0.0f;  // 0: no dropout (evaluation, or none configured)
  uint64_t seed = 0;
  int layer = 0;
  int step = 0;
  int64_t first_sample = 0;  // the micro-batch's row 0 in the step's whole batch

  bool active() const { return p > 0.0f; }
  float scale() const { return static_cast<float>(1.0 / (1.0 - static_cast<double>(p))); }
  // The key prefix of sample `sample` (0-based within the micro-batch) at `site`.
  uint64_t site_key(int64_t sample, BlockDropoutSite site) const;
  bool keeps(uint64_t site_key, int64_t element) const;
};

// x [batch * seq, dim] (row b * seq + t) times the mask of `site` and the
// scale, in place. Being linear, the same call maps a gradient. Under
// sequence parallelism x holds positions [first_position, first_position +
// seq) of each sample. Under context parallelism row t's position is
// positions[first_position + t] (the rank's positions, context_split.h).
void apply_block_dropout(const BlockDropout& dropout, BlockDropoutSite site, int64_t seq, Tensor& x,
                         int64_t first_position = 0, const int64_t* positions = nullptr);

// One head's [queries, seq] values times the attention-probability mask of
// (sample, head), from `in` to `out` (may be the same buffer): every query
// (queries = 0 means seq), or under context parallelism the rank's, row i
// being the query at query_positions[i].
void apply_attention_dropout(const BlockDropout& dropout, int64_t sample, int64_t head, int64_t seq,
                             const float* in, float* out, int64_t queries = 0,
                             const int64_t* query_positions = nullptr);

}  // namespace pipelab
