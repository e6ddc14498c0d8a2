#include "core/data/idx_folder.h"

#include <gtest/gtest.h>

#include "core/data/dataset.h"
#include "test_files.h"

namespace pipelab {
namespace {

using test::TempDir;

void touch(const TempDir& dir, const std::string& name) { test::write_text(dir.file(name), "x"); }

std::string error_of(const std::string& folder) {
  try {
    find_idx_files(folder, "mnist");
  } catch (const DataError& error) {
    return error.what();
  }
  return "no error";
}

TEST(IdxFolder, FindsTheMnistTrainAndTestPairs) {
  TempDir dir;
  touch(dir, "train-images-idx3-ubyte.gz");
  touch(dir, "train-labels-idx1-ubyte.gz");
  touch(dir, "t10k-images-idx3-ubyte.gz");
  touch(dir, "t10k-labels-idx1-ubyte.gz");
  touch(dir, "README.md");
  const IdxFolder folder = find_idx_files(dir.path(), "mnist");
  ASSERT_TRUE(folder.train && folder.test);
  EXPECT_EQ(folder.train->images, dir.file("train-images-idx3-ubyte.gz"));
  EXPECT_EQ(folder.train->labels, dir.file("train-labels-idx1-ubyte.gz"));
  EXPECT_EQ(folder.test->images, dir.file("t10k-images-idx3-ubyte.gz"));
  EXPECT_EQ(folder.test->labels, dir.file("t10k-labels-idx1-ubyte.gz"));
}

TEST(IdxFolder, PrefersUncompressedFilesAndAcceptsAnyPrefix) {
  TempDir dir;
  touch(dir, "emnist-digits-test-images-idx3-ubyte.gz");
  touch(dir, "emnist-digits-test-images-idx3-ubyte");
  touch(dir, "emnist-digits-test-labels-idx1-ubyte.gz");
  const IdxFolder folder = find_idx_files(dir.path(), "idx");
  ASSERT_TRUE(folder.train);  // the only pair, whatever its name
  EXPECT_FALSE(folder.test);
  EXPECT_EQ(folder.train->images, dir.file("emnist-digits-test-images-idx3-ubyte"));
  EXPECT_EQ(folder.train->labels, dir.file("emnist-digits-test-labels-idx1-ubyte.gz"));
}

TEST(IdxFolder, ErrorsNameTheProblem) {
  TempDir dir;
  EXPECT_NE(error_of(dir.file("absent")).find("folder not found"), std::string::npos);
  EXPECT_NE(error_of("").find("data.path is empty"), std::string::npos);

  const std::string empty = error_of(dir.path());
  EXPECT_NE(empty.find("holds no mnist IDX files"), std::string::npos) << empty;
  EXPECT_NE(empty.find("datasets/download.sh mnist"), std::string::npos) << empty;

  touch(dir, "t10k-images-idx3-ubyte.gz");
  const std::string half = error_of(dir.path());
  EXPECT_NE(half.find("no matching labels file t10k-labels-idx1-ubyte"), std::string::npos) << half;

  touch(dir, "t10k-labels-idx1-ubyte.gz");
  touch(dir, "a-images-idx3-ubyte");
  touch(dir, "a-labels-idx1-ubyte");
  const std::string ambiguous = error_of(dir.path());
  EXPECT_NE(ambiguous.find("cannot tell which to use"), std::string::npos) << ambiguous;

  EXPECT_NE(error_of(dir.file("a-images-idx3-ubyte")).find("is a file"), std::string::npos);
}

}  // namespace
}  // namespace pipelab
