// Where the unfused attention's batched GEMMs (gpu/layers/attention.cpp)
// read and write: each call's operands (rows, columns, row stride and the
// stride between the batch's entries) and each sequence's and query-group
// place's offsets, over core/nn/attention.h's layouts (the fused QKV rows,
// packed keys under context parallelism, the output rows, P). Host
// arithmetic: tests/gpu/layers/attention_layout_test.cpp checks every
// element's address against core's indexing without a GPU.
#pragma once

#include <cstdint>

#include "core/nn/attention.h"
#include "gpu/layers/cublas_gemm.h"

namespace pipelab::gpu {

// The batched operands of one sequence's heads, one batched call per place j
// in a query group (attention.h's layout): entry i of the batch is query
// head i g + j (g = group) and its group's k and v, so consecutive entries
// are (g + 2) head_dim columns apart in the QKV rows (2 head_dim in packed
// keys). Without grouping (g = 1) one call covers every head, 3 head_dim
// apart. A sequence has `queries` query rows (seq but under context
// parallelism) and seq key rows.
struct HeadOperands {
  BatchedOperand query;   // q of each entry: [queries, head_dim] in the QKV rows
  BatchedOperand key;     // k or v of each entry: [seq, head_dim] in the key rows
  BatchedOperand out;     // each entry's columns of the output rows
  BatchedOperand square;  // each entry's [queries, seq] block of P
  int64_t groups = 0;     // entries per call: the key/value heads
};

inline HeadOperands head_operands(const AttentionShape& shape) {
  const int64_t seq = shape.seq;
  const int64_t queries = shape.query_count();
  const int64_t d = shape.head_dim;
  const int64_t g = shape.group();
  const int64_t key_stride = shape.packed_keys ? 2 * d : (g + 2) * d;
  return {{queries, d, shape.qkv_width(), (g + 2) * d},
          {seq, d, shape.key_width(), key_stride},
          {queries, d, shape.width(), g * d},
          {queries, seq, seq, g * queries * seq},
          shape.key_value_heads()};
}

// Where query head j of the first group starts: its q, its k and v, its
// output columns and its block of P (per sequence).
struct GroupPlace {
  int64_t q = 0, k = 0, v = 0, out = 0, square = 0;
};

inline GroupPlace group_place(const AttentionShape& shape, int64_t j) {
  const int64_t k = shape.key_column(j);
  return {shape.q_column(j), k, k + shape.head_dim, j * shape.head_dim,
          j * shape.query_count() * shape.seq};
}

// Sequence b's offsets into the query rows, the key rows, the output rows and P.
inline int64_t query_offset(const AttentionShape& shape, int64_t b) {
  return b * shape.query_count() * shape.qkv_width();
}
inline int64_t key_offset(const AttentionShape& shape, int64_t b) {
  return b * shape.seq * shape.key_width();
}
inline int64_t out_offset(const AttentionShape& shape, int64_t b) {
  return b * shape.query_count() * shape.width();
}
inline int64_t square_offset(const AttentionShape& shape, int64_t b) {
  return b * shape.heads * shape.query_count() * shape.seq;
}

}  // namespace pipelab::gpu
