#include "core/nn/dropout.h"

#include <gtest/gtest.h>

#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::bitwise_equal;
using testing::random_tensor;

constexpr uint64_t kSeed = 7;
constexpr int kLayer = 2;

// Rows [begin, begin + count) of `full`.
Tensor rows_of(const Tensor& full, int64_t begin, int64_t count) {
  Tensor part(count, full.cols());
  for (int64_t r = 0; r < count; ++r)
    for (int64_t c = 0; c < full.cols(); ++c) part.at(r, c) = full.at(begin + r, c);
  return part;
}

TEST(Dropout, MaskDoesNotDependOnTheMicroBatchSplit) {
  DropoutLayer layer(kLayer, 16, 0.3, kSeed, nullptr);
  const Tensor x = random_tensor(12, 16, 1);
  ForwardInfo whole;
  whole.step = 5;
  const Tensor full = layer.forward(x, whole);
  for (int64_t micro_size : {1, 3, 4, 6}) {
    for (int64_t begin = 0; begin < 12; begin += micro_size) {
      ForwardInfo info;
      info.step = 5;
      info.first_sample = begin;
      const Tensor part = layer.forward(rows_of(x, begin, micro_size), info);
      EXPECT_TRUE(bitwise_equal(part, rows_of(full, begin, micro_size)))
          << "micro-batch size " << micro_size << " at " << begin;
    }
  }
}

TEST(Dropout, KeepsAboutOneMinusPAndScalesTheKept) {
  const double p = 0.25;
  DropoutLayer layer(kLayer, 200, p, kSeed, nullptr);
  Tensor ones(50, 200);
  ones.fill(1.0f);
  const Tensor y = layer.forward(ones, {});
  int64_t kept = 0;
  for (float v : y.to_vector()) {
    if (v != 0.0f) {
      ++kept;
      EXPECT_FLOAT_EQ(v, static_cast<float>(1.0 / (1.0 - p)));
    }
  }
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(y.size()), 1.0 - p, 0.02);
}

TEST(Dropout, MaskChangesWithStepLayerAndSeed) {
  const Tensor x = random_tensor(4, 32, 2);
  ForwardInfo step0, step1;
  step1.step = 1;
  DropoutLayer layer(kLayer, 32, 0.5, kSeed, nullptr);
  DropoutLayer other_layer(kLayer + 1, 32, 0.5, kSeed, nullptr);
  DropoutLayer other_seed(kLayer, 32, 0.5, kSeed + 1, nullptr);
  const Tensor base = layer.forward(x, step0);
  EXPECT_TRUE(bitwise_equal(base, layer.forward(x, step0)));
  EXPECT_FALSE(bitwise_equal(base, layer.forward(x, step1)));
  EXPECT_FALSE(bitwise_equal(base, other_layer.forward(x, step0)));
  EXPECT_FALSE(bitwise_equal(base, other_seed.forward(x, step0)));
}

TEST(Dropout, ShardsWithFeatureOffsetsReproduceTheFullMask) {
  const Tensor x = random_tensor(3, 8, 3);
  DropoutLayer full_layer(kLayer, 8, 0.5, kSeed, nullptr);
  const Tensor full = full_layer.forward(x, {});
  for (int shard = 0; shard < 2; ++shard) {
    DropoutLayer shard_layer(kLayer, 4, 0.5, kSeed, nullptr, shard * 4);
    Tensor slice(3, 4);
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) slice.at(r, c) = x.at(r, shard * 4 + c);
    const Tensor y = shard_layer.forward(slice, {});
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(y.at(r, c), full.at(r, shard * 4 + c));
  }
}

TEST(Dropout, EvaluationAndZeroPPassThrough) {
  const Tensor x = random_tensor(3, 5, 4);
  DropoutLayer layer(kLayer, 5, 0.9, kSeed, nullptr);
  ForwardInfo eval;
  eval.training = false;
  EXPECT_TRUE(bitwise_equal(layer.forward(x, eval), x));
  DropoutLayer none(kLayer, 5, 0.0, kSeed, nullptr);
  EXPECT_TRUE(bitwise_equal(none.forward(x, {}), x));
  EXPECT_THROW(DropoutLayer(kLayer, 5, 1.0, kSeed, nullptr), std::invalid_argument);
  EXPECT_THROW(DropoutLayer(kLayer, 5, -0.1, kSeed, nullptr), std::invalid_argument);
}

TEST(Dropout, MatchesItsDocumentedKeyFunction) {
  const Tensor x = random_tensor(2, 6, 5, 1.0f, 2.0f);  // never zero
  ForwardInfo info;
  info.step = 3;
  info.first_sample = 40;
  DropoutLayer layer(kLayer, 6, 0.5, kSeed, nullptr);
  const Tensor y = layer.forward(x, info);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 6; ++c)
      EXPECT_EQ(y.at(r, c) != 0.0f, dropout_keeps(kSeed, kLayer, 3, 40 + r, c, 0.5f));
}

}  // namespace
}  // namespace pipelab
