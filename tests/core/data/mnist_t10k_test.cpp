// Reads the real MNIST test set from ../shared when this checkout has it.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <numeric>

#include "core/data/idx_folder.h"
#include "core/data/idx_reader.h"
#include "core/data/load_dataset.h"
#include "test_files.h"

namespace pipelab {
namespace {

#define SKIP_WITHOUT_SHARED_MNIST()                                                               \
  if (!test::have_shared_mnist_t10k()) {                                                          \
    GTEST_SKIP() << "the shared MNIST t10k files are not at " << test::shared_mnist_t10k_folder() \
                 << " (a fresh clone has no ../shared)";                                          \
  }

// An independent reader for the check: zlib's gzread, skip `header` bytes, read `count`.
std::vector<uint8_t> gz_read_after_header(const std::string& path, int header, int count) {
  gzFile file = gzopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr);
  if (!file) return {};
  std::vector<uint8_t> skipped(static_cast<size_t>(header));
  std::vector<uint8_t> values(static_cast<size_t>(count));
  EXPECT_EQ(gzread(file, skipped.data(), static_cast<unsigned>(header)), header);
  EXPECT_EQ(gzread(file, values.data(), static_cast<unsigned>(count)), count);
  gzclose(file);
  return values;
}

TEST(MnistT10k, ReadsTenThousandDigits) {
  SKIP_WITHOUT_SHARED_MNIST();
  const std::string folder = test::shared_mnist_t10k_folder();
  const Dataset dataset =
      load_idx_pair(folder + "/t10k-images-idx3-ubyte.gz", folder + "/t10k-labels-idx1-ubyte.gz",
                    mnist_expectations());
  EXPECT_EQ(dataset.samples, 10000);
  EXPECT_EQ(dataset.features, 28 * 28);
  EXPECT_EQ(dataset.classes, 10);
  const auto [low, high] = std::minmax_element(dataset.labels.begin(), dataset.labels.end());
  EXPECT_EQ(*low, 0);
  EXPECT_EQ(*high, 9);
  const auto counts = count_per_class(dataset);
  for (int64_t count : counts) EXPECT_GT(count, 500);  // every digit is well represented

  // Labels 8 bytes in, pixels 16 bytes in: compare the first of each with zlib's own reading.
  const auto first_labels = gz_read_after_header(folder + "/t10k-labels-idx1-ubyte.gz", 8, 5);
  for (size_t i = 0; i < first_labels.size(); ++i) EXPECT_EQ(dataset.labels[i], first_labels[i]);
  const auto first_image = gz_read_after_header(folder + "/t10k-images-idx3-ubyte.gz", 16, 784);
  for (size_t i = 0; i < first_image.size(); ++i) {
    ASSERT_FLOAT_EQ(dataset.x[i], first_image[i] / 255.0f);
  }
  const double ink = std::accumulate(dataset.x.begin(), dataset.x.begin() + 784, 0.0);
  EXPECT_GT(ink, 10.0);  // a digit, not a blank image
}

TEST(MnistT10k, FolderWithOnlyT10kIsSplitEightToTwo) {
  SKIP_WITHOUT_SHARED_MNIST();
  const IdxFolder folder = find_idx_files(test::shared_mnist_t10k_folder(), "mnist");
  ASSERT_TRUE(folder.train.has_value());
  EXPECT_FALSE(folder.test.has_value());

  DatasetOptions options;
  options.source = "mnist";
  options.path = test::shared_mnist_t10k_folder();
  options.validation_fraction = 0.2;
  options.seed = 3;
  const DataSplit split = load_dataset(options);
  EXPECT_EQ(split.train.samples, 8000);
  EXPECT_EQ(split.validation.samples, 2000);
  EXPECT_EQ(split.train.features, 784);
  EXPECT_EQ(split.train.classes, 10);
  EXPECT_EQ(split.validation.classes, 10);
  // Global standardisation fitted on train: the training inputs have mean 0, deviation 1.
  EXPECT_EQ(split.normalization.mode, Normalization::Global);
  double sum = 0.0;
  double sum_of_squares = 0.0;
  for (float value : split.train.x) {
    sum += value;
    sum_of_squares += static_cast<double>(value) * value;
  }
  const double n = static_cast<double>(split.train.x.size());
  EXPECT_NEAR(sum / n, 0.0, 1e-3);
  EXPECT_NEAR(sum_of_squares / n, 1.0, 1e-3);
  // MNIST's well-known pixel statistics (about 0.13 and 0.31) come out of the fit.
  EXPECT_NEAR(split.normalization.mean[0], 0.13, 0.01);
  EXPECT_NEAR(split.normalization.deviation[0], 0.31, 0.01);
}

TEST(MnistT10k, LimitCapsTheTotal) {
  SKIP_WITHOUT_SHARED_MNIST();
  DatasetOptions options;
  options.source = "mnist";
  options.path = test::shared_mnist_t10k_folder();
  options.limit = 1000;
  options.validation_fraction = 0.1;
  const DataSplit split = load_dataset(options);
  EXPECT_EQ(split.train.samples, 900);
  EXPECT_EQ(split.validation.samples, 100);
}

}  // namespace
}  // namespace pipelab
