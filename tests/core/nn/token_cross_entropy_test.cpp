// Token cross-entropy: agreement with softmax_cross_entropy, the masked mean
// and its gradient against central differences, the all-masked case, user
// errors, and vocabulary-parallel shards (tp = 2, 4) that reproduce tp = 1.
#include "core/nn/token_cross_entropy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/nn/loss.h"
#include "core/nn/tensor_parallel.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;

constexpr int64_t kRows = 5;
constexpr int64_t kVocab = 8;
const std::vector<int32_t> kLabels = {3, 0, 7, -100, 5};  // row 3 is padding
const std::vector<uint8_t> kMask = {1, 1, 1, 0, 1};

TEST(TokenCrossEntropy, UnmaskedMatchesSoftmaxCrossEntropy) {
  const Tensor logits = random_tensor(4, kVocab, 1, -4.0f, 4.0f);
  const std::vector<int32_t> labels = {3, 0, 7, 2};
  Tensor grad(4, kVocab);
  const TokenLoss loss = token_cross_entropy(logits, labels, {}, &grad);
  const LossResult reference = softmax_cross_entropy(logits, labels, 1.0 / 4);
  EXPECT_EQ(loss.tokens, 4);
  EXPECT_NEAR(loss.loss, reference.mean_loss(), 1e-6 * reference.mean_loss());
  EXPECT_NEAR(loss.loss_sum, reference.loss_sum, 1e-6 * reference.loss_sum);
  EXPECT_LT(testing::max_abs_difference(grad, reference.grad), 1e-7);
}

TEST(TokenCrossEntropy, MaskedMeanAndGradientMatchFiniteDifferences) {
  Tensor logits = random_tensor(kRows, kVocab, 2, -3.0f, 3.0f);
  Tensor grad(kRows, kVocab);
  const TokenLoss loss = token_cross_entropy(logits, kLabels, kMask, &grad);
  EXPECT_EQ(loss.tokens, 4);
  EXPECT_NEAR(loss.loss, loss.loss_sum / 4, 1e-12);
  for (int64_t c = 0; c < kVocab; ++c) EXPECT_EQ(grad.at(3, c), 0.0f);
  expect_gradient_matches(
      logits, [&] { return token_cross_entropy(logits, kLabels, kMask, nullptr).loss; }, grad,
      "token cross-entropy", 1e-2, 1e-4, 1e-2);
}

TEST(TokenCrossEntropy, AllMaskedGivesZeroLossAndZeroGradient) {
  const Tensor logits = random_tensor(2, kVocab, 3);
  Tensor grad = random_tensor(2, kVocab, 4);  // overwritten
  const std::vector<int32_t> labels = {-100, 99};
  const std::vector<uint8_t> mask = {0, 0};
  const TokenLoss loss = token_cross_entropy(logits, labels, mask, &grad);
  EXPECT_EQ(loss.loss, 0.0);
  EXPECT_EQ(loss.tokens, 0);
  for (int64_t i = 0; i < grad.size(); ++i) EXPECT_EQ(grad.data()[i], 0.0f);
}

TEST(TokenCrossEntropy, UserErrorsAreExplained) {
  const Tensor logits = random_tensor(2, kVocab, 5);
  const std::vector<int32_t> out_of_range = {1, 8};
  EXPECT_THROW(token_cross_entropy(logits, out_of_range, {}, nullptr), std::invalid_argument);
  const std::vector<int32_t> too_few = {1};
  EXPECT_THROW(token_cross_entropy(logits, too_few, {}, nullptr), std::invalid_argument);
  const std::vector<int32_t> labels = {1, 2};
  const std::vector<uint8_t> short_mask = {1};
  EXPECT_THROW(token_cross_entropy(logits, labels, short_mask, nullptr), std::invalid_argument);
}

// Runs the three steps on every shard in lockstep, doing each all-reduce on
// the host between them, and checks the loss and the gathered gradient.
void expect_shards_match_whole(int tp, const Tensor& logits, std::span<const int32_t> labels,
                               std::span<const uint8_t> mask) {
  Tensor expected_grad(kRows, kVocab);
  const TokenLoss expected = token_cross_entropy(logits, labels, mask, &expected_grad);

  std::vector<VocabRange> ranges;
  std::vector<Tensor> shard_logits;
  for (int k = 0; k < tp; ++k) {
    ranges.push_back(vocab_shard(kVocab, tp, k));
    shard_logits.push_back(copy_slice(logits, {0, kRows, ranges[k].begin, ranges[k].rows}));
  }
  std::vector<std::vector<float>> maxima(tp, std::vector<float>(kRows));
  for (int k = 0; k < tp; ++k) vocab_parallel_local_max(shard_logits[k], maxima[k]);
  std::vector<float> global_max(kRows, -INFINITY);
  for (int k = 0; k < tp; ++k)
    for (int64_t r = 0; r < kRows; ++r) global_max[r] = std::max(global_max[r], maxima[k][r]);
  std::vector<std::vector<float>> sums(tp, std::vector<float>(2 * kRows));
  for (int k = 0; k < tp; ++k)
    vocab_parallel_local_sums(shard_logits[k], global_max, labels, mask, ranges[k], sums[k]);
  std::vector<float> global_sums(2 * kRows, 0.0f);
  for (int k = 0; k < tp; ++k)
    for (int64_t i = 0; i < 2 * kRows; ++i) global_sums[i] += sums[k][i];
  for (int k = 0; k < tp; ++k) {
    Tensor grad(kRows, ranges[k].rows);
    const TokenLoss loss = vocab_parallel_finish(shard_logits[k], global_max, global_sums, labels,
                                                 mask, ranges[k], &grad);
    EXPECT_EQ(loss.tokens, expected.tokens);
    EXPECT_NEAR(loss.loss, expected.loss, 1e-6 * std::fabs(expected.loss)) << "tp " << tp;
    const Tensor expected_part =
        copy_slice(expected_grad, {0, kRows, ranges[k].begin, ranges[k].rows});
    for (int64_t i = 0; i < grad.size(); ++i)
      EXPECT_NEAR(grad.data()[i], expected_part.data()[i],
                  1e-6 * std::fabs(expected_part.data()[i]) + 1e-9)
          << "tp " << tp << " shard " << k << " element " << i;
  }
}

TEST(VocabParallelCrossEntropy, ShardsReproduceTheWholeLossAndGradient) {
  const Tensor logits = random_tensor(kRows, kVocab, 6, -5.0f, 5.0f);
  std::vector<int32_t> unpadded = kLabels;
  unpadded[3] = 1;
  for (int tp : {2, 4}) {
    expect_shards_match_whole(tp, logits, kLabels, kMask);
    expect_shards_match_whole(tp, logits, unpadded, {});
  }
}

TEST(VocabParallelCrossEntropy, DriverRunsTheCollectivesBetweenTheSteps) {
  // A tp = 1 driver with identity collectives is token_cross_entropy itself;
  // here the callbacks are counted to show the order: max, then sum.
  const Tensor logits = random_tensor(kRows, kVocab, 7);
  std::vector<char> calls;
  const AllReduceFunction max_reduce = [&](float*, int64_t count) {
    calls.push_back('m');
    EXPECT_EQ(count, kRows);
  };
  const AllReduceFunction sum_reduce = [&](float*, int64_t count) {
    calls.push_back('s');
    EXPECT_EQ(count, 2 * kRows);
  };
  Tensor grad(kRows, kVocab);
  const TokenLoss loss = vocab_parallel_cross_entropy(logits, kLabels, kMask, whole_vocab(kVocab),
                                                      max_reduce, sum_reduce, &grad);
  EXPECT_EQ(calls, (std::vector<char>{'m', 's'}));
  Tensor direct_grad(kRows, kVocab);
  EXPECT_EQ(loss.loss, token_cross_entropy(logits, kLabels, kMask, &direct_grad).loss);
  EXPECT_TRUE(testing::bitwise_equal(grad, direct_grad));
  Tensor wrong(kRows, 4);
  EXPECT_THROW(vocab_parallel_cross_entropy(logits, kLabels, kMask, vocab_shard(kVocab, 2, 0),
                                            max_reduce, sum_reduce, &wrong),
               std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
