#include "core/nn/attention.h"

#include <cblas.h>

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/nn/blas_int.h"
#include "core/nn/fast_math.h"

namespace pipelab {
namespace {

// Offsets of one (b, h)'s q (in the query rows), k and v (in the key rows),
// its output columns and its P.
struct HeadView {
  int64_t q_offset = 0;    // of q(b, 0, h, 0)
  int64_t k_offset = 0;    // of k(b, 0, h, 0)
  int64_t v_offset = 0;    // of v(b, 0, h, 0)
  int64_t out_offset = 0;  // of out(b, 0, h * head_dim)
  int64_t probability_offset = 0;
  bool first_of_group = true;  // the first query head reading its k and v
};

HeadView head_view(const AttentionShape& shape, int64_t b, int64_t h) {
  const int64_t queries = shape.query_count();
  const int64_t query_first = b * queries * shape.qkv_width();
  const int64_t key_first = b * shape.seq * shape.key_width();
  return {query_first + shape.q_column(h),
          key_first + shape.key_column(h),
          key_first + shape.key_column(h) + shape.head_dim,
          b * queries * shape.width() + h * shape.head_dim,
          (b * shape.heads + h) * queries * shape.seq,
          h % shape.group() == 0};
}

float score_scale(const AttentionShape& shape) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
}

// Sums and maxima over a row go through kLanes interleaved partial results
// (element j to lane j % kLanes), combined at the end: a single running sum or
// max waits on each step's latency, independent lanes vectorise. The lanes are
// written out, so the order of operations is the same in every build.
constexpr int64_t kLanes = 8;

PIPELAB_VECTOR_CLONES float row_max(const float* __restrict__ row, int64_t n) {
  const int64_t full = n - n % kLanes;
  float lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = row[0];
  for (int64_t j = 0; j < full; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = row[j + l] > lanes[l] ? row[j + l] : lanes[l];
  float max_value = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l) max_value = lanes[l] > max_value ? lanes[l] : max_value;
  for (int64_t j = full; j < n; ++j) max_value = row[j] > max_value ? row[j] : max_value;
  return max_value;
}

// The sum of a row in double.
PIPELAB_VECTOR_CLONES double row_sum(const float* __restrict__ row, int64_t n) {
  const int64_t full = n - n % kLanes;
  double lanes[kLanes] = {};
  for (int64_t j = 0; j < full; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += row[j + l];
  double sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
  for (int64_t j = full; j < n; ++j) sum += row[j];
  return sum;
}

// The dot product of two rows in double.
PIPELAB_VECTOR_CLONES double row_dot(const float* __restrict__ a, const float* __restrict__ b,
                                     int64_t n) {
  const int64_t full = n - n % kLanes;
  double lanes[kLanes] = {};
  for (int64_t j = 0; j < full; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(a[j + l]) * b[j + l];
  double dot = 0;
  for (int64_t l = 0; l < kLanes; ++l) dot += lanes[l];
  for (int64_t j = full; j < n; ++j) dot += static_cast<double>(a[j]) * b[j];
  return dot;
}

// One row of scores in place: softmax over its first `visible` entries (the
// exp is fast_math.h's, in two loops so both vectorise), zeros after them.
PIPELAB_VECTOR_CLONES void softmax_row(float* __restrict__ row, int64_t visible, int64_t seq) {
  const float max_score = row_max(row, visible);
  for (int64_t j = 0; j < visible; ++j) row[j] = exp_clamp(row[j] - max_score);
  for (int64_t j = 0; j < visible; ++j) row[j] = exp_reduced(row[j]);
  const float inverse_sum = static_cast<float>(1.0 / row_sum(row, visible));
  for (int64_t j = 0; j < visible; ++j) row[j] *= inverse_sum;
  for (int64_t j = visible; j < seq; ++j) row[j] = 0.0f;
}

// The softmax's backward on one row, in place: ds = p * (ds - sum(p * ds)) over
// the first `visible` entries; the masked ones, where p = 0, become 0.
PIPELAB_VECTOR_CLONES void softmax_backward_row(const float* __restrict__ p, float* __restrict__ ds,
                                                int64_t visible, int64_t seq) {
  const float dot = static_cast<float>(row_dot(p, ds, visible));
  for (int64_t j = 0; j < visible; ++j) ds[j] = p[j] * (ds[j] - dot);
  for (int64_t j = visible; j < seq; ++j) ds[j] = 0.0f;
}

// Tiling of a head's products under the causal mask. Query i sees keys
// [0, position(i)], so each product runs per tile of kCausalTile queries (or
// of keys, for the ones summing over queries) over just the keys (queries)
// that can be unmasked there: at seq 128, 5/8 of the full [seq, seq] work, as
// the entries skipped are zero in P and dS. Smaller tiles skip more but make
// more small sgemm calls; 32 was the fastest at seq 128 and head_dim 32.
// Without the mask one tile covers the whole sequence. Positions increase
// with the query index, so a tile's last query sees the most keys.
constexpr int64_t kCausalTile = 32;

int64_t query_tile(const AttentionShape& shape) {
  return shape.causal ? std::min(kCausalTile, shape.query_count()) : shape.query_count();
}
int64_t key_tile(const AttentionShape& shape) {
  return shape.causal ? std::min(kCausalTile, shape.seq) : shape.seq;
}
// Queries [begin, begin + count) see keys [0, keys_seen).
int64_t keys_seen(const AttentionShape& shape, int64_t begin, int64_t count) {
  return shape.causal ? shape.position(begin + count - 1) + 1 : shape.seq;
}
// Keys [begin, ...) are seen by queries [first_query, queries) only.
int64_t first_query(const AttentionShape& shape, int64_t begin) {
  if (!shape.causal) return 0;
  if (!shape.query_positions) return std::min(begin, shape.query_count());
  const int64_t* positions = shape.query_positions;
  return std::lower_bound(positions, positions + shape.query_count(), begin) - positions;
}
// Keys [0, visible_keys) of query i are unmasked.
int64_t visible_keys(const AttentionShape& shape, int64_t i) {
  return shape.causal ? shape.position(i) + 1 : shape.seq;
}

// p [queries, seq] = softmax(q k^T / sqrt(head_dim) + mask) of one head.
// Entries a tile's product skips are masked, and softmax_row writes their zeros.
void head_probabilities(const float* q, const float* k, const AttentionShape& shape, float* p) {
  const int64_t seq = shape.seq;
  const int64_t queries = shape.query_count();
  const int ld_q = blas_int(shape.qkv_width());
  const int ld_k = blas_int(shape.key_width());
  const int64_t tile = query_tile(shape);
  for (int64_t begin = 0; begin < queries; begin += tile) {
    const int64_t count = std::min(tile, queries - begin);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(count),
                blas_int(keys_seen(shape, begin, count)), blas_int(shape.head_dim),
                score_scale(shape), q + begin * shape.qkv_width(), ld_q, k, ld_k, 0.0f,
                p + begin * seq, blas_int(seq));
  }
  for (int64_t i = 0; i < queries; ++i) softmax_row(p + i * seq, visible_keys(shape, i), seq);
}

// The attention-probability dropout of one (b, h)'s [queries, seq] values.
void drop_head(const BlockDropout& dropout, const AttentionShape& shape, int64_t b, int64_t h,
               const float* in, float* out) {
  apply_attention_dropout(dropout, b, shape.first_head + h, shape.seq, in, out, shape.query_count(),
                          shape.query_positions);
}

void check_shapes(const Tensor& query_qkv, const Tensor& key_qkv, const AttentionShape& shape) {
  (void)query_qkv;
  (void)key_qkv;
  (void)shape;
  assert(shape.batch >= 0 && shape.seq > 0 && shape.heads > 0 && shape.head_dim > 0);
  assert(shape.kv_heads >= 0 && shape.heads % shape.key_value_heads() == 0);
  assert(shape.query_count() <= shape.seq && (shape.queries == 0 || shape.query_positions));
  assert(query_qkv.rows() == shape.rows() && query_qkv.cols() == shape.qkv_width());
  assert(key_qkv.rows() == shape.key_rows() && key_qkv.cols() == shape.key_width());
}

}  // namespace

void attention_forward(const Tensor& qkv, const AttentionShape& shape, Tensor& out,
                       Tensor* probabilities, const BlockDropout* dropout) {
  assert(!shape.packed_keys);
  attention_forward(qkv, qkv, shape, out, probabilities, dropout);
}

// A group's k and v sit side by side in QKV ([q ... | k | v]), so each is one
// run of 2 head_dim values per key/value head and row.
void pack_keys(const Tensor& qkv, const AttentionShape& shape, Tensor& packed) {
  assert(shape.packed_keys && qkv.cols() == shape.qkv_width() &&
         packed.cols() == shape.key_width());
  assert(packed.rows() == qkv.rows());
  const int64_t run = 2 * shape.head_dim;
  for (int64_t r = 0; r < qkv.rows(); ++r)
    for (int64_t g = 0; g < shape.key_value_heads(); ++g) {
      const float* from = qkv.row(r) + shape.k_column(g * shape.group());
      std::copy(from, from + run, packed.row(r) + g * run);
    }
}

void unpack_keys(const Tensor& packed, const AttentionShape& shape, Tensor& qkv) {
  assert(shape.packed_keys && qkv.cols() == shape.qkv_width() &&
         packed.cols() == shape.key_width());
  assert(packed.rows() == qkv.rows());
  const int64_t run = 2 * shape.head_dim;
  for (int64_t r = 0; r < qkv.rows(); ++r)
    for (int64_t g = 0; g < shape.key_value_heads(); ++g) {
      const float* from = packed.row(r) + g * run;
      std::copy(from, from + run, qkv.row(r) + shape.k_column(g * shape.group()));
    }
}

void attention_forward(const Tensor& query_qkv, const Tensor& key_qkv, const AttentionShape& shape,
                       Tensor& out, Tensor* probabilities, const BlockDropout* dropout) {
  check_shapes(query_qkv, key_qkv, shape);
  assert(out.rows() == shape.rows() && out.cols() == shape.width());
  assert(!probabilities ||
         (probabilities->rows() == shape.probability_rows() && probabilities->cols() == shape.seq));
  const int64_t seq = shape.seq;
  const int64_t queries = shape.query_count();
  if (dropout && !dropout->active()) dropout = nullptr;
  Tensor scratch = probabilities ? Tensor() : Tensor(queries, seq);
  Tensor dropped = dropout ? Tensor(queries, seq) : Tensor();
  const int64_t tile = query_tile(shape);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const HeadView view = head_view(shape, b, h);
      float* p = probabilities ? probabilities->data() + view.probability_offset : scratch.data();
      head_probabilities(query_qkv.data() + view.q_offset, key_qkv.data() + view.k_offset, shape,
                         p);
      const float* weights = p;
      if (dropout) {
        drop_head(*dropout, shape, b, h, p, dropped.data());
        weights = dropped.data();
      }
      // O [queries, head_dim] = P [queries, seq] V [seq, head_dim], into out's head columns.
      for (int64_t begin = 0; begin < queries; begin += tile) {
        const int64_t count = std::min(tile, queries - begin);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(count),
                    blas_int(shape.head_dim), blas_int(keys_seen(shape, begin, count)), 1.0f,
                    weights + begin * seq, blas_int(seq), key_qkv.data() + view.v_offset,
                    blas_int(shape.key_width()), 0.0f,
                    out.data() + view.out_offset + begin * shape.width(), blas_int(shape.width()));
      }
    }
}

void attention_probabilities(const Tensor& qkv, const AttentionShape& shape,
                             Tensor& probabilities) {
  check_shapes(qkv, qkv, shape);
  assert(probabilities.rows() == shape.probability_rows() && probabilities.cols() == shape.seq);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const HeadView view = head_view(shape, b, h);
      head_probabilities(qkv.data() + view.q_offset, qkv.data() + view.k_offset, shape,
                         probabilities.data() + view.probability_offset);
    }
}

// Per head, with dS the gradient of the scaled scores and D the dropout mask
// times its scale (all ones without dropout):
//   dV = (P * D)^T dO,  dP = (dO V^T) * D,  dS = P * (dP - rowsum(P * dP)),
//   dQ = dS K / sqrt(d),  dK = dS^T Q / sqrt(d)
// Masked entries have P = 0, so their dS is 0 without a separate mask. Under
// grouped-query attention a group's first head writes its dK and dV and the
// others add to them (beta = 1), in head order.
void attention_backward(const Tensor& qkv, const Tensor* probabilities, const Tensor& dout,
                        const AttentionShape& shape, Tensor& dqkv, const BlockDropout* dropout) {
  assert(!shape.packed_keys);
  attention_backward(qkv, qkv, probabilities, dout, shape, dqkv, dqkv, dropout);
}

void attention_backward(const Tensor& query_qkv, const Tensor& key_qkv, const Tensor* probabilities,
                        const Tensor& dout, const AttentionShape& shape, Tensor& query_dqkv,
                        Tensor& key_dqkv, const BlockDropout* dropout) {
  check_shapes(query_qkv, key_qkv, shape);
  assert(query_dqkv.same_shape(query_qkv) && key_dqkv.same_shape(key_qkv));
  assert(dout.rows() == shape.rows() && dout.cols() == shape.width());
  assert(!probabilities ||
         (probabilities->rows() == shape.probability_rows() && probabilities->cols() == shape.seq));
  const int64_t seq = shape.seq;
  const int64_t queries = shape.query_count();
  const int64_t d = shape.head_dim;
  const int64_t ld_q = shape.qkv_width();
  const int64_t ld_k = shape.key_width();
  const int s = blas_int(seq);
  const int hd = blas_int(d);
  const int lda_q = blas_int(ld_q);
  const int lda_k = blas_int(ld_k);
  const int ld_out = blas_int(shape.width());
  const float scale = score_scale(shape);
  if (dropout && !dropout->active()) dropout = nullptr;
  Tensor dp(queries, seq);
  Tensor recomputed = probabilities ? Tensor() : Tensor(queries, seq);
  Tensor dropped = dropout ? Tensor(queries, seq) : Tensor();
  const int64_t q_tile = query_tile(shape);
  const int64_t k_tile = key_tile(shape);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const HeadView view = head_view(shape, b, h);
      const float* q = query_qkv.data() + view.q_offset;
      const float* k = key_qkv.data() + view.k_offset;
      const float* v = key_qkv.data() + view.v_offset;
      const float beta_kv = view.first_of_group ? 0.0f : 1.0f;
      const float* p;
      if (probabilities) {
        p = probabilities->data() + view.probability_offset;
      } else {
        head_probabilities(q, k, shape, recomputed.data());
        p = recomputed.data();
      }
      const float* d_o = dout.data() + view.out_offset;
      float* dq = query_dqkv.data() + view.q_offset;
      float* dk = key_dqkv.data() + view.k_offset;
      float* dv = key_dqkv.data() + view.v_offset;
      const float* weights = p;  // what weighted V in the forward
      if (dropout) {
        drop_head(*dropout, shape, b, h, p, dropped.data());
        weights = dropped.data();
      }
      // Keys no query here sees (another rank's later chunk under context
      // parallelism) get no gradient from this head: zero rows for a group's first.
      const auto zero_unseen_keys = [&](float* grad, int64_t begin, int64_t count) {
        if (beta_kv != 0.0f) return;
        for (int64_t j = begin; j < begin + count; ++j)
          std::fill(grad + j * ld_k, grad + j * ld_k + d, 0.0f);
      };
      // dV [seq, d] = W^T dO per tile of keys.
      for (int64_t begin = 0; begin < seq; begin += k_tile) {
        const int64_t count = std::min(k_tile, seq - begin);
        const int64_t from = first_query(shape, begin);
        if (from == queries) {
          zero_unseen_keys(dv, begin, count);
          continue;
        }
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(count), hd,
                    blas_int(queries - from), 1.0f, weights + from * seq + begin, s,
                    d_o + from * ld_out, ld_out, beta_kv, dv + begin * ld_k, lda_k);
      }
      // dP [queries, seq] = dO V^T per tile of queries (its skipped entries
      // are masked, and softmax_backward_row zeroes them).
      for (int64_t begin = 0; begin < queries; begin += q_tile) {
        const int64_t count = std::min(q_tile, queries - begin);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(count),
                    blas_int(keys_seen(shape, begin, count)), hd, 1.0f, d_o + begin * ld_out,
                    ld_out, v, lda_k, 0.0f, dp.row(begin), s);
      }
      if (dropout) drop_head(*dropout, shape, b, h, dp.data(), dp.data());
      for (int64_t i = 0; i < queries; ++i)
        softmax_backward_row(p + i * seq, dp.row(i), visible_keys(shape, i), seq);
      // dQ [queries, d] = dS K / sqrt(d) per tile of queries.
      for (int64_t begin = 0; begin < queries; begin += q_tile) {
        const int64_t count = std::min(q_tile, queries - begin);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(count), hd,
                    blas_int(keys_seen(shape, begin, count)), scale, dp.row(begin), s, k, lda_k,
                    0.0f, dq + begin * ld_q, lda_q);
      }
      // dK [seq, d] = dS^T Q / sqrt(d) per tile of keys.
      for (int64_t begin = 0; begin < seq; begin += k_tile) {
        const int64_t count = std::min(k_tile, seq - begin);
        const int64_t from = first_query(shape, begin);
        if (from == queries) {
          zero_unseen_keys(dk, begin, count);
          continue;
        }
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(count), hd,
                    blas_int(queries - from), scale, dp.row(from) + begin, s, q + from * ld_q,
                    lda_q, beta_kv, dk + begin * ld_k, lda_k);
      }
    }
}

}  // namespace pipelab
