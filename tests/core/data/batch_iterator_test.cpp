#include "core/data/batch_iterator.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace pipelab {
namespace {

// Sample i has features {i, -i} and label i % 4.
Dataset numbered_dataset(int64_t samples) {
  Dataset dataset;
  dataset.name = "numbered";
  dataset.samples = samples;
  dataset.features = 2;
  dataset.classes = 4;
  for (int64_t i = 0; i < samples; ++i) {
    dataset.x.push_back(static_cast<float>(i));
    dataset.x.push_back(static_cast<float>(-i));
    dataset.labels.push_back(static_cast<int32_t>(i % 4));
  }
  return dataset;
}

BatchOptions batches_of(int64_t size, uint64_t seed = 1) {
  BatchOptions options;
  options.batch_size = size;
  options.seed = seed;
  return options;
}

TEST(BatchIterator, EveryEpochCoversEverySampleOnce) {
  const Dataset dataset = numbered_dataset(103);
  BatchIterator batches(dataset, batches_of(10));
  EXPECT_EQ(batches.batches_per_epoch(), 11);  // the last batch holds 3
  Batch batch;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int> seen(103, 0);
    for (int64_t index = 0; index < batches.batches_per_epoch(); ++index) {
      EXPECT_EQ(batches.epoch(), epoch);
      batches.next(batch);
      EXPECT_EQ(batch.size, index == 10 ? 3 : 10);
      ASSERT_EQ(batch.x.size(), static_cast<size_t>(batch.size * 2));
      ASSERT_EQ(batch.labels.size(), static_cast<size_t>(batch.size));
      for (int64_t row = 0; row < batch.size; ++row) {
        const auto sample = static_cast<int64_t>(batch.x[row * 2]);
        EXPECT_EQ(batch.x[row * 2 + 1], -static_cast<float>(sample));  // rows stay whole
        EXPECT_EQ(batch.labels[row], sample % 4);                      // labels travel along
        EXPECT_EQ(batch.sample_ids[row], sample);
        ++seen[static_cast<size_t>(sample)];
      }
    }
    for (int count : seen) ASSERT_EQ(count, 1);
  }
  EXPECT_EQ(batches.epoch(), 3);
}

TEST(BatchIterator, OrderDependsOnlyOnSeedAndEpoch) {
  const Dataset dataset = numbered_dataset(50);
  BatchIterator a(dataset, batches_of(8, 7));
  BatchIterator b(dataset, batches_of(8, 7));
  BatchIterator other(dataset, batches_of(8, 8));
  EXPECT_EQ(a.epoch_order(0), b.epoch_order(0));
  EXPECT_NE(a.epoch_order(0), a.epoch_order(1));  // reshuffled each epoch
  EXPECT_NE(a.epoch_order(0), other.epoch_order(0));

  // Random access gives what the stream gives, whatever was read before.
  Batch streamed;
  for (int i = 0; i < 9; ++i) a.next(streamed);  // the ninth: epoch 1, batch 1 (7 per epoch)
  Batch direct;
  b.read(1, 1, direct);
  b.read(0, 4, direct);
  b.read(1, 1, direct);
  EXPECT_EQ(streamed.x, direct.x);
  EXPECT_EQ(streamed.labels, direct.labels);
}

TEST(BatchIterator, WithoutShuffleKeepsDatasetOrder) {
  const Dataset dataset = numbered_dataset(20);
  BatchOptions options = batches_of(6);
  options.shuffle = false;
  BatchIterator batches(dataset, options);
  Batch batch;
  batches.read(3, 1, batch);
  EXPECT_EQ(batch.sample_ids, (std::vector<int64_t>{6, 7, 8, 9, 10, 11}));
}

TEST(BatchIterator, DropLastKeepsEveryBatchFull) {
  const Dataset dataset = numbered_dataset(103);
  BatchOptions options = batches_of(10);
  options.drop_last = true;
  BatchIterator batches(dataset, options);
  EXPECT_EQ(batches.batches_per_epoch(), 10);
  Batch batch;
  for (int i = 0; i < 25; ++i) {
    batches.next(batch);
    ASSERT_EQ(batch.size, 10);
  }
}

TEST(BatchIterator, OneHotTargetsForMse) {
  const Dataset dataset = numbered_dataset(12);
  BatchOptions options = batches_of(5);
  options.encoding = TargetEncoding::OneHot;
  BatchIterator batches(dataset, options);
  Batch batch;
  batches.next(batch);
  EXPECT_TRUE(batch.labels.empty());
  EXPECT_EQ(batch.target_width, 4);
  ASSERT_EQ(batch.targets.size(), 20u);
  for (int64_t row = 0; row < batch.size; ++row) {
    const int64_t label = batch.sample_ids[row] % 4;
    for (int64_t c = 0; c < 4; ++c) {
      EXPECT_EQ(batch.targets[row * 4 + c], c == label ? 1.0f : 0.0f);
    }
  }
}

TEST(BatchIterator, RegressionTargetsAreCopied) {
  Dataset dataset;
  dataset.samples = 3;
  dataset.features = 1;
  dataset.classes = 0;
  dataset.target_width = 2;
  dataset.x = {0, 1, 2};
  dataset.targets = {0, 0.5f, 1, 1.5f, 2, 2.5f};
  BatchOptions options = batches_of(3);
  options.shuffle = false;
  BatchIterator batches(dataset, options);
  Batch batch;
  batches.next(batch);
  EXPECT_EQ(batch.target_width, 2);
  EXPECT_EQ(batch.targets, dataset.targets);
  EXPECT_TRUE(batch.labels.empty());
}

TEST(BatchIterator, SliceCutsMicroBatches) {
  const Dataset dataset = numbered_dataset(16);
  BatchIterator batches(dataset, batches_of(8));
  Batch batch;
  batches.next(batch);
  const Batch second_half = batch.slice(4, 4);
  EXPECT_EQ(second_half.size, 4);
  EXPECT_EQ(std::vector<float>(batch.x.begin() + 8, batch.x.end()), second_half.x);
  EXPECT_EQ(std::vector<int32_t>(batch.labels.begin() + 4, batch.labels.end()), second_half.labels);
  EXPECT_EQ(std::vector<int64_t>(batch.sample_ids.begin() + 4, batch.sample_ids.end()),
            second_half.sample_ids);
}

TEST(BatchIterator, BadSizesThrow) {
  const Dataset dataset = numbered_dataset(5);
  EXPECT_THROW(BatchIterator(dataset, batches_of(0)), DataError);
  BatchOptions too_big = batches_of(6);
  too_big.drop_last = true;
  EXPECT_THROW(BatchIterator(dataset, too_big), DataError);
  EXPECT_EQ(BatchIterator(dataset, batches_of(6)).batches_per_epoch(), 1);
  EXPECT_THROW(BatchIterator(numbered_dataset(0), batches_of(1)), DataError);
}

}  // namespace
}  // namespace pipelab
