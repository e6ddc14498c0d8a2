#include "core/nn/block_dropout.h"

#include <cassert>

#include "core/nn/counter_rng.h"

namespace pipelab {

uint64_t BlockDropout::site_key(int64_t sample, BlockDropoutSite site) const {
  const uint64_t row = combine_key(
      combine_key(layer_key(seed, RandomStream::Dropout, layer), static_cast<uint64_t>(step)),
      static_cast<uint64_t>(first_sample + sample));
  return combine_key(row, static_cast<uint64_t>(site));
}

bool BlockDropout::keeps(uint64_t site_key, int64_t element) const {
  return unit_float(combine_key(site_key, static_cast<uint64_t>(element))) >= p;
}

void apply_block_dropout(const BlockDropout& dropout, BlockDropoutSite site, int64_t seq, Tensor& x,
                         int64_t first_position, const int64_t* positions) {
  if (!dropout.active()) return;
  assert(seq > 0 && x.rows() % seq == 0);
  const float scale = dropout.scale();
  const int64_t dim = x.cols();
  for (int64_t b = 0; b < x.rows() / seq; ++b) {
    const uint64_t key = dropout.site_key(b, site);
    if (!positions) {
      const int64_t first = first_position * dim;
      float* values = x.row(b * seq);  // the sample's seq rows, contiguous
      for (int64_t e = 0; e < seq * dim; ++e)
        values[e] = dropout.keeps(key, first + e) ? values[e] * scale : 0.0f;
      continue;
    }
    for (int64_t t = 0; t < seq; ++t) {
      const int64_t first = positions[first_position + t] * dim;
      float* values = x.row(b * seq + t);
      for (int64_t c = 0; c < dim; ++c)
        values[c] = dropout.keeps(key, first + c) ? values[c] * scale : 0.0f;
    }
  }
}

void apply_attention_dropout(const BlockDropout& dropout, int64_t sample, int64_t head, int64_t seq,
                             const float* in, float* out, int64_t queries,
                             const int64_t* query_positions) {
  const uint64_t key = dropout.site_key(sample, BlockDropoutSite::AttentionProbabilities);
  const float scale = dropout.scale();
  if (queries == 0) queries = seq;
  for (int64_t i = 0; i < queries; ++i) {
    const int64_t query = query_positions ? query_positions[i] : i;
    const int64_t first = (head * seq + query) * seq;
    for (int64_t j = 0; j < seq; ++j)
      out[i * seq + j] = dropout.keeps(key, first + j) ? in[i * seq + j] * scale : 0.0f;
  }
}

}  // namespace pipelab
