#include "core/data/idx_reader.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/data/file_bytes.h"
#include "core/data/random.h"
#include "test_files.h"

namespace pipelab {
namespace {

using test::TempDir;

// Three 2x4 images with labels 2, 0, 1.
const std::vector<uint8_t> kPixels = test::pattern_pixels(3 * 2 * 4);
const std::vector<uint8_t> kImagesFile = test::idx_images_bytes(3, 2, 4, kPixels);
const std::vector<uint8_t> kLabelsFile = test::idx_labels_bytes(3, {2, 0, 1});

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const DataError& error) {
    return error.what();
  }
  return "no error";
}

void expect_error(const std::function<void()>& action, std::initializer_list<std::string> parts) {
  const std::string message = error_of(action);
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "message: " << message << "\nmissing: " << part;
  }
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

TEST(IdxReader, ReadsRawFiles) {
  TempDir dir;
  test::write_bytes(dir.file("a-images-idx3-ubyte"), kImagesFile);
  test::write_bytes(dir.file("a-labels-idx1-ubyte"), kLabelsFile);
  const IdxImages images = read_idx_images(dir.file("a-images-idx3-ubyte"));
  EXPECT_EQ(images.count, 3);
  EXPECT_EQ(images.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(images.pixels, kPixels);
  EXPECT_EQ(read_idx_labels(dir.file("a-labels-idx1-ubyte")), (std::vector<uint8_t>{2, 0, 1}));
}

TEST(IdxReader, ReadsGzipFilesWhateverTheirName) {
  TempDir dir;
  // Detection is by the magic bytes, so a gzip file without .gz still works.
  test::write_bytes(dir.file("images.gz"), test::gzip_bytes(kImagesFile));
  test::write_bytes(dir.file("labels-no-suffix"), test::gzip_bytes(kLabelsFile));
  EXPECT_EQ(read_idx_images(dir.file("images.gz")).pixels, kPixels);
  EXPECT_EQ(read_idx_labels(dir.file("labels-no-suffix")), (std::vector<uint8_t>{2, 0, 1}));
}

TEST(IdxReader, ReadsConcatenatedGzipMembers) {
  TempDir dir;
  const std::vector<uint8_t> first(kImagesFile.begin(), kImagesFile.begin() + 10);
  const std::vector<uint8_t> second(kImagesFile.begin() + 10, kImagesFile.end());
  std::vector<uint8_t> joined = test::gzip_bytes(first);
  const auto tail = test::gzip_bytes(second);
  joined.insert(joined.end(), tail.begin(), tail.end());
  test::write_bytes(dir.file("joined.gz"), joined);
  EXPECT_EQ(read_idx_images(dir.file("joined.gz")).pixels, kPixels);
}

TEST(IdxReader, PairBecomesAClassificationSetScaledToUnitRange) {
  TempDir dir;
  test::write_bytes(dir.file("images"), kImagesFile);
  test::write_bytes(dir.file("labels"), kLabelsFile);
  const Dataset dataset = load_idx_pair(dir.file("images"), dir.file("labels"), {});
  EXPECT_EQ(dataset.samples, 3);
  EXPECT_EQ(dataset.features, 8);
  EXPECT_EQ(dataset.classes, 3);  // largest label + 1
  EXPECT_EQ(dataset.labels, (std::vector<int32_t>{2, 0, 1}));
  for (size_t i = 0; i < kPixels.size(); ++i) {
    ASSERT_FLOAT_EQ(dataset.x[i], kPixels[i] / 255.0f);
  }
  EXPECT_TRUE(has_consistent_shape(dataset));
}

TEST(IdxReader, FullWhitePixelIsExactlyOne) {
  TempDir dir;
  test::write_bytes(dir.file("images"), test::idx_images_bytes(1, 1, 2, {0, 255}));
  test::write_bytes(dir.file("labels"), test::idx_labels_bytes(1, {0}));
  const Dataset dataset = load_idx_pair(dir.file("images"), dir.file("labels"), {});
  EXPECT_EQ(dataset.x, (std::vector<float>{0.0f, 1.0f}));
}

// --- malformed files ---------------------------------------------------------

TEST(IdxMalformed, MissingFile) {
  TempDir dir;
  expect_error([&] { read_idx_images(dir.file("nope-images-idx3-ubyte")); },
               {"nope-images-idx3-ubyte", "file not found"});
}

TEST(IdxMalformed, FolderInsteadOfFile) {
  TempDir dir;
  expect_error([&] { read_idx_labels(dir.path()); }, {dir.path(), "is a folder"});
}

TEST(IdxMalformed, EmptyFile) {
  TempDir dir;
  test::write_bytes(dir.file("empty"), {});
  expect_error([&] { read_idx_labels(dir.file("empty")); }, {"empty", "file is empty"});
}

TEST(IdxMalformed, WrongMagic) {
  TempDir dir;
  std::vector<uint8_t> bytes = kImagesFile;
  bytes[0] = 0x12;
  test::write_bytes(dir.file("bad"), bytes);
  expect_error([&] { read_idx_images(dir.file("bad")); },
               {"bad", "wrong magic number 0x12000803", "expected 0x00000803"});
}

TEST(IdxMalformed, LabelsFileGivenAsImages) {
  TempDir dir;
  test::write_bytes(dir.file("labels"), kLabelsFile);
  test::write_bytes(dir.file("images"), kImagesFile);
  expect_error([&] { read_idx_images(dir.file("labels")); },
               {"wrong magic number 0x00000801", "expected 0x00000803"});
  expect_error([&] { read_idx_labels(dir.file("images")); },
               {"wrong magic number 0x00000803", "expected 0x00000801"});
}

TEST(IdxMalformed, UnsupportedValueType) {
  TempDir dir;
  std::vector<uint8_t> bytes = kLabelsFile;
  bytes[2] = 0x0D;  // float
  test::write_bytes(dir.file("floats"), bytes);
  expect_error([&] { read_idx_labels(dir.file("floats")); }, {"0x0000000D", "not supported"});
}

TEST(IdxMalformed, TruncatedLabelsSayHowManyAreThere) {
  TempDir dir;
  std::vector<uint8_t> labels(10000, 3);
  std::vector<uint8_t> bytes = test::idx_labels_bytes(10000, labels);
  bytes.resize(bytes.size() - 2);
  test::write_bytes(dir.file("t10k-labels-idx1-ubyte.gz"), test::gzip_bytes(bytes));
  expect_error([&] { read_idx_labels(dir.file("t10k-labels-idx1-ubyte.gz")); },
               {"t10k-labels-idx1-ubyte.gz: truncated: header says 10000 labels but the file "
                "holds 9998"});
}

TEST(IdxMalformed, TruncatedImages) {
  TempDir dir;
  std::vector<uint8_t> bytes = kImagesFile;
  bytes.resize(bytes.size() - 1);
  test::write_bytes(dir.file("images"), bytes);
  expect_error([&] { read_idx_images(dir.file("images")); },
               {"truncated", "3 images of 2x4 (24 bytes)", "holds 23"});
}

TEST(IdxMalformed, ExtraBytesAtTheEnd) {
  TempDir dir;
  std::vector<uint8_t> bytes = kLabelsFile;
  bytes.push_back(7);
  test::write_bytes(dir.file("labels"), bytes);
  expect_error([&] { read_idx_labels(dir.file("labels")); }, {"too long", "3 labels", "holds 4"});
}

TEST(IdxMalformed, HugeHeaderCountsDoNotOverflow) {
  TempDir dir;
  // 0xFFFFFFFF^3 overflows 64 bits; the reader must still report truncation.
  test::write_bytes(dir.file("huge"),
                    test::idx_images_bytes(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, {1, 2, 3}));
  expect_error([&] { read_idx_images(dir.file("huge")); }, {"truncated", "4294967295 images"});
}

TEST(IdxMalformed, EmptyShapeOrCount) {
  TempDir dir;
  test::write_bytes(dir.file("zero-rows"), test::idx_images_bytes(2, 0, 4, {}));
  expect_error([&] { read_idx_images(dir.file("zero-rows")); }, {"0x4", "empty shape"});
  test::write_bytes(dir.file("zero-count"), test::idx_labels_bytes(0, {}));
  expect_error([&] { read_idx_labels(dir.file("zero-count")); }, {"0 labels"});
}

TEST(IdxMalformed, CountsThatDisagree) {
  TempDir dir;
  test::write_bytes(dir.file("images"), kImagesFile);
  test::write_bytes(dir.file("labels"), test::idx_labels_bytes(2, {0, 1}));
  expect_error([&] { load_idx_pair(dir.file("images"), dir.file("labels"), {}); },
               {"labels: holds 2 labels", "holds 3 images"});
}

TEST(IdxMalformed, ShapeThatIsNotMnist) {
  TempDir dir;
  test::write_bytes(dir.file("images"), kImagesFile);
  test::write_bytes(dir.file("labels"), kLabelsFile);
  expect_error([&] { load_idx_pair(dir.file("images"), dir.file("labels"), mnist_expectations()); },
               {"images: images are 2x4 but MNIST images are 28x28"});
}

TEST(IdxMalformed, LabelAboveNineForMnist) {
  TempDir dir;
  test::write_bytes(dir.file("images"),
                    test::idx_images_bytes(2, 28, 28, test::pattern_pixels(2 * 784)));
  test::write_bytes(dir.file("labels"), test::idx_labels_bytes(2, {3, 12}));
  expect_error([&] { load_idx_pair(dir.file("images"), dir.file("labels"), mnist_expectations()); },
               {"labels: label 12 at index 1 is out of range", "0..9"});
}

TEST(IdxMalformed, CorruptedGzip) {
  TempDir dir;
  std::vector<uint8_t> compressed = test::gzip_bytes(kLabelsFile);
  compressed[compressed.size() - 6] ^= 0xFF;  // inside the CRC-32 trailer
  test::write_bytes(dir.file("crc.gz"), compressed);
  expect_error([&] { read_idx_labels(dir.file("crc.gz")); }, {"crc.gz", "corrupted gzip"});

  std::vector<uint8_t> garbage = {0x1f, 0x8b, 0x08, 0x00, 0,    0,    0,    0,    0,    0xff, 0xde,
                                  0xad, 0xbe, 0xef, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66};
  test::write_bytes(dir.file("garbage.gz"), garbage);
  expect_error([&] { read_idx_labels(dir.file("garbage.gz")); }, {"garbage.gz", "gzip"});

  std::vector<uint8_t> trailing = test::gzip_bytes(kLabelsFile);
  trailing.push_back('x');
  test::write_bytes(dir.file("trailing.gz"), trailing);
  expect_error([&] { read_idx_labels(dir.file("trailing.gz")); },
               {"trailing.gz", "unexpected bytes after the compressed data"});
}

// Every prefix of a valid file, raw and gzip, must fail with a DataError and
// never crash or read past the data (run under ASan to see the latter).
TEST(IdxFuzz, EveryTruncationThrowsCleanly) {
  const std::vector<std::pair<std::vector<uint8_t>, bool>> files = {{kImagesFile, true},
                                                                    {kLabelsFile, false}};
  for (const auto& [full, images] : files) {
    const bool is_images = images;  // clang 14 cannot capture a structured binding in a lambda
    for (const bool gzip : {false, true}) {
      const std::vector<uint8_t> stored = gzip ? test::gzip_bytes(full) : full;
      for (size_t length = 0; length < stored.size(); ++length) {
        const std::vector<uint8_t> cut(stored.begin(), stored.begin() + length);
        const auto parse = [&] {
          const std::vector<uint8_t> bytes = is_gzip(cut) ? gunzip(cut, "cut") : cut;
          if (is_images) {
            parse_idx_images(bytes, "cut");
          } else {
            parse_idx_labels(bytes, "cut");
          }
        };
        EXPECT_THROW(parse(), DataError) << "length " << length << (gzip ? " (gzip)" : "");
      }
    }
  }
}

// Random byte flips: the reader either succeeds or throws DataError.
TEST(IdxFuzz, RandomCorruptionNeverCrashes) {
  Rng rng(2024);
  for (const bool gzip : {false, true}) {
    const std::vector<uint8_t> stored = gzip ? test::gzip_bytes(kImagesFile) : kImagesFile;
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<uint8_t> bytes = stored;
      const int flips = 1 + static_cast<int>(rng.below(3));
      for (int f = 0; f < flips; ++f) {
        bytes[rng.below(bytes.size())] ^= static_cast<uint8_t>(1 + rng.below(255));
      }
      try {
        const std::vector<uint8_t> plain = is_gzip(bytes) ? gunzip(bytes, "flipped") : bytes;
        const IdxImages images = parse_idx_images(plain, "flipped");
        EXPECT_EQ(static_cast<int64_t>(images.pixels.size()),
                  images.count * images.pixels_per_image());
      } catch (const DataError&) {
        // a clean, reported failure is the other acceptable outcome
      }
    }
  }
}

}  // namespace
}  // namespace pipelab
