// Token and position embeddings: lookups, scatter-add gradients (against
// central differences), user errors, and vocabulary-parallel shards that sum
// to the whole lookup.
#include "core/nn/embedding.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "core/nn/init.h"
#include "core/nn/tensor_parallel.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

constexpr int64_t kVocab = 8;
constexpr int64_t kDim = 3;
constexpr int64_t kSeq = 3;
// Two sequences of three; id 5 appears twice, so its gradient is a sum.
const std::vector<int32_t> kTokens = {5, 0, 7, 2, 5, 1};

TEST(Embedding, ForwardAddsTokenAndPositionRows) {
  const Tensor tokens_table = random_tensor(kVocab, kDim, 1);
  const Tensor positions = random_tensor(4, kDim, 2);
  Tensor y(6, kDim);
  embedding_forward(kTokens, kSeq, tokens_table, positions, y);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t c = 0; c < kDim; ++c)
      EXPECT_EQ(y.at(i, c), tokens_table.at(kTokens[i], c) + positions.at(i % kSeq, c));
}

TEST(Embedding, BackwardScatterAddsIntoBothTables) {
  Tensor tokens_table = random_tensor(kVocab, kDim, 3);
  Tensor positions = random_tensor(4, kDim, 4);
  const Tensor upstream = random_tensor(6, kDim, 5);
  const auto loss = [&] {
    Tensor y(6, kDim);
    embedding_forward(kTokens, kSeq, tokens_table, positions, y);
    return weighted_sum(y, upstream);
  };
  Tensor token_grad(kVocab, kDim);
  Tensor position_grad(4, kDim);
  embedding_backward(kTokens, kSeq, upstream, token_grad, position_grad);
  expect_gradient_matches(tokens_table, loss, token_grad, "token table");
  expect_gradient_matches(positions, loss, position_grad, "position table");
  // Position 3 is beyond the sequence: no gradient. Token 5 sums rows 0 and 4.
  for (int64_t c = 0; c < kDim; ++c) {
    EXPECT_EQ(position_grad.at(3, c), 0.0f);
    EXPECT_FLOAT_EQ(token_grad.at(5, c), upstream.at(0, c) + upstream.at(4, c));
  }
}

TEST(Embedding, UserErrorsAreExplained) {
  const Tensor tokens_table(kVocab, kDim);
  const Tensor positions(2, kDim);
  Tensor y(6, kDim);
  const std::vector<int32_t> bad = {0, 1, 8, 2, 3, 4};
  EXPECT_THROW(embedding_forward(bad, 2, tokens_table, positions, y), std::invalid_argument);
  try {
    embedding_forward(kTokens, kSeq, tokens_table, positions, y);
    FAIL() << "a sequence longer than the position table must be refused";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("maximum sequence length"), std::string::npos);
  }
  EXPECT_THROW(vocab_shard(kVocab, 3, 0), std::invalid_argument);
  EXPECT_THROW(vocab_shard(kVocab, 2, 2), std::invalid_argument);
}

TEST(Embedding, VocabParallelShardsSumToTheWholeLookup) {
  Tensor full_table(kVocab, kDim);
  init_embedding_table(full_table, 7, RandomStream::TokenEmbedding, 0);
  Tensor positions(kSeq, kDim);
  init_embedding_table(positions, 7, RandomStream::PositionEmbedding, 0);
  Tensor expected(6, kDim);
  embedding_forward(kTokens, kSeq, full_table, positions, expected);
  const Tensor upstream = random_tensor(6, kDim, 8);
  Tensor full_grad(kVocab, kDim);
  token_embedding_backward(kTokens, upstream, whole_vocab(kVocab), full_grad);

  for (int tp : {2, 4}) {
    Tensor summed(6, kDim);
    for (int shard = 0; shard < tp; ++shard) {
      const VocabRange range = vocab_shard(kVocab, tp, shard);
      // A shard initialised for its rows holds exactly those rows of the full table.
      Tensor table(range.rows, kDim);
      init_embedding_table(table, 7, RandomStream::TokenEmbedding, 0, range.begin);
      EXPECT_TRUE(testing::bitwise_equal(
          table, copy_slice(full_table, {range.begin, range.rows, 0, kDim})));
      Tensor partial(6, kDim);
      token_embedding_forward(kTokens, table, range, partial);
      summed.add(partial);  // the all-reduce
      Tensor grad(range.rows, kDim);
      token_embedding_backward(kTokens, upstream, range, grad);
      EXPECT_TRUE(
          testing::bitwise_equal(grad, copy_slice(full_grad, {range.begin, range.rows, 0, kDim})))
          << "tp " << tp << " shard " << shard;
    }
    add_position_embedding(positions, kSeq, summed);
    EXPECT_TRUE(testing::bitwise_equal(summed, expected)) << "tp " << tp;
  }
}

}  // namespace
}  // namespace pipelab
