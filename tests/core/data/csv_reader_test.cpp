#include "core/data/csv_reader.h"

#include <gtest/gtest.h>

#include "test_files.h"

namespace pipelab {
namespace {

using test::TempDir;

std::string error_of(const std::string& path, CsvOptions options = {}) {
  try {
    read_csv_dataset(path, options);
  } catch (const DataError& error) {
    return error.what();
  }
  return "no error";
}

Dataset read_text(const TempDir& dir, const std::string& text, CsvOptions options = {}) {
  test::write_text(dir.file("data.csv"), text);
  return read_csv_dataset(dir.file("data.csv"), options);
}

TEST(CsvReader, ReadsLabelsAndFeaturesWithoutHeader) {
  TempDir dir;
  const Dataset dataset = read_text(dir, "1,0.5,-2\n0,3,4e-1\n2,+1,0\n");
  EXPECT_EQ(dataset.samples, 3);
  EXPECT_EQ(dataset.features, 2);
  EXPECT_EQ(dataset.classes, 3);
  EXPECT_EQ(dataset.labels, (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(dataset.x, (std::vector<float>{0.5f, -2.0f, 3.0f, 0.4f, 1.0f, 0.0f}));
  EXPECT_TRUE(has_consistent_shape(dataset));
}

TEST(CsvReader, DetectsAHeaderAndToleratesWindowsLineEndsBlankLinesAndQuotes) {
  TempDir dir;
  const Dataset dataset =
      read_text(dir, "\xEF\xBB\xBF\"label\",\"x\",\"y\"\r\n1, 2 ,3\r\n\r\n0,\"4\",5\r\n\n");
  EXPECT_EQ(dataset.samples, 2);
  EXPECT_EQ(dataset.labels, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(dataset.x, (std::vector<float>{2, 3, 4, 5}));
}

TEST(CsvReader, LabelColumnCanBeChosen) {
  TempDir dir;
  CsvOptions last;
  last.label_column = -1;
  const Dataset dataset = read_text(dir, "x,y,class\n0.5,1.5,1\n2.5,3.5,0\n", last);
  EXPECT_EQ(dataset.labels, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(dataset.x, (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}));
  CsvOptions middle;
  middle.label_column = 1;
  const Dataset by_index = read_text(dir, "0.5,1,1.5\n2.5,0,3.5\n", middle);
  EXPECT_EQ(by_index.labels, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(by_index.x, (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}));
}

TEST(CsvReader, ReadsGzipCsv) {
  TempDir dir;
  const std::string text = "1,2\n0,3\n";
  test::write_bytes(dir.file("data.csv.gz"),
                    test::gzip_bytes(std::vector<uint8_t>(text.begin(), text.end())));
  EXPECT_EQ(read_csv_dataset(dir.file("data.csv.gz")).samples, 2);
}

struct BadCsv {
  std::string name;
  std::string text;
  std::vector<std::string> message_parts;
  int label_column = 0;
};

// Names the case in test listings (gtest would print its raw bytes).
void PrintTo(const BadCsv& c, std::ostream* out) { *out << c.name; }

class MalformedCsv : public ::testing::TestWithParam<BadCsv> {};

TEST_P(MalformedCsv, ThrowsOneLineNamingFileAndProblem) {
  const BadCsv& c = GetParam();
  TempDir dir;
  test::write_text(dir.file("bad.csv"), c.text);
  CsvOptions options;
  options.label_column = c.label_column;
  const std::string message = error_of(dir.file("bad.csv"), options);
  EXPECT_NE(message.find("bad.csv"), std::string::npos) << message;
  for (const std::string& part : c.message_parts) {
    EXPECT_NE(message.find(part), std::string::npos) << message << "\nmissing: " << part;
  }
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedCsv,
    ::testing::Values(
        BadCsv{"Empty", "", {"file is empty"}},
        BadCsv{"OnlyBlankLines", "\n  \n", {"no data rows"}},
        BadCsv{"HeaderOnly", "label,x\n", {"header row but no data rows"}},
        BadCsv{"NonNumericFeature", "1,2\n0,abc\n", {"line 2, column 2", "'abc' is not a number"}},
        BadCsv{"EmptyCell", "1,2,3\n0,,3\n", {"line 2, column 2", "empty cell"}},
        BadCsv{"NotFinite", "1,2\n0,inf\n", {"line 2, column 2", "not a finite"}},
        BadCsv{"TooLargeForFloat", "1,2\n0,1e60\n", {"line 2, column 2", "not a finite"}},
        BadCsv{"RaggedShort", "1,2,3\n0,1\n", {"line 2 has 2 cells but line 1 has 3"}},
        BadCsv{"RaggedLong", "l,a\n1,2\n0,1,5\n", {"line 3 has 3 cells but line 1 has 2"}},
        BadCsv{"NegativeLabel", "1,2\n-1,3\n", {"line 2, column 1", "negative"}},
        BadCsv{"FractionalLabel", "1,2\n2.5,3\n", {"line 2, column 1", "not a whole number"}},
        BadCsv{"TextLabel", "label,x\ncat,3\n", {"line 2, column 1", "'cat' is not a number"}},
        BadCsv{"HugeLabel", "1,2\n99999999,3\n", {"too large"}},
        BadCsv{"SingleColumn", "1\n2\n", {"has 1 cell"}},
        BadCsv{"LabelColumnOutside", "1,2\n0,3\n", {"label column 5", "2 cells"}, 5}),
    [](const auto& info) { return info.param.name; });

TEST(CsvReader, MissingFileIsNamed) {
  TempDir dir;
  const std::string message = error_of(dir.file("missing.csv"));
  EXPECT_NE(message.find("missing.csv: file not found"), std::string::npos) << message;
}

}  // namespace
}  // namespace pipelab
