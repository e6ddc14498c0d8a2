// The unfused attention's GEMM operands (gpu/layers/attention_layout.h)
// against core/nn/attention.h's indexing, element by element, without a
// GPU: for every sequence b, place j of a query group and entry i of a
// batched call (query head h = i g + j), the address an operand gives to
// row r, column c is the one core reads for that head's q, k, v, output or
// P. Multi-head, grouped-query and multi-query attention, each also in
// context parallelism's form (a rank's queries, the whole sequence's packed
// keys). And the strided copies that pack a rank's k and v for the
// context-parallel gather (gpu/layers/context_split.h) against core's pack_keys.
#include "gpu/layers/attention_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/nn/context_split.h"
#include "gpu/layers/context_split.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

int64_t address(const BatchedOperand& operand, int64_t start, int64_t entry, int64_t row,
                int64_t column) {
  return start + entry * operand.stride + row * operand.ld + column;
}

void expect_operands_address_core(const AttentionShape& shape, const std::string& what) {
  SCOPED_TRACE(what);
  const HeadOperands op = head_operands(shape);
  const int64_t g = shape.group(), d = shape.head_dim, queries = shape.query_count();
  ASSERT_EQ(op.groups * g, shape.heads);
  ASSERT_EQ(op.query.rows, queries);
  ASSERT_EQ(op.key.rows, shape.seq);
  ASSERT_EQ(op.square.cols, shape.seq);
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t j = 0; j < g; ++j) {
      const GroupPlace at = group_place(shape, j);
      for (int64_t i = 0; i < op.groups; ++i) {
        const int64_t h = i * g + j;
        for (int64_t c = 0; c < d; ++c) {
          for (int64_t t = 0; t < queries; ++t) {
            const int64_t row = b * queries + t;
            EXPECT_EQ(address(op.query, query_offset(shape, b) + at.q, i, t, c),
                      row * shape.qkv_width() + shape.q_column(h) + c);
            EXPECT_EQ(address(op.out, out_offset(shape, b) + at.out, i, t, c),
                      row * shape.width() + h * d + c);
          }
          for (int64_t t = 0; t < shape.seq; ++t) {
            const int64_t row = b * shape.seq + t;
            EXPECT_EQ(address(op.key, key_offset(shape, b) + at.k, i, t, c),
                      row * shape.key_width() + shape.key_column(h) + c);
            EXPECT_EQ(address(op.key, key_offset(shape, b) + at.v, i, t, c),
                      row * shape.key_width() + shape.key_column(h) + d + c);
          }
        }
        for (int64_t t = 0; t < queries; ++t)
          for (int64_t key = 0; key < shape.seq; ++key)
            EXPECT_EQ(address(op.square, square_offset(shape, b) + at.square, i, t, key),
                      ((b * shape.heads + h) * queries + t) * shape.seq + key);
      }
    }
}

TEST(AttentionLayout, OperandsAddressWhatCoreReads) {
  const std::vector<int64_t> positions = context_positions(8, 2, 1);
  for (const int64_t kv_heads : {int64_t{0}, int64_t{2}, int64_t{1}}) {
    const std::string heads = kv_heads == 0 ? "multi-head" : kv_heads == 1 ? "multi-query" : "gqa";
    AttentionShape whole{2, 8, 4, 6, true, 0, kv_heads};
    expect_operands_address_core(whole, heads);
    AttentionShape rank = whole;
    rank.queries = static_cast<int64_t>(positions.size());
    rank.query_positions = positions.data();
    rank.packed_keys = true;
    expect_operands_address_core(rank, heads + ", a context rank's queries, packed keys");
  }
}

// packed_key_runs' copies, run on the host row by row, give core's packed keys.
TEST(AttentionLayout, PackedKeyRunsCopyWhatCorePacks) {
  for (const int64_t kv_heads : {int64_t{0}, int64_t{2}, int64_t{1}}) {
    SCOPED_TRACE("kv_heads " + std::to_string(kv_heads));
    AttentionShape shape{1, 4, 4, 6, true, 0, kv_heads};
    shape.packed_keys = true;
    const Tensor qkv = testing::random_tensor(shape.rows(), shape.qkv_width(), 5);
    Tensor expected(shape.rows(), shape.key_width());
    pack_keys(qkv, shape, expected);
    Tensor packed(shape.rows(), shape.key_width());
    packed.fill(-1.0f);
    for (const PackedKeyRun& run : packed_key_runs(shape))
      for (int64_t r = 0; r < shape.rows(); ++r)
        std::copy_n(qkv.row(r) + run.qkv_column, run.width, packed.row(r) + run.packed_column);
    EXPECT_EQ(packed.to_vector(), expected.to_vector());
  }
}

}  // namespace
}  // namespace pipelab::gpu
