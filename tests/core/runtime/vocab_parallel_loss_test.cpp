// The vocabulary-parallel loss: shards that each hold some logits columns,
// talking only through sums, reproduce one device's loss, accuracy (ties
// included) and gradient.
#include "core/runtime/vocab_parallel_loss.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/nn/tensor_parallel.h"
#include "core/runtime/microbatch_loss.h"
#include "tests/core/nn/nn_test_helpers.h"

namespace pipelab {
namespace {

constexpr int64_t kSamples = 3;
constexpr int64_t kTokens = 4;
constexpr int64_t kVocab = 6;

TEST(VocabParallelLoss, ShardsReproduceOneDevice) {
  // Logits [samples, tokens x vocab] with ties: position 1's maximum appears
  // twice (the label is the second: wrong), position 2's in both halves (the
  // label is the first: right), position 5 is masked out.
  Tensor logits(kSamples, kTokens * kVocab);
  for (int64_t i = 0; i < logits.size(); ++i)
    logits.data()[i] = static_cast<float>((i * 7) % 11) * 0.25f - 1.0f;
  std::vector<int32_t> labels(kSamples * kTokens);
  for (size_t r = 0; r < labels.size(); ++r) labels[r] = static_cast<int32_t>((r * 5) % kVocab);
  const auto set_row = [&](int64_t row, std::vector<float> values) {
    std::copy(values.begin(), values.end(), logits.data() + row * kVocab);
  };
  set_row(1, {0.0f, 3.0f, 0.0f, 3.0f, 0.0f, 1.0f});
  labels[1] = 3;
  set_row(2, {0.0f, 0.0f, 3.0f, 0.0f, 3.0f, 1.0f});
  labels[2] = 2;
  std::vector<uint8_t> mask(labels.size(), 1);
  mask[5] = 0;
  labels[5] = -100;
  MicrobatchTargets targets;
  targets.rows = kSamples;
  targets.tokens = kTokens;
  targets.token_labels = labels;
  targets.loss_mask = mask;
  const double scale = 1.0 / 20.0;
  const LossResult expected = output_loss(LossType::CrossEntropy, logits, targets, scale, true);
  ASSERT_GE(expected.correct, 1);

  for (int tp : {2, 3}) {
    std::vector<LossResult> results(tp);
    testing::HostAllReduce sum(tp);
    std::vector<std::thread> threads;
    for (int k = 0; k < tp; ++k)
      threads.emplace_back([&, k] {
        const VocabRange range = vocab_shard(kVocab, tp, k);
        // This shard's columns of every position's logits.
        Tensor part(kSamples, kTokens * range.rows);
        for (int64_t row = 0; row < kSamples * kTokens; ++row)
          for (int64_t c = 0; c < range.rows; ++c)
            part.data()[row * range.rows + c] = logits.data()[row * kVocab + range.begin + c];
        results[k] = vocab_parallel_token_loss(
            part, targets, scale, true, range, tp, k,
            [&](float* data, int64_t count) { sum(k, data, count); });
      });
    for (std::thread& thread : threads) thread.join();
    for (int k = 0; k < tp; ++k) {
      const VocabRange range = vocab_shard(kVocab, tp, k);
      EXPECT_NEAR(results[k].loss_sum, expected.loss_sum, 1e-5) << "tp " << tp;
      EXPECT_EQ(results[k].samples, expected.samples);
      EXPECT_EQ(results[k].correct, expected.correct) << "tp " << tp << " shard " << k;
      for (int64_t row = 0; row < kSamples * kTokens; ++row)
        for (int64_t c = 0; c < range.rows; ++c)
          EXPECT_NEAR(results[k].grad.data()[row * range.rows + c],
                      expected.grad.data()[row * kVocab + range.begin + c], 1e-7)
              << "tp " << tp << " position " << row << " column " << range.begin + c;
    }
  }
}

}  // namespace
}  // namespace pipelab
