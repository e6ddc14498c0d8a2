// Data files that are huge, strange or changing while read: each gets a clear
// error that quotes at most a short, escaped excerpt of what was read.
#include <gtest/gtest.h>

#include <sstream>

#include "core/data/csv_reader.h"
#include "core/data/file_bytes.h"
#include "core/data/idx_folder.h"
#include "core/data/idx_reader.h"
#include "test_files.h"
#include "tests/core/safe_message.h"

namespace pipelab {
namespace {

using test::TempDir;
using testing::is_safe_message;

template <typename Action>
std::string data_error(Action action) {
  try {
    action();
  } catch (const DataError& error) {
    return error.what();
  }
  return "no error";
}

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

TEST(HostileData, AFileThatShrinksWhileReadIsAnError) {
  std::istringstream shorter("only 20 bytes here..");
  const std::string message = data_error([&] { read_stream_bytes(shorter, 100, "growing.csv"); });
  EXPECT_NE(message.find("growing.csv: changed while it was being read"), std::string::npos) << message;
  EXPECT_NE(message.find("held 100 bytes when opened but only 20 could be read"), std::string::npos)
      << message;
}

TEST(HostileData, AFileThatGrowsWhileReadIsAnError) {
  std::istringstream longer("twenty bytes and then some more");
  const std::string message = data_error([&] { read_stream_bytes(longer, 20, "growing.csv"); });
  EXPECT_NE(message.find("it grew past the 20 bytes it held when opened"), std::string::npos) << message;
  std::istringstream exact("exactly");
  EXPECT_EQ(read_stream_bytes(exact, 7, "exact.csv"), bytes_of("exactly"));
}

TEST(HostileData, ADecompressionBombIsRefusedBeforeItTakesTheMemory) {
  const std::vector<uint8_t> zeros(8 << 20, 0);
  const std::vector<uint8_t> bomb = test::gzip_bytes(zeros);  // 8 MiB in a few KiB
  const std::string message = data_error([&] { gunzip(bomb, "bomb.gz", 1 << 20); });
  EXPECT_NE(message.find("bomb.gz: decompresses to more than"), std::string::npos) << message;
  EXPECT_EQ(gunzip(bomb, "bomb.gz", 8 << 20).size(), zeros.size());
}

TEST(HostileData, SpecialFilesAreNotReadAsData) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero here";
  EXPECT_NE(data_error([] { read_file_bytes("/dev/zero"); }).find("is not a regular file"),
            std::string::npos);
}

TEST(HostileData, NotANumberAndInfinityInCsvAreRefused) {
  for (const std::string cell : {"nan", "NaN", "-nan", "inf", "-Infinity", "1e39", "-1e39"}) {
    const std::string message =
        data_error([&] { parse_csv_dataset(bytes_of("1,2\n0," + cell + "\n"), "data.csv"); });
    EXPECT_NE(message.find("line 2, column 2"), std::string::npos) << cell << ": " << message;
    EXPECT_TRUE(message.find("not a finite") != std::string::npos ||
                message.find("not a number") != std::string::npos)
        << cell << ": " << message;
  }
  for (const std::string label : {"nan", "inf"}) {
    const std::string message =
        data_error([&] { parse_csv_dataset(bytes_of("1,2\n" + label + ",2\n"), "data.csv"); });
    EXPECT_NE(message.find("not a whole number"), std::string::npos) << message;
  }
}

TEST(HostileData, BinaryCellsAreQuotedShortAndEscaped) {
  std::string cell = "\x1b[2J\xff\xfe";
  cell += std::string(1000, 'z');
  const std::string message =
      data_error([&] { parse_csv_dataset(bytes_of("1,2\n0," + cell + "\n"), "data.csv"); });
  EXPECT_TRUE(is_safe_message(message));
  EXPECT_NE(message.find("'\\x1B[2J\\xFF\\xFEzzz"), std::string::npos) << message;
  EXPECT_LT(message.size(), 200u);
}

TEST(HostileData, FileNamesWithOddBytesAreEscaped) {
  TempDir dir;
  const std::string odd = dir.file("caf\xe9\n\x1b[1m.csv");
  const std::string missing = data_error([&] { read_csv_dataset(odd); });
  EXPECT_TRUE(is_safe_message(missing));
  EXPECT_NE(missing.find("caf\\xE9\\n\\x1B[1m.csv: file not found"), std::string::npos) << missing;

  test::write_text(odd, "1,2\n0,x\n");
  const std::string bad_cell = data_error([&] { read_csv_dataset(odd); });
  EXPECT_TRUE(is_safe_message(bad_cell));
  EXPECT_NE(bad_cell.find("caf\\xE9"), std::string::npos) << bad_cell;

  test::write_bytes(dir.file("\xff-images-idx3-ubyte"), {0, 0, 8, 3});
  const std::string idx = data_error([&] { read_idx_images(dir.file("\xff-images-idx3-ubyte")); });
  EXPECT_TRUE(is_safe_message(idx));
  EXPECT_NE(idx.find("\\xFF-images-idx3-ubyte: truncated"), std::string::npos) << idx;

  const std::string folder = data_error([&] { find_idx_files(dir.path(), "idx"); });
  EXPECT_TRUE(is_safe_message(folder));
  EXPECT_NE(folder.find("no matching labels file \\xFF-labels-idx1-ubyte"), std::string::npos)
      << folder;
}

}  // namespace
}  // namespace pipelab
