#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/data/normalization.h"
#include "core/data/split.h"

namespace pipelab {
namespace {

// Sample i has features {i, 10 * i} and label i % 3.
Dataset counting_dataset(int64_t samples) {
  Dataset dataset;
  dataset.name = "counting";
  dataset.samples = samples;
  dataset.features = 2;
  dataset.classes = 3;
  for (int64_t i = 0; i < samples; ++i) {
    dataset.x.push_back(static_cast<float>(i));
    dataset.x.push_back(static_cast<float>(10 * i));
    dataset.labels.push_back(static_cast<int32_t>(i % 3));
  }
  return dataset;
}

TEST(Split, FractionSetsTheSizes) {
  const DataSplit split = split_by_fraction(counting_dataset(10000), 0.2);
  EXPECT_EQ(split.train.samples, 8000);
  EXPECT_EQ(split.validation.samples, 2000);
  EXPECT_TRUE(has_consistent_shape(split.train));
  EXPECT_TRUE(has_consistent_shape(split.validation));
  // Without a shuffle the last samples validate.
  EXPECT_EQ(split.validation.x.front(), 8000.0f);
}

TEST(Split, ZeroFractionKeepsEverythingForTraining) {
  const DataSplit split = split_by_fraction(counting_dataset(7), 0.0);
  EXPECT_EQ(split.train.samples, 7);
  EXPECT_EQ(split.validation.samples, 0);
  EXPECT_TRUE(split.validation.x.empty());
}

TEST(Split, BadFractionsThrow) {
  EXPECT_THROW(split_by_fraction(counting_dataset(10), 1.0), DataError);
  EXPECT_THROW(split_by_fraction(counting_dataset(10), -0.1), DataError);
  EXPECT_THROW(split_by_fraction(counting_dataset(10), std::nan("")), DataError);
  EXPECT_THROW(split_by_fraction(counting_dataset(1), 0.9), DataError);  // no training sample left
}

TEST(Split, ShuffleIsASeededPermutation) {
  const Dataset original = counting_dataset(500);
  const Dataset a = shuffle_samples(original, 5);
  const Dataset b = shuffle_samples(original, 5);
  const Dataset c = shuffle_samples(original, 6);
  EXPECT_EQ(a.x, b.x);
  EXPECT_NE(a.x, c.x);
  EXPECT_NE(a.x, original.x);
  std::set<float> seen;
  for (int64_t i = 0; i < a.samples; ++i) {
    const float* row = a.row(i);
    EXPECT_EQ(row[1], 10 * row[0]);  // rows move whole
    EXPECT_EQ(a.labels[static_cast<size_t>(i)], static_cast<int32_t>(row[0]) % 3);  // with labels
    seen.insert(row[0]);
  }
  EXPECT_EQ(seen.size(), 500u);
}

TEST(Split, FirstSamplesCaps) {
  EXPECT_EQ(first_samples(counting_dataset(10), 4).samples, 4);
  EXPECT_EQ(first_samples(counting_dataset(10), 40).samples, 10);
  EXPECT_EQ(first_samples(counting_dataset(10), 0).samples, 0);
}

TEST(Normalization, UsesTrainingStatisticsOnly) {
  Dataset train;
  train.samples = 4;
  train.features = 2;
  train.classes = 2;
  train.x = {0, 100, 2, 100,
             4, 100, 6, 100};  // column 0: mean 3, deviation sqrt(5); column 1 constant
  train.labels = {0, 1, 0, 1};
  Dataset validation = train;
  validation.x = {13, 50, 3, 100, -7, 100, 3, 100};

  const NormalizationStats stats = fit_normalization(train, Normalization::PerFeature);
  ASSERT_EQ(stats.mean.size(), 2u);
  EXPECT_FLOAT_EQ(stats.mean[0], 3.0f);
  EXPECT_FLOAT_EQ(stats.deviation[0], std::sqrt(5.0f));
  EXPECT_FLOAT_EQ(stats.mean[1], 100.0f);
  EXPECT_FLOAT_EQ(stats.deviation[1], 1.0f);  // constant column: only centred

  apply_normalization(stats, train);
  apply_normalization(stats, validation);
  EXPECT_FLOAT_EQ(train.x[0], -3.0f / std::sqrt(5.0f));
  EXPECT_FLOAT_EQ(train.x[1], 0.0f);
  // Validation goes through the training transform, not its own statistics.
  EXPECT_FLOAT_EQ(validation.x[0], 10.0f / std::sqrt(5.0f));
  EXPECT_FLOAT_EQ(validation.x[1], -50.0f);
}

TEST(Normalization, GlobalUsesOneMeanAndDeviation) {
  Dataset train;
  train.samples = 2;
  train.features = 2;
  train.classes = 1;
  train.x = {1, 3, 5, 7};  // mean 4, population variance 5
  train.labels = {0, 0};
  const NormalizationStats stats = fit_normalization(train, Normalization::Global);
  ASSERT_EQ(stats.mean.size(), 1u);
  EXPECT_FLOAT_EQ(stats.mean[0], 4.0f);
  EXPECT_FLOAT_EQ(stats.deviation[0], std::sqrt(5.0f));
  EXPECT_TRUE(fit_normalization(train, Normalization::None).mean.empty());
}

TEST(Normalization, StaysAccurateForLargeOffsets) {
  Dataset train;
  train.samples = 3;
  train.features = 1;
  train.classes = 1;
  train.x = {1e6f - 1, 1e6f, 1e6f + 1};
  train.labels = {0, 0, 0};
  const NormalizationStats stats = fit_normalization(train, Normalization::PerFeature);
  EXPECT_NEAR(stats.deviation[0], std::sqrt(2.0 / 3.0), 1e-5);
}

TEST(Normalization, NamesRoundTrip) {
  for (Normalization mode :
       {Normalization::None, Normalization::Global, Normalization::PerFeature}) {
    EXPECT_EQ(parse_normalization(normalization_name(mode)), mode);
  }
  EXPECT_FALSE(parse_normalization("zscore").has_value());
}

}  // namespace
}  // namespace pipelab
