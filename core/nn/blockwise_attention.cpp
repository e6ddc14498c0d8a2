#include "core/nn/blockwise_attention.h"

#include <cblas.h>

#include <cassert>
#include <cmath>
#include <limits>

#include "core/nn/blas_int.h"

namespace pipelab {
namespace {

constexpr float kNoScore = -std::numeric_limits<float>::infinity();

float score_scale(const AttentionShape& shape) {  // as attention.cpp
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
}

// Where one (sample b, head h)'s values start: its q in the query rows, its k
// and v in a block's rows, its columns of the output rows, and its first
// probability row (the running maxima and sums, the lse).
struct HeadPlace {
  int64_t q = 0, k = 0, v = 0, out = 0, row = 0;
};

HeadPlace head_place(const AttentionShape& shape, int64_t block_tokens, int64_t b, int64_t h) {
  const int64_t queries = shape.query_count();
  const int64_t k = b * block_tokens * shape.key_width() + shape.key_column(h);
  return {b * queries * shape.qkv_width() + shape.q_column(h), k, k + shape.head_dim,
          b * queries * shape.width() + h * shape.head_dim, (b * shape.heads + h) * queries};
}

// [queries, tokens] = scale q k^T for one (sample, head) against a block.
void block_scores(const AttentionShape& shape, const float* q, const float* k, int64_t tokens,
                  float* scores) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(shape.query_count()),
              blas_int(tokens), blas_int(shape.head_dim), score_scale(shape), q,
              blas_int(shape.qkv_width()), k, blas_int(shape.key_width()), 0.0f, scores,
              blas_int(tokens));
}

bool masked(const AttentionShape& shape, int64_t query, const KeyValueBlock& block, int64_t j) {
  return shape.causal && block.positions[j] > shape.position(query);
}

// The dropout mask of one (sample, head) against a block, times its scale:
// [queries, tokens] of scale or 0, or every entry 1 without dropout.
void block_dropout_mask(const AttentionShape& shape, const BlockDropout* dropout, int64_t b,
                        int64_t h, const KeyValueBlock& block, std::vector<float>& mask) {
  const int64_t queries = shape.query_count();
  mask.assign(static_cast<size_t>(queries * block.tokens), 1.0f);
  if (!dropout || !dropout->active()) return;
  const uint64_t key = dropout->site_key(b, BlockDropoutSite::AttentionProbabilities);
  const float scale = dropout->scale();
  const int64_t head = shape.first_head + h;  // the whole block's head numbers key the masks
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < block.tokens; ++j) {
      const int64_t element =
          (head * shape.seq + shape.position(i)) * shape.seq + block.positions[j];
      mask[i * block.tokens + j] = dropout->keeps(key, element) ? scale : 0.0f;
    }
}

}  // namespace

BlockwiseAttentionForward::BlockwiseAttentionForward(const Tensor& query_qkv,
                                                     const AttentionShape& shape,
                                                     const BlockDropout* dropout)
    : queries_(query_qkv),
      shape_(shape),
      dropout_(dropout),
      max_(static_cast<size_t>(shape.probability_rows()), kNoScore),
      sum_(static_cast<size_t>(shape.probability_rows()), 0.0f),
      acc_(shape.rows(), shape.width()) {
  assert(shape.packed_keys && query_qkv.rows() == shape.rows() &&
         query_qkv.cols() == shape.qkv_width());
}

void BlockwiseAttentionForward::add(const KeyValueBlock& block) {
  assert(block.keys->rows() == shape_.batch * block.tokens &&
         block.keys->cols() == shape_.key_width());
  const int64_t queries = shape_.query_count();
  std::vector<float> weights(static_cast<size_t>(queries * block.tokens)), mask;
  for (int64_t b = 0; b < shape_.batch; ++b)
    for (int64_t h = 0; h < shape_.heads; ++h) {
      const HeadPlace at = head_place(shape_, block.tokens, b, h);
      block_scores(shape_, queries_.data() + at.q, block.keys->data() + at.k, block.tokens,
                   weights.data());
      block_dropout_mask(shape_, dropout_, b, h, block, mask);
      for (int64_t i = 0; i < queries; ++i) {
        float* row = weights.data() + i * block.tokens;
        float block_max = kNoScore;
        for (int64_t j = 0; j < block.tokens; ++j)
          if (!masked(shape_, i, block, j)) block_max = std::max(block_max, row[j]);
        if (block_max == kNoScore) {  // every key of the block is in this query's future
          std::fill(row, row + block.tokens, 0.0f);
          continue;
        }
        // Rescale what earlier blocks summed to the new maximum, then add this block's.
        const size_t r = static_cast<size_t>(at.row + i);
        const float new_max = std::max(max_[r], block_max);
        const float rescale = max_[r] == kNoScore ? 0.0f : std::exp(max_[r] - new_max);
        float* acc = acc_.data() + at.out + i * shape_.width();
        for (int64_t c = 0; c < shape_.head_dim; ++c) acc[c] *= rescale;
        double sum = 0;
        for (int64_t j = 0; j < block.tokens; ++j) {
          const float weight = masked(shape_, i, block, j) ? 0.0f : std::exp(row[j] - new_max);
          sum += weight;
          row[j] = weight * mask[i * block.tokens + j];  // what weights v
        }
        sum_[r] = sum_[r] * rescale + static_cast<float>(sum);
        max_[r] = new_max;
      }
      // acc += weights v.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(queries),
                  blas_int(shape_.head_dim), blas_int(block.tokens), 1.0f, weights.data(),
                  blas_int(block.tokens), block.keys->data() + at.v, blas_int(shape_.key_width()),
                  1.0f, acc_.data() + at.out, blas_int(shape_.width()));
    }
}

void BlockwiseAttentionForward::finish(Tensor& out, Tensor& lse) const {
  assert(out.same_shape(acc_) && lse.size() == shape_.probability_rows());
  const int64_t queries = shape_.query_count();
  for (int64_t b = 0; b < shape_.batch; ++b)
    for (int64_t h = 0; h < shape_.heads; ++h) {
      const HeadPlace at = head_place(shape_, 0, b, h);
      for (int64_t i = 0; i < queries; ++i) {
        const size_t r = static_cast<size_t>(at.row + i);
        const float* acc = acc_.data() + at.out + i * shape_.width();
        float* o = out.data() + at.out + i * shape_.width();
        if (sum_[r] == 0.0f) {
          std::fill(o, o + shape_.head_dim, 0.0f);
          lse.data()[r] = kNoScore;
          continue;
        }
        for (int64_t c = 0; c < shape_.head_dim; ++c) o[c] = acc[c] / sum_[r];
        lse.data()[r] = max_[r] + std::log(sum_[r]);
      }
    }
}

void blockwise_attention_backward(const BlockwiseAttentionGradient& input,
                                  const KeyValueBlock& block, Tensor& query_dqkv,
                                  Tensor& block_grads) {
  const AttentionShape& shape = input.shape;
  const int64_t queries = shape.query_count();
  const int64_t tokens = block.tokens;
  assert(block_grads.rows() == shape.batch * tokens && block_grads.cols() == shape.key_width());
  assert(query_dqkv.rows() == shape.rows() && query_dqkv.cols() == shape.qkv_width());
  block_grads.set_zero();
  const float scale = score_scale(shape);
  const int ld_q = blas_int(shape.qkv_width()), ld_k = blas_int(shape.key_width()),
            ld_out = blas_int(shape.width()), hd = blas_int(shape.head_dim);
  std::vector<float> p(static_cast<size_t>(queries * tokens)),
      ds(static_cast<size_t>(queries * tokens)), mask, delta(static_cast<size_t>(queries));
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const HeadPlace at = head_place(shape, tokens, b, h);
      const float* q = input.query_qkv->data() + at.q;
      const float* k = block.keys->data() + at.k;
      const float* v = block.keys->data() + at.v;
      const float* d_o = input.dout->data() + at.out;
      block_scores(shape, q, k, tokens, p.data());
      block_dropout_mask(shape, input.dropout, b, h, block, mask);
      for (int64_t i = 0; i < queries; ++i) {
        const float lse = input.lse->data()[at.row + i];
        const float* o = input.out->data() + at.out + i * shape.width();
        double dot = 0;  // D_i = dO_i . O_i
        for (int64_t c = 0; c < shape.head_dim; ++c)
          dot += static_cast<double>(d_o[i * shape.width() + c]) * o[c];
        delta[i] = static_cast<float>(dot);
        for (int64_t j = 0; j < tokens; ++j) {
          float& value = p[i * tokens + j];
          value = masked(shape, i, block, j) || lse == kNoScore ? 0.0f : std::exp(value - lse);
        }
      }
      // ds = dO v^T for now; the weights that multiplied v are P times the mask.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(queries), blas_int(tokens), hd,
                  1.0f, d_o, ld_out, v, ld_k, 0.0f, ds.data(), blas_int(tokens));
      for (size_t e = 0; e < ds.size(); ++e) {
        const int64_t i = static_cast<int64_t>(e) / tokens;
        ds[e] = p[e] * (ds[e] * mask[e] - delta[i]);  // dS
        p[e] *= mask[e];                              // P M, for dV
      }
      float* dk = block_grads.data() + at.k;
      float* dv = block_grads.data() + at.v;
      // dV += (P M)^T dO, dK += scale dS^T q, dQ += scale dS k (a group's heads
      // share k and v, so their dK and dV add up).
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(tokens), hd, blas_int(queries),
                  1.0f, p.data(), blas_int(tokens), d_o, ld_out, 1.0f, dv, ld_k);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(tokens), hd, blas_int(queries),
                  scale, ds.data(), blas_int(tokens), q, ld_q, 1.0f, dk, ld_k);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(queries), hd,
                  blas_int(tokens), scale, ds.data(), blas_int(tokens), k, ld_k, 1.0f,
                  query_dqkv.data() + at.q, ld_q);
    }
}

}  // namespace pipelab
