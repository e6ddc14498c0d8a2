#include "core/data/load_dataset.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_files.h"

namespace pipelab {
namespace {

using test::TempDir;

DatasetOptions synthetic(const std::string& source) {
  DatasetOptions options;
  options.source = source;
  options.samples = 500;
  options.classes = 3;
  options.features = 4;
  options.seed = 21;
  return options;
}

std::string error_of(const DatasetOptions& options) {
  try {
    load_dataset(options);
  } catch (const DataError& error) {
    return error.what();
  }
  return "no error";
}

// An IDX pair of `count` 28x28 images whose label is i % 10 and first pixel i.
void write_mnist_like(const TempDir& dir, const std::string& prefix, uint32_t count) {
  std::vector<uint8_t> pixels = test::pattern_pixels(count * 784);
  std::vector<uint8_t> labels;
  for (uint32_t i = 0; i < count; ++i) {
    pixels[i * 784] = static_cast<uint8_t>(i);
    labels.push_back(static_cast<uint8_t>(i % 10));
  }
  test::write_bytes(dir.file(prefix + "-images-idx3-ubyte.gz"),
                    test::gzip_bytes(test::idx_images_bytes(count, 28, 28, pixels)));
  test::write_bytes(dir.file(prefix + "-labels-idx1-ubyte.gz"),
                    test::gzip_bytes(test::idx_labels_bytes(count, labels)));
}

TEST(LoadDataset, EverySyntheticSourceSplitsByFraction) {
  for (const std::string source : {"spiral", "moons", "circles", "xor", "blobs", "teacher"}) {
    const DataSplit split = load_dataset(synthetic(source));
    EXPECT_EQ(split.train.samples, 400) << source;
    EXPECT_EQ(split.validation.samples, 100) << source;
    EXPECT_EQ(split.train.features, split.validation.features);
    EXPECT_EQ(split.train.classes, split.validation.classes);
    EXPECT_TRUE(has_consistent_shape(split.train));
    EXPECT_TRUE(has_consistent_shape(split.validation));
    EXPECT_EQ(split.normalization.mode, Normalization::None);  // synthetic default
  }
}

TEST(LoadDataset, IsDeterministicAndShuffled) {
  const DataSplit a = load_dataset(synthetic("spiral"));
  const DataSplit b = load_dataset(synthetic("spiral"));
  EXPECT_EQ(a.train.x, b.train.x);
  EXPECT_EQ(a.validation.labels, b.validation.labels);
  // The generator emits labels round-robin; after the shuffle they are mixed.
  bool round_robin = true;
  for (size_t i = 0; i < a.train.labels.size(); ++i) {
    round_robin = round_robin && a.train.labels[i] == static_cast<int32_t>(i % 3);
  }
  EXPECT_FALSE(round_robin);
  DatasetOptions other = synthetic("spiral");
  other.seed = 22;
  EXPECT_NE(load_dataset(other).train.x, a.train.x);
}

TEST(LoadDataset, LimitAndNormalizationOverride) {
  DatasetOptions options = synthetic("blobs");
  options.limit = 50;
  options.normalization = Normalization::PerFeature;
  const DataSplit split = load_dataset(options);
  EXPECT_EQ(split.train.samples, 40);
  EXPECT_EQ(split.validation.samples, 10);
  ASSERT_EQ(split.normalization.mean.size(), 4u);
  for (int64_t f = 0; f < 4; ++f) {
    double sum = 0.0;
    for (int64_t i = 0; i < split.train.samples; ++i) sum += split.train.row(i)[f];
    EXPECT_NEAR(sum / split.train.samples, 0.0, 1e-5);
  }
}

TEST(LoadDataset, CsvIsStandardisedPerFeatureOnTraining) {
  TempDir dir;
  std::string text = "label,a,b\n";
  for (int i = 0; i < 20; ++i) {
    text +=
        std::to_string(i % 2) + "," + std::to_string(i) + "," + std::to_string(1000 + 3 * i) + "\n";
  }
  test::write_text(dir.file("data.csv"), text);
  DatasetOptions options;
  options.source = "csv";
  options.path = dir.file("data.csv");
  options.validation_fraction = 0.25;
  const DataSplit split = load_dataset(options);
  EXPECT_EQ(split.train.samples, 15);
  EXPECT_EQ(split.validation.samples, 5);
  EXPECT_EQ(split.train.classes, 2);
  EXPECT_EQ(split.normalization.mode, Normalization::PerFeature);
  // Column b is 1000 + 3a before scaling, so after per-column standardisation both agree.
  for (int64_t i = 0; i < split.validation.samples; ++i) {
    EXPECT_NEAR(split.validation.row(i)[0], split.validation.row(i)[1], 1e-4);
  }
}

TEST(LoadDataset, FolderWithTrainAndTestKeepsTheOfficialSplit) {
  TempDir dir;
  write_mnist_like(dir, "train", 60);
  write_mnist_like(dir, "t10k", 20);
  DatasetOptions options;
  options.source = "mnist";
  options.path = dir.path();
  options.normalization = Normalization::None;
  const DataSplit split = load_dataset(options);
  EXPECT_EQ(split.train.samples, 60);
  EXPECT_EQ(split.validation.samples, 20);
  EXPECT_EQ(split.train.classes, 10);

  options.limit = 30;
  options.validation_fraction = 0.2;
  const DataSplit limited = load_dataset(options);
  EXPECT_EQ(limited.train.samples, 24);
  EXPECT_EQ(limited.validation.samples, 6);
  // Validation images come from the t10k file (first pixels 0..19).
  for (int64_t i = 0; i < limited.validation.samples; ++i) {
    EXPECT_LT(std::lround(limited.validation.row(i)[0] * 255.0f), 20);
  }

  options.limit = 0;
  options.validation_fraction = 0.0;
  EXPECT_EQ(load_dataset(options).validation.samples, 0);
}

TEST(LoadDataset, FolderWithOneGenericPairIsSplit) {
  TempDir dir;
  write_mnist_like(dir, "digits", 50);
  DatasetOptions options;
  options.source = "idx";
  options.path = dir.path();
  const DataSplit split = load_dataset(options);
  EXPECT_EQ(split.train.samples, 40);
  EXPECT_EQ(split.validation.samples, 10);
  EXPECT_EQ(split.normalization.mode, Normalization::Global);
}

TEST(LoadDataset, ErrorsNameTheProblem) {
  DatasetOptions unknown = synthetic("imagenet");
  const std::string message = error_of(unknown);
  EXPECT_NE(message.find("unknown data.source 'imagenet'"), std::string::npos) << message;
  for (const auto& name : dataset_source_names()) {
    EXPECT_NE(message.find(name), std::string::npos) << name;
  }

  DatasetOptions fraction = synthetic("spiral");
  fraction.validation_fraction = 1.5;
  EXPECT_NE(error_of(fraction).find("data.validation_fraction"), std::string::npos);

  DatasetOptions limit = synthetic("spiral");
  limit.limit = -3;
  EXPECT_NE(error_of(limit).find("data.limit"), std::string::npos);

  TempDir dir;
  DatasetOptions missing;
  missing.source = "fashion-mnist";
  missing.path = dir.file("nowhere");
  EXPECT_NE(error_of(missing).find("folder not found"), std::string::npos);

  DatasetOptions csv;
  csv.source = "csv";
  EXPECT_NE(error_of(csv).find("data.path is empty"), std::string::npos);
}

TEST(LoadDataset, SourceNames) {
  const auto names = dataset_source_names();
  EXPECT_EQ(names.size(), 10u);
  EXPECT_TRUE(is_file_source("mnist"));
  EXPECT_TRUE(is_file_source("csv"));
  EXPECT_FALSE(is_file_source("teacher"));
  EXPECT_EQ(default_normalization("fashion-mnist"), Normalization::Global);
  EXPECT_EQ(default_normalization("csv"), Normalization::PerFeature);
  EXPECT_EQ(default_normalization("moons"), Normalization::None);
}

}  // namespace
}  // namespace pipelab
