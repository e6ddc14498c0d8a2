#include "core/nn/blockwise_attention.h"

#include <cblas.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "core/nn/blas_int.h"
#include "core/nn/fast_math.h"

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

// Queries run in tiles of kQueryTile: each tile's products cover only the
// block keys its last query sees (a block's positions increase, so a causal
// query sees a prefix of them), as attention.cpp's tiles skip masked work.
constexpr int64_t kQueryTile = 32;

// How many of the block's keys query `i` sees: under the causal mask those at
// or before its position (a prefix), else all.
int64_t visible_keys(const AttentionShape& shape, const KeyValueBlock& block, int64_t i) {
  if (!shape.causal) return block.tokens;
  const int64_t* end = block.positions + block.tokens;
  return std::upper_bound(block.positions, end, shape.position(i)) - block.positions;
}

// [count, visible] scores of queries [first, first + count) against the
// block's first `visible` keys: scale q k^T, row stride `visible`.
void tile_scores(const AttentionShape& shape, const float* q, const float* k, int64_t first,
                 int64_t count, int64_t visible, float* scores) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(count), blas_int(visible),
              blas_int(shape.head_dim), score_scale(shape), q + first * shape.qkv_width(),
              blas_int(shape.qkv_width()), k, blas_int(shape.key_width()), 0.0f, scores,
              blas_int(visible));
}

// values[j] = exp(values[j] - shift) for j < n (fast_math.h's exp, in two
// loops so both vectorise); their sum.
PIPELAB_VECTOR_CLONES double exp_shifted_sum(float* __restrict__ values, int64_t n, float shift) {
  for (int64_t j = 0; j < n; ++j) values[j] = exp_clamp(values[j] - shift);
  for (int64_t j = 0; j < n; ++j) values[j] = exp_reduced(values[j]);
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += values[j];
  return sum;
}

// Multiplies row i's first n entries by the dropout mask (times its scale) of
// query i of (sample b, head h) against the block's keys; nothing without dropout.
void apply_dropout(const AttentionShape& shape, const BlockDropout* dropout, int64_t b, int64_t h,
                   const KeyValueBlock& block, int64_t i, float* row, int64_t n) {
  if (!dropout || !dropout->active()) return;
  const uint64_t key = dropout->site_key(b, BlockDropoutSite::AttentionProbabilities);
  const float scale = dropout->scale();
  // The whole block's head numbers key the masks.
  const int64_t first = ((shape.first_head + h) * shape.seq + shape.position(i)) * shape.seq;
  for (int64_t j = 0; j < n; ++j)
    row[j] = dropout->keeps(key, first + block.positions[j]) ? row[j] * scale : 0.0f;
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
  std::vector<float> weights(static_cast<size_t>(kQueryTile * block.tokens));
  for (int64_t b = 0; b < shape_.batch; ++b)
    for (int64_t h = 0; h < shape_.heads; ++h) {
      const HeadPlace at = head_place(shape_, block.tokens, b, h);
      for (int64_t first = 0; first < queries; first += kQueryTile) {
        const int64_t count = std::min(kQueryTile, queries - first);
        const int64_t tile_visible = visible_keys(shape_, block, first + count - 1);
        if (tile_visible == 0) continue;  // every key of the block is in these queries' future
        tile_scores(shape_, queries_.data() + at.q, block.keys->data() + at.k, first, count,
                    tile_visible, weights.data());
        for (int64_t i = first; i < first + count; ++i) {
          float* row = weights.data() + (i - first) * tile_visible;
          const int64_t visible = visible_keys(shape_, block, i);
          if (visible == 0) {
            std::fill(row, row + tile_visible, 0.0f);
            continue;
          }
          // Rescale what earlier blocks summed to the new maximum, then add this block's.
          const size_t r = static_cast<size_t>(at.row + i);
          const float new_max = std::max(max_[r], *std::max_element(row, row + visible));
          const float rescale = max_[r] == kNoScore ? 0.0f : std::exp(max_[r] - new_max);
          float* acc = acc_.data() + at.out + i * shape_.width();
          for (int64_t c = 0; c < shape_.head_dim; ++c) acc[c] *= rescale;
          const double sum = exp_shifted_sum(row, visible, new_max);
          sum_[r] = sum_[r] * rescale + static_cast<float>(sum);
          max_[r] = new_max;
          std::fill(row + visible, row + tile_visible, 0.0f);
          apply_dropout(shape_, dropout_, b, h, block, i, row, visible);  // what weights v
        }
        // acc += weights v over the keys the tile sees.
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(count),
                    blas_int(shape_.head_dim), blas_int(tile_visible), 1.0f, weights.data(),
                    blas_int(tile_visible), block.keys->data() + at.v, blas_int(shape_.key_width()),
                    1.0f, acc_.data() + at.out + first * shape_.width(), blas_int(shape_.width()));
      }
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
  std::vector<float> p(static_cast<size_t>(kQueryTile * tokens)),
      ds(static_cast<size_t>(kQueryTile * tokens));
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const HeadPlace at = head_place(shape, tokens, b, h);
      const float* q = input.query_qkv->data() + at.q;
      const float* k = block.keys->data() + at.k;
      const float* v = block.keys->data() + at.v;
      const float* d_o = input.dout->data() + at.out;
      float* dq = query_dqkv.data() + at.q;
      float* dk = block_grads.data() + at.k;
      float* dv = block_grads.data() + at.v;
      for (int64_t first = 0; first < queries; first += kQueryTile) {
        const int64_t count = std::min(kQueryTile, queries - first);
        const int64_t tile_visible = visible_keys(shape, block, first + count - 1);
        if (tile_visible == 0) continue;
        tile_scores(shape, q, k, first, count, tile_visible, p.data());
        // ds = dO v^T for now.
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(count),
                    blas_int(tile_visible), hd, 1.0f, d_o + first * shape.width(), ld_out, v, ld_k,
                    0.0f, ds.data(), blas_int(tile_visible));
        for (int64_t i = first; i < first + count; ++i) {
          float* p_row = p.data() + (i - first) * tile_visible;
          float* ds_row = ds.data() + (i - first) * tile_visible;
          const float lse = input.lse->data()[at.row + i];
          const int64_t visible = lse == kNoScore ? 0 : visible_keys(shape, block, i);
          // P = exp(S - L) over the keys query i sees.
          exp_shifted_sum(p_row, visible, lse);
          std::fill(p_row + visible, p_row + tile_visible, 0.0f);
          // D_i = dO_i . O_i; with M the dropout mask, dS = P ((dO v^T) M - D_i),
          // and P M weighs dO into dV.
          const float* o = input.out->data() + at.out + i * shape.width();
          const float* d_o_row = d_o + i * shape.width();
          double dot = 0;
          for (int64_t c = 0; c < shape.head_dim; ++c)
            dot += static_cast<double>(d_o_row[c]) * o[c];
          const float delta = static_cast<float>(dot);
          apply_dropout(shape, input.dropout, b, h, block, i, ds_row, visible);
          for (int64_t j = 0; j < tile_visible; ++j) ds_row[j] = p_row[j] * (ds_row[j] - delta);
          apply_dropout(shape, input.dropout, b, h, block, i, p_row, visible);
        }
        // dV += (P M)^T dO, dK += scale dS^T q, dQ += scale dS k (a group's
        // heads share k and v, so their dK and dV add up).
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(tile_visible), hd,
                    blas_int(count), 1.0f, p.data(), blas_int(tile_visible),
                    d_o + first * shape.width(), ld_out, 1.0f, dv, ld_k);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(tile_visible), hd,
                    blas_int(count), scale, ds.data(), blas_int(tile_visible),
                    q + first * shape.qkv_width(), ld_q, 1.0f, dk, ld_k);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(count), hd,
                    blas_int(tile_visible), scale, ds.data(), blas_int(tile_visible), k, ld_k, 1.0f,
                    dq + first * shape.qkv_width(), ld_q);
      }
    }
}

}  // namespace pipelab
