// Blockwise attention (blockwise_attention.h), a context rank's attention one
// key/value block at a time, against attention.h's context-parallel form over
// the whole gathered sequence: the rank's output, its dq, and each block's dk
// and dv at that block's positions. Multi-head and grouped-query, causal and
// not, with dropout, at cp 2 and 4, the blocks in an order other than the
// ring's. (The whole form itself is checked by finite differences in
// attention_test.cpp.)
#include "core/nn/blockwise_attention.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/nn/context_split.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_close;
using testing::random_tensor;

constexpr int64_t kBatch = 2, kSeq = 16;

// Rows at `positions` of every sample of [batch * seq, width] rows.
Tensor rows_at(const Tensor& whole, const std::vector<int64_t>& positions) {
  const int64_t count = static_cast<int64_t>(positions.size());
  Tensor part(kBatch * count, whole.cols());
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t t = 0; t < count; ++t)
      std::copy_n(whole.row(b * kSeq + positions[t]), whole.cols(), part.row(b * count + t));
  return part;
}

void expect_blocks_give_whole_attention(int cp, int rank, int64_t kv_heads, bool causal,
                                        float dropout_p) {
  const std::string what = "cp " + std::to_string(cp) + " rank " + std::to_string(rank) +
                           " kv_heads " + std::to_string(kv_heads) + (causal ? " causal" : "") +
                           " dropout " + std::to_string(dropout_p);
  SCOPED_TRACE(what);
  const std::vector<int64_t> positions = context_positions(kSeq, cp, rank);
  AttentionShape shape{kBatch, kSeq, 4, 4, causal, 4, kv_heads};  // heads 4-7 of the block
  shape.queries = static_cast<int64_t>(positions.size());
  shape.query_positions = positions.data();
  shape.packed_keys = true;
  BlockDropout dropout;
  dropout.p = dropout_p;
  dropout.seed = 9;
  dropout.layer = 2;
  dropout.step = 4;
  dropout.first_sample = 3;
  const Tensor query_qkv = random_tensor(shape.rows(), shape.qkv_width(), 31, -2.0f, 2.0f);
  const Tensor keys = random_tensor(shape.key_rows(), shape.key_width(), 32, -2.0f, 2.0f);
  const Tensor dout = random_tensor(shape.rows(), shape.width(), 33);

  // The whole gathered sequence at once.
  Tensor out(shape.rows(), shape.width());
  attention_forward(query_qkv, keys, shape, out, nullptr, &dropout);
  Tensor dqkv(shape.rows(), shape.qkv_width()), key_grads(keys.rows(), keys.cols());
  attention_backward(query_qkv, keys, nullptr, dout, shape, dqkv, key_grads, &dropout);

  // Block by block, each rank's keys as the ring hands them, last rank first.
  std::vector<std::vector<int64_t>> block_positions;
  std::vector<Tensor> blocks;
  for (int j = cp - 1; j >= 0; --j) {
    block_positions.push_back(context_positions(kSeq, cp, j));
    blocks.push_back(rows_at(keys, block_positions.back()));
  }
  const auto block = [&](size_t n) {
    return KeyValueBlock{&blocks[n], block_positions[n].data(),
                         static_cast<int64_t>(block_positions[n].size())};
  };
  BlockwiseAttentionForward forward(query_qkv, shape, &dropout);
  for (size_t n = 0; n < blocks.size(); ++n) forward.add(block(n));
  Tensor blockwise_out(shape.rows(), shape.width()), lse(shape.probability_rows(), 1);
  forward.finish(blockwise_out, lse);
  expect_close(blockwise_out, out, "output");

  const BlockwiseAttentionGradient input{&query_qkv, &blockwise_out, &lse, &dout, shape, &dropout};
  Tensor blockwise_dqkv(shape.rows(), shape.qkv_width());
  for (size_t n = 0; n < blocks.size(); ++n) {
    Tensor block_grads(blocks[n].rows(), blocks[n].cols());
    blockwise_attention_backward(input, block(n), blockwise_dqkv, block_grads);
    expect_close(block_grads, rows_at(key_grads, block_positions[n]),
                 "dk and dv of block " + std::to_string(n));
  }
  // dq: the q columns (the k and v columns stay as they were, zero here).
  for (int64_t r = 0; r < shape.rows(); ++r)
    for (int64_t h = 0; h < shape.heads; ++h)
      for (int64_t c = 0; c < shape.head_dim; ++c) {
        const int64_t column = shape.q_column(h) + c;
        EXPECT_NEAR(blockwise_dqkv.row(r)[column], dqkv.row(r)[column],
                    1e-5 * (1 + std::fabs(dqkv.row(r)[column])))
            << "dq row " << r << " column " << column;
      }
}

TEST(BlockwiseAttention, BlocksInAnyOrderGiveTheWholeSequencesAttention) {
  for (const bool causal : {true, false})
    for (const int64_t kv_heads : {int64_t{0}, int64_t{2}})
      for (const float p : {0.0f, 0.3f}) {
        expect_blocks_give_whole_attention(2, 0, kv_heads, causal, p);
        expect_blocks_give_whole_attention(4, 3, kv_heads, causal, p);
      }
}

// Before its own block arrives, a causal rank 0 query at position 0 sees no
// key of a later rank's block: it keeps no weight, and finish would give it
// 0 and -infinity; once its own block is added it sees itself.
TEST(BlockwiseAttention, AQueryThatSawNoKeyYetHasNoLogSumExp) {
  const std::vector<int64_t> mine = context_positions(kSeq, 2, 0);   // 0-3, 12-15
  const std::vector<int64_t> other = context_positions(kSeq, 2, 1);  // 4-11
  AttentionShape shape{1, kSeq, 1, 4, true, 0, 0};
  shape.queries = static_cast<int64_t>(mine.size());
  shape.query_positions = mine.data();
  shape.packed_keys = true;
  const Tensor query_qkv = random_tensor(shape.rows(), shape.qkv_width(), 41);
  const Tensor other_keys =
      random_tensor(static_cast<int64_t>(other.size()), shape.key_width(), 42);
  BlockwiseAttentionForward forward(query_qkv, shape, nullptr);
  forward.add({&other_keys, other.data(), static_cast<int64_t>(other.size())});
  Tensor out(shape.rows(), shape.width()), lse(shape.probability_rows(), 1);
  forward.finish(out, lse);
  for (int64_t i = 0; i < 4; ++i) {  // positions 0-3 precede every key of 4-11
    EXPECT_EQ(lse.data()[i], -std::numeric_limits<float>::infinity()) << i;
    for (int64_t c = 0; c < shape.head_dim; ++c) EXPECT_EQ(out.row(i)[c], 0.0f);
  }
  for (int64_t i = 4; i < 8; ++i) EXPECT_TRUE(std::isfinite(lse.data()[i])) << i;  // 12-15
}

}  // namespace
}  // namespace pipelab
