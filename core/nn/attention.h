// The core of multi-head self-attention, per sequence b and head h:
//   P = softmax(Q K^T / sqrt(head_dim) + mask),   O = P V
// where mask is -inf above the diagonal when causal (token i sees tokens
// j <= i) and 0 otherwise. The projections around it (the fused QKV linear
// and the output projection) are ordinary linears (gpt_block.h).
//
// Layout. The input is the fused QKV projection's output, [batch * seq,
// heads * 3 * head_dim], row b * seq + t for token t of sequence b, and within
// a row one [q | k | v] group of 3 * head_dim columns per head:
//   q(b, t, h, j) = qkv[b * seq + t][(3 h + 0) head_dim + j]
//   k(b, t, h, j) = qkv[b * seq + t][(3 h + 1) head_dim + j]
//   v(b, t, h, j) = qkv[b * seq + t][(3 h + 2) head_dim + j]
// That is q, k and v each laid out [b, s, heads, head_dim] with a row stride
// of 3 * width. Grouping by head (Megatron's layout) makes a tensor-parallel
// shard's heads one contiguous block of the QKV weight's columns, and the
// strided views go straight into sgemm (lda = 3 * width): no copies.
//
// Grouped-query attention (kv_heads < heads; Ainslie et al. 2023): the g =
// heads / kv_heads query heads of a group share one key and one value head,
// and a row holds one [q_0 .. q_{g-1} | k | v] group of (g + 2) head_dim
// columns per key/value head (Megatron-LM's layout for query groups):
//   q(b, t, h, j) = qkv[b * seq + t][(h / g) (g + 2) head_dim + (h % g) head_dim + j]
//   k(b, t, h, j) = qkv[b * seq + t][(h / g) (g + 2) head_dim + g head_dim + j]
//   v(b, t, h, j) = the head_dim columns after k's
// With g = 1 this is the layout above. A shard under tensor parallelism
// holds whole groups (tp divides kv_heads), again one contiguous block. The
// backward sums the gradients of a group's shared k and v over its heads.
// The output is [batch * seq, heads * head_dim], head h in columns
// [h head_dim, (h + 1) head_dim): the order the output projection reads.
//
// What backward needs. Besides qkv, backward needs P: batch * heads * seq^2
// floats, the 5 a s / h term of Korthikanti et al.'s per-layer activation
// count. A caller either keeps P from forward (pass `probabilities`), or
// passes nullptr to forward and backward, which then work one (b, h) at a
// time in a [seq, seq] scratch and backward recomputes that head's P from q
// and k ("selective recompute": one more Q K^T per head, no P kept).
// attention_probabilities recomputes the whole P tensor on its own.
//
// Dropout on the probabilities (block_dropout.h): O = dropout(P) V. P itself
// is what is kept (or recomputed); the mask is regenerated in backward, which
// maps dO V^T through it before the softmax's backward.
//
// Context parallelism (context_split.h): a rank's queries are `queries` of
// the sequence's `seq` positions, at `query_positions` (increasing: its two
// chunks), and its keys and values the whole sequence, gathered from every
// rank in position order. The forward then reads q from the rank's own QKV
// rows ([batch * queries, qkv_width]) and k and v from the gathered ones
// ([batch * seq, key_width]: with packed_keys one [k | v] pair of head_dim
// columns per key/value head, so that only K and V travel); the causal mask
// compares global positions (query i sees keys [0, position(i)]); P is
// [batch * heads * queries, seq]. The backward writes dq into the rank's rows
// and dk and dv into the gathered layout, which the caller reduce-scatters
// home. Without a position list the
// queries are the keys (seq of them, at positions 0..seq - 1) and both reads
// are one tensor.
//
// Every matmul is one cblas_sgemm per (b, h), or under the causal mask one per
// tile of 32 queries (or keys) that skips the masked part; the softmax
// subtracts each row's max before exponentiating, so any finite scores are
// safe, and a causal row always keeps its diagonal, so no row is all masked.
// The exp is fast_math.h's vectorised one (within an ulp of exp).
#pragma once

#include <cstdint>

#include "core/nn/block_dropout.h"
#include "core/nn/tensor.h"

namespace pipelab {

struct AttentionShape {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;  // this shard's heads under tensor parallelism
  int64_t head_dim = 0;
  bool causal = true;
  int64_t first_head = 0;  // the shard's first head in the whole block (keys dropout masks)
  int64_t kv_heads = 0;    // this shard's key/value heads; 0 means heads (no grouping)
  // Context parallelism: this rank's query count and their positions in the
  // sequence (increasing; owned by the caller). 0 and null: every position.
  int64_t queries = 0;
  const int64_t* query_positions = nullptr;
  // Keys and values read from a packed [key_rows, 2 kv_heads head_dim]
  // tensor ([k | v] per key/value head) instead of the QKV layout.
  bool packed_keys = false;

  int64_t query_count() const { return queries > 0 ? queries : seq; }
  int64_t position(int64_t query) const { return query_positions ? query_positions[query] : query; }
  int64_t rows() const { return batch * query_count(); }  // q's and the output's rows
  int64_t key_rows() const { return batch * seq; }
  int64_t width() const { return heads * head_dim; }  // the output's columns
  int64_t key_value_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  int64_t group() const { return heads / key_value_heads(); }  // query heads per k/v head
  int64_t qkv_width() const { return (heads + 2 * key_value_heads()) * head_dim; }
  // The first column of head h's q, and of the k (v follows it) it reads.
  int64_t q_column(int64_t h) const {
    return ((h / group()) * (group() + 2) + h % group()) * head_dim;
  }
  int64_t k_column(int64_t h) const { return ((h / group()) * (group() + 2) + group()) * head_dim; }
  int64_t v_column(int64_t h) const { return k_column(h) + head_dim; }
  // The tensor k and v are read from: its width, and head h's k (v follows).
  int64_t key_width() const { return packed_keys ? 2 * key_value_heads() * head_dim : qkv_width(); }
  int64_t key_column(int64_t h) const {
    return packed_keys ? (h / group()) * 2 * head_dim : k_column(h);
  }
  // P is [batch * heads * queries, seq]; row ((b * heads + h) * queries + i) is query i's.
  int64_t probability_rows() const { return batch * heads * query_count(); }
};

// out [rows, width] from qkv [rows, qkv_width]. When `probabilities` is not
// null it receives P ([probability_rows, seq]; zero above a causal diagonal)
// for attention_backward. `dropout`, when given and active, drops
// probabilities before they weight V.
void attention_forward(const Tensor& qkv, const AttentionShape& shape, Tensor& out,
                       Tensor* probabilities, const BlockDropout* dropout = nullptr);
// Context parallelism: q from `query_qkv` [rows, qkv_width], k and v from
// `key_qkv` [key_rows, key_width].
void attention_forward(const Tensor& query_qkv, const Tensor& key_qkv, const AttentionShape& shape,
                       Tensor& out, Tensor* probabilities, const BlockDropout* dropout = nullptr);

// P alone, from qkv: recomputes what forward would have kept.
void attention_probabilities(const Tensor& qkv, const AttentionShape& shape, Tensor& probabilities);

// dqkv [rows, qkv_width] (overwritten, same layout as qkv) from dout
// [rows, width]. `probabilities` is forward's P, or nullptr to recompute each
// head's P in a scratch; `dropout` is forward's.
void attention_backward(const Tensor& qkv, const Tensor* probabilities, const Tensor& dout,
                        const AttentionShape& shape, Tensor& dqkv,
                        const BlockDropout* dropout = nullptr);
// Context parallelism: dq into `query_dqkv`'s q columns (its k and v columns
// untouched), dk and dv into `key_dqkv` (packed keys: every value written).
// Both tensors may be one only without packed keys (the overload above).
// The k and v columns of `qkv` [rows, qkv_width] as packed keys [rows,
// key_width] (shape.packed_keys), and back (the other columns untouched).
void pack_keys(const Tensor& qkv, const AttentionShape& shape, Tensor& packed);
void unpack_keys(const Tensor& packed, const AttentionShape& shape, Tensor& qkv);

void attention_backward(const Tensor& query_qkv, const Tensor& key_qkv, const Tensor* probabilities,
                        const Tensor& dout, const AttentionShape& shape, Tensor& query_dqkv,
                        Tensor& key_dqkv, const BlockDropout* dropout = nullptr);

}  // namespace pipelab
