// A sequence set through the shared machinery: shape checks, selecting,
// normalisation (which must leave token ids alone), batches and load_dataset.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/data/batch_iterator.h"
#include "core/data/dataset.h"
#include "core/data/load_dataset.h"
#include "core/data/normalization.h"
#include "core/data/sequence_tasks.h"
#include "core/data/text_corpus.h"
#include "core/data/token_text.h"
#include "tests/core/safe_message.h"

namespace pipelab {
namespace {

using testing::is_safe_message;

// Sample i: inputs i, i+1, i+2 (mod 10), labels the next ids, mask 0 1 1.
Dataset numbered_sequences(int64_t samples) {
  Dataset dataset;
  dataset.name = "numbered";
  dataset.samples = samples;
  dataset.features = 3;
  dataset.vocab = 10;
  for (int64_t i = 0; i < samples; ++i) {
    for (int64_t p = 0; p < 3; ++p) {
      dataset.x.push_back(static_cast<float>((i + p) % 10));
      dataset.token_labels.push_back(static_cast<int32_t>((i + p + 1) % 10));
      dataset.loss_mask.push_back(p == 0 ? 0 : 1);
    }
  }
  return dataset;
}

std::string error_of(const DatasetOptions& options) {
  try {
    load_dataset(options);
  } catch (const DataError& error) {
    EXPECT_TRUE(is_safe_message(error.what()));
    return error.what();
  }
  return "no error";
}

DatasetOptions sequence_options(const std::string& source) {
  DatasetOptions options;
  options.source = source;
  options.samples = 400;
  options.sequence_length = 12;
  options.vocab = 16;
  options.seed = 3;
  return options;
}

TEST(SequenceDataset, ShapeChecksCoverTheTokenFields) {
  const Dataset good = numbered_sequences(6);
  EXPECT_TRUE(has_consistent_shape(good));
  EXPECT_TRUE(good.is_sequence());
  EXPECT_FALSE(good.is_classification());

  const auto broken = [&](auto change) {
    Dataset dataset = good;
    change(dataset);
    return !has_consistent_shape(dataset);
  };
  EXPECT_TRUE(broken([](Dataset& d) { d.token_labels[4] = 10; }));  // past the vocabulary
  EXPECT_TRUE(broken([](Dataset& d) { d.token_labels[4] = -1; }));
  EXPECT_TRUE(broken([](Dataset& d) { d.loss_mask[2] = 2; }));  // a mask is 0 or 1
  EXPECT_TRUE(broken([](Dataset& d) { d.x[1] = 2.5f; }));       // a scaled id
  EXPECT_TRUE(broken([](Dataset& d) { d.x[1] = 10.0f; }));
  EXPECT_TRUE(broken([](Dataset& d) { d.loss_mask.pop_back(); }));
  EXPECT_TRUE(broken([](Dataset& d) { d.token_labels.pop_back(); }));
  EXPECT_TRUE(broken([](Dataset& d) { d.token_text = {"a", "b"}; }));  // neither empty nor vocab
  EXPECT_TRUE(broken([](Dataset& d) { d.labels.assign(6, 0); }));
  EXPECT_TRUE(broken([](Dataset& d) { d.classes = 10; }));
  EXPECT_TRUE(broken([](Dataset& d) { d.target_width = 1; }));
  EXPECT_TRUE(broken([](Dataset& d) { d.vocab = -1; }));

  // The other kinds carry no token fields.
  Dataset classification;
  classification.samples = 1;
  classification.features = 1;
  classification.classes = 2;
  classification.x = {0.5f};
  classification.labels = {1};
  EXPECT_TRUE(has_consistent_shape(classification));
  classification.loss_mask = {1};
  EXPECT_FALSE(has_consistent_shape(classification));
}

TEST(SequenceDataset, SelectingSamplesKeepsTheirRowsTogether) {
  Dataset dataset = numbered_sequences(8);
  dataset.token_text = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  const std::vector<int64_t> picks = {5, 2, 5};
  const Dataset picked = select_samples(dataset, picks);
  EXPECT_TRUE(has_consistent_shape(picked));
  EXPECT_EQ(picked.vocab, 10);
  EXPECT_EQ(picked.token_text, dataset.token_text);
  for (size_t row = 0; row < picks.size(); ++row) {
    for (int64_t p = 0; p < 3; ++p) {
      const size_t from = static_cast<size_t>(picks[row] * 3 + p);
      EXPECT_EQ(picked.x[row * 3 + p], dataset.x[from]);
      EXPECT_EQ(picked.token_labels[row * 3 + p], dataset.token_labels[from]);
      EXPECT_EQ(picked.loss_mask[row * 3 + p], dataset.loss_mask[from]);
    }
  }
  EXPECT_EQ(decode_tokens(picked, std::span<const float>(picked.row(1), 3)), "234");
}

TEST(SequenceDataset, CountsPerTokenCoverOnlyCountedPositions) {
  const Dataset dataset = numbered_sequences(10);
  const auto counts = count_per_class(dataset);
  ASSERT_EQ(counts.size(), 10u);
  // Counted labels are (i + 2) and (i + 3) mod 10 for i in 0..9: each token twice.
  for (int64_t count : counts) EXPECT_EQ(count, 2);
}

TEST(SequenceDataset, NormalisationLeavesTokenIdsAlone) {
  Dataset dataset = numbered_sequences(20);
  const std::vector<float> before = dataset.x;
  for (Normalization mode : {Normalization::Global, Normalization::PerFeature}) {
    const NormalizationStats stats = fit_normalization(dataset, mode);
    EXPECT_EQ(stats.mode, Normalization::None);
    EXPECT_TRUE(stats.mean.empty());
  }
  // Statistics fitted elsewhere are not applied either.
  NormalizationStats global{Normalization::Global, {4.5f}, {2.0f}};
  apply_normalization(global, dataset);
  EXPECT_EQ(dataset.x, before);
}

TEST(SequenceDataset, BatchesCarryTokenLabelsAndMasks) {
  const Dataset dataset = numbered_sequences(23);
  BatchOptions options;
  options.batch_size = 5;
  options.seed = 4;
  options.encoding = TargetEncoding::OneHot;  // does not apply to token targets
  BatchIterator batches(dataset, options);
  Batch batch;
  std::multiset<int64_t> seen;
  for (int64_t index = 0; index < batches.batches_per_epoch(); ++index) {
    batches.read(0, index, batch);
    EXPECT_EQ(batch.features, 3);
    EXPECT_EQ(batch.target_width, 0);
    EXPECT_TRUE(batch.labels.empty());
    EXPECT_TRUE(batch.targets.empty());
    ASSERT_EQ(batch.token_labels.size(), static_cast<size_t>(batch.size * 3));
    ASSERT_EQ(batch.loss_mask.size(), static_cast<size_t>(batch.size * 3));
    for (int64_t row = 0; row < batch.size; ++row) {
      const int64_t sample = batch.sample_ids[row];
      seen.insert(sample);
      for (int64_t p = 0; p < 3; ++p) {
        EXPECT_EQ(batch.x[row * 3 + p], dataset.x[sample * 3 + p]);
        EXPECT_EQ(batch.token_labels[row * 3 + p], dataset.token_labels[sample * 3 + p]);
        EXPECT_EQ(batch.loss_mask[row * 3 + p], dataset.loss_mask[sample * 3 + p]);
      }
    }
  }
  EXPECT_EQ(seen.size(), 23u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 23u);

  // A micro-batch slice keeps the rows aligned.
  batches.read(1, 0, batch);
  const Batch part = batch.slice(2, 2);
  EXPECT_EQ(part.size, 2);
  EXPECT_EQ(std::vector<int32_t>(part.token_labels.begin(), part.token_labels.end()),
            std::vector<int32_t>(batch.token_labels.begin() + 6, batch.token_labels.begin() + 12));
  EXPECT_EQ(std::vector<uint8_t>(part.loss_mask.begin(), part.loss_mask.end()),
            std::vector<uint8_t>(batch.loss_mask.begin() + 6, batch.loss_mask.begin() + 12));
}

TEST(SequenceDataset, ABatchReusedForAnotherKindHoldsOnlyThatKind) {
  Dataset classification;
  classification.samples = 2;
  classification.features = 3;
  classification.classes = 2;
  classification.x = {1, 2, 3, 4, 5, 6};
  classification.labels = {0, 1};
  const Dataset sequences = numbered_sequences(2);
  const std::vector<int64_t> both = {0, 1};
  Batch batch;
  gather_batch(sequences, both, TargetEncoding::Labels, batch);
  gather_batch(classification, both, TargetEncoding::Labels, batch);
  EXPECT_TRUE(batch.token_labels.empty());
  EXPECT_TRUE(batch.loss_mask.empty());
  EXPECT_EQ(batch.labels, (std::vector<int32_t>{0, 1}));
  gather_batch(sequences, both, TargetEncoding::Labels, batch);
  EXPECT_TRUE(batch.labels.empty());
  EXPECT_EQ(batch.token_labels.size(), 6u);
}

TEST(SequenceDataset, LoadDatasetMakesTasksAndSplitsThem) {
  for (const std::string& task : sequence_task_names()) {
    const DataSplit split = load_dataset(sequence_options(task));
    EXPECT_EQ(split.train.samples, 320) << task;
    EXPECT_EQ(split.validation.samples, 80) << task;
    EXPECT_TRUE(split.train.is_sequence());
    EXPECT_EQ(split.train.features, 12);
    EXPECT_EQ(split.train.vocab, 16);
    EXPECT_EQ(split.normalization.mode, Normalization::None);
    EXPECT_TRUE(has_consistent_shape(split.train));
    EXPECT_TRUE(has_consistent_shape(split.validation));
    EXPECT_EQ(split.train.name, task + " train");
  }
  DatasetOptions limited = sequence_options("copy");
  limited.limit = 50;
  EXPECT_EQ(load_dataset(limited).train.samples, 40);
  EXPECT_EQ(load_dataset(limited).train.x, load_dataset(limited).train.x);
}

TEST(SequenceDataset, LoadDatasetReadsTextSplitByPosition) {
  DatasetOptions options = sequence_options("text");
  options.path = std::string(PIPELAB_SOURCE_DIR) + "/LICENSE";
  options.sequence_length = 32;
  options.validation_fraction = 0.1;
  const DataSplit split = load_dataset(options);
  EXPECT_GT(split.train.samples, 900);
  EXPECT_GT(split.validation.samples, 90);
  EXPECT_EQ(split.train.vocab, split.validation.vocab);
  EXPECT_EQ(split.normalization.mode, Normalization::None);
  EXPECT_EQ(split.train.name, "text train");

  // The same split without shuffling, to see where each window came from: no
  // validation window's text appears in the training windows' stretch of the file.
  TextCorpusOptions text;
  text.sequence_length = 32;
  text.validation_fraction = 0.1;
  const DataSplit ordered = load_text_corpus(options.path, text);
  EXPECT_EQ(ordered.train.samples, split.train.samples);
  EXPECT_EQ(ordered.validation.samples, split.validation.samples);
  std::multiset<std::vector<float>> train_rows;
  for (int64_t i = 0; i < ordered.train.samples; ++i) {
    train_rows.emplace(ordered.train.row(i), ordered.train.row(i) + 32);
  }
  for (int64_t i = 0; i < split.train.samples; ++i) {  // a shuffle of the same windows
    const auto found =
        train_rows.find(std::vector<float>(split.train.row(i), split.train.row(i) + 32));
    ASSERT_NE(found, train_rows.end());
    train_rows.erase(found);
  }

  options.limit = 100;
  const DataSplit limited = load_dataset(options);
  EXPECT_EQ(limited.train.samples, 90);
  EXPECT_EQ(limited.validation.samples, 10);

  options.limit = 0;
  options.stride = 8;
  EXPECT_GT(load_dataset(options).train.samples, 3 * split.train.samples);
}

TEST(SequenceDataset, LoadDatasetErrors) {
  DatasetOptions scaled = sequence_options("copy");
  scaled.normalization = Normalization::Global;
  EXPECT_NE(
      error_of(scaled).find("copy: data.normalization is 'global', but a sequence set's inputs "
                            "are token ids, which must not be scaled; use none"),
      std::string::npos);
  scaled.normalization = Normalization::None;
  EXPECT_EQ(error_of(scaled), "no error");

  DatasetOptions text = sequence_options("text");
  EXPECT_NE(error_of(text).find("text: data.path is empty"), std::string::npos);

  DatasetOptions short_sequence = sequence_options("add");
  short_sequence.sequence_length = 3;
  EXPECT_NE(error_of(short_sequence).find("add needs at least 5"), std::string::npos);

  DatasetOptions unknown = sequence_options("palindrome");
  const std::string message = error_of(unknown);
  for (const auto& name : sequence_source_names()) {
    EXPECT_NE(message.find(name), std::string::npos) << name;
  }
}

TEST(SequenceDataset, SourceNames) {
  EXPECT_EQ(sequence_source_names(),
            (std::vector<std::string>{"copy", "reverse", "sort", "add", "text"}));
  for (const auto& name : sequence_source_names()) {
    EXPECT_TRUE(is_sequence_source(name));
    EXPECT_EQ(default_normalization(name), Normalization::None);
  }
  for (const auto& name : dataset_source_names()) EXPECT_FALSE(is_sequence_source(name));
  EXPECT_TRUE(is_file_source("text"));
  EXPECT_FALSE(is_file_source("copy"));
}

}  // namespace
}  // namespace pipelab
