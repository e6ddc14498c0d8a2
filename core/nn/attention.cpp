#include "core/nn/attention.h"

#include <cblas.h>

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/nn/blas_int.h"
#include "core/nn/fast_math.h"

namespace pipelab {
namespace {

// Offsets of one (b, h)'s q, k, v in a fused qkv buffer, its output columns and its P.
struct HeadView {
  int64_t q_offset = 0;    // of q(b, 0, h, 0)
  int64_t k_offset = 0;    // of k(b, 0, h, 0)
  int64_t v_offset = 0;    // of v(b, 0, h, 0)
  int64_t out_offset = 0;  // of out(b, 0, h * head_dim)
  int64_t probability_offset = 0;
  bool first_of_group = true;  // the first query head reading its k and v
};

HeadView head_view(const AttentionShape& shape, int64_t b, int64_t h) {
  const int64_t first = b * shape.seq * shape.qkv_width();
  return {first + shape.q_column(h),
          first + shape.k_column(h),
          first + shape.v_column(h),
          b * shape.seq * shape.width() + h * shape.head_dim,
          (b * shape.heads + h) * shape.seq * shape.seq,
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
// [0, i], so each product runs per tile of kCausalTile queries (or of keys, for
// the ones summing over queries) over just the keys (queries) that can be
// unmasked there: at seq 128, 5/8 of the full [seq, seq] work, as the entries
// skipped are zero in P and dS. Smaller tiles skip more but make more small
// sgemm calls; 32 was the fastest at seq 128 and head_dim 32. Without the
// mask one tile covers the whole sequence.
constexpr int64_t kCausalTile = 32;

int64_t tile_size(const AttentionShape& shape) {
  return shape.causal ? std::min(kCausalTile, shape.seq) : shape.seq;
}
// Queries [begin, begin + count) see keys [0, keys_seen).
int64_t keys_seen(const AttentionShape& shape, int64_t begin, int64_t count) {
  return shape.causal ? begin + count : shape.seq;
}
// Keys [begin, ...) are seen by queries [first_query, seq).
int64_t first_query(const AttentionShape& shape, int64_t begin) { return shape.causal ? begin : 0; }

// p [seq, seq] = softmax(q k^T / sqrt(head_dim) + mask) of one head. Entries a
// tile's product skips are masked, and softmax_row writes their zeros.
void head_probabilities(const float* q, const float* k, const AttentionShape& shape, float* p) {
  const int64_t seq = shape.seq;
  const int ld = blas_int(shape.qkv_width());
  const int64_t tile = tile_size(shape);
  for (int64_t begin = 0; begin < seq; begin += tile) {
    const int64_t count = std::min(tile, seq - begin);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(count),
                blas_int(keys_seen(shape, begin, count)), blas_int(shape.head_dim),
                score_scale(shape), q + begin * shape.qkv_width(), ld, k, ld, 0.0f, p + begin * seq,
                blas_int(seq));
  }
  for (int64_t i = 0; i < seq; ++i)
    softmax_row(p + i * seq, shape.causal ? i + 1 : seq, seq);  // keys [0, visible) unmasked
}

void check_shapes(const Tensor& qkv, const AttentionShape& shape) {
  (void)qkv;
  (void)shape;
  assert(shape.batch >= 0 && shape.seq > 0 && shape.heads > 0 && shape.head_dim > 0);
  assert(shape.kv_heads >= 0 && shape.heads % shape.key_value_heads() == 0);
  assert(qkv.rows() == shape.rows() && qkv.cols() == shape.qkv_width());
}

}  // namespace

void attention_forward(const Tensor& qkv, const AttentionShape& shape, Tensor& out,
                       Tensor* probabilities, const BlockDropout* dropout) {
  check_shapes(qkv, shape);
  assert(out.rows() == shape.rows() && out.cols() == shape.width());
  assert(!probabilities ||
         (probabilities->rows() == shape.probability_rows() && probabilities->cols() == shape.seq));
  const int64_t seq = shape.seq;
  if (dropout && !dropout->active()) dropout = nullptr;
  Tensor scratch = probabilities ? Tensor() : Tensor(seq, seq);
  Tensor dropped = dropout ? Tensor(seq, seq) : Tensor();
  const int64_t tile = tile_size(shape);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const HeadView view = head_view(shape, b, h);
      float* p = probabilities ? probabilities->data() + view.probability_offset : scratch.data();
      head_probabilities(qkv.data() + view.q_offset, qkv.data() + view.k_offset, shape, p);
      const float* weights = p;
      if (dropout) {
        apply_attention_dropout(*dropout, b, shape.first_head + h, seq, p, dropped.data());
        weights = dropped.data();
      }
      // O [seq, head_dim] = P [seq, seq] V [seq, head_dim], written into out's head columns.
      for (int64_t begin = 0; begin < seq; begin += tile) {
        const int64_t count = std::min(tile, seq - begin);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(count),
                    blas_int(shape.head_dim), blas_int(keys_seen(shape, begin, count)), 1.0f,
                    weights + begin * seq, blas_int(seq), qkv.data() + view.v_offset,
                    blas_int(shape.qkv_width()), 0.0f,
                    out.data() + view.out_offset + begin * shape.width(), blas_int(shape.width()));
      }
    }
}

void attention_probabilities(const Tensor& qkv, const AttentionShape& shape,
                             Tensor& probabilities) {
  check_shapes(qkv, shape);
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
  check_shapes(qkv, shape);
  assert(dqkv.same_shape(qkv));
  assert(dout.rows() == shape.rows() && dout.cols() == shape.width());
  assert(!probabilities ||
         (probabilities->rows() == shape.probability_rows() && probabilities->cols() == shape.seq));
  const int64_t seq = shape.seq;
  const int64_t d = shape.head_dim;
  const int s = blas_int(seq);
  const int hd = blas_int(d);
  const int ld_qkv = blas_int(shape.qkv_width());
  const int ld_out = blas_int(shape.width());
  const float scale = score_scale(shape);
  if (dropout && !dropout->active()) dropout = nullptr;
  Tensor dp(seq, seq);
  Tensor recomputed = probabilities ? Tensor() : Tensor(seq, seq);
  Tensor dropped = dropout ? Tensor(seq, seq) : Tensor();
  const int64_t tile = tile_size(shape);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const HeadView view = head_view(shape, b, h);
      const float* q = qkv.data() + view.q_offset;
      const float* k = qkv.data() + view.k_offset;
      const float* v = qkv.data() + view.v_offset;
      const float beta_kv = view.first_of_group ? 0.0f : 1.0f;
      const float* p;
      if (probabilities) {
        p = probabilities->data() + view.probability_offset;
      } else {
        head_probabilities(q, k, shape, recomputed.data());
        p = recomputed.data();
      }
      const float* d_o = dout.data() + view.out_offset;
      float* dq = dqkv.data() + view.q_offset;
      float* dk = dqkv.data() + view.k_offset;
      float* dv = dqkv.data() + view.v_offset;
      const float* weights = p;  // what weighted V in the forward
      if (dropout) {
        apply_attention_dropout(*dropout, b, shape.first_head + h, seq, p, dropped.data());
        weights = dropped.data();
      }
      // dV [seq, d] = W^T dO and dP [seq, seq] = dO V^T, tile by tile (dP's
      // skipped entries are masked, and softmax_backward_row zeroes them).
      for (int64_t begin = 0; begin < seq; begin += tile) {
        const int64_t count = std::min(tile, seq - begin);
        const int64_t from = first_query(shape, begin);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(count), hd,
                    blas_int(seq - from), 1.0f, weights + from * seq + begin, s,
                    d_o + from * ld_out, ld_out, beta_kv, dv + begin * ld_qkv, ld_qkv);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blas_int(count),
                    blas_int(keys_seen(shape, begin, count)), hd, 1.0f, d_o + begin * ld_out,
                    ld_out, v, ld_qkv, 0.0f, dp.row(begin), s);
      }
      if (dropout)
        apply_attention_dropout(*dropout, b, shape.first_head + h, seq, dp.data(), dp.data());
      for (int64_t i = 0; i < seq; ++i)
        softmax_backward_row(p + i * seq, dp.row(i), shape.causal ? i + 1 : seq, seq);
      // dQ [seq, d] = dS K / sqrt(d) and dK [seq, d] = dS^T Q / sqrt(d).
      for (int64_t begin = 0; begin < seq; begin += tile) {
        const int64_t count = std::min(tile, seq - begin);
        const int64_t from = first_query(shape, begin);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(count), hd,
                    blas_int(keys_seen(shape, begin, count)), scale, dp.row(begin), s, k, ld_qkv,
                    0.0f, dq + begin * ld_qkv, ld_qkv);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(count), hd,
                    blas_int(seq - from), scale, dp.row(from) + begin, s, q + from * ld_qkv, ld_qkv,
                    beta_kv, dk + begin * ld_qkv, ld_qkv);
      }
    }
}

}  // namespace pipelab
