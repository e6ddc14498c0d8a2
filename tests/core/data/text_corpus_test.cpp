#include "core/data/text_corpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/data/file_bytes.h"
#include "core/data/token_text.h"
#include "test_files.h"
#include "tests/core/safe_message.h"

namespace pipelab {
namespace {

using test::TempDir;
using testing::is_safe_message;

TextCorpusOptions text_options(int64_t length, double fraction, int64_t stride = 0) {
  TextCorpusOptions options;
  options.sequence_length = length;
  options.validation_fraction = fraction;
  options.stride = stride;
  return options;
}

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

DataSplit parse(const std::string& text, const TextCorpusOptions& options) {
  return parse_text_corpus(bytes_of(text), "corpus.txt", options);
}

template <typename Action>
std::string data_error(Action action) {
  try {
    action();
  } catch (const DataError& error) {
    EXPECT_TRUE(is_safe_message(error.what())) << error.what();
    return error.what();
  }
  return "no error";
}

std::string parse_error(const std::string& text, const TextCorpusOptions& options) {
  return data_error([&] { parse(text, options); });
}

// Sample i's window as text: its inputs, then its last label.
std::string window_text(const Dataset& dataset, int64_t i) {
  const int64_t n = dataset.features;
  std::string text = decode_tokens(dataset, std::span<const float>(dataset.row(i), n));
  text += dataset.token_text[static_cast<size_t>(dataset.token_labels[(i + 1) * n - 1])];
  return text;
}

// "U+4E00 + i" for i in [0, count): every character different, so an id says where it was.
std::string distinct_characters(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    const char32_t code = 0x4E00 + i;
    text += static_cast<char>(0xE0 | (code >> 12));
    text += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    text += static_cast<char>(0x80 | (code & 0x3F));
  }
  return text;
}

std::string license_path() { return std::string(PIPELAB_SOURCE_DIR) + "/LICENSE"; }

TEST(TextCorpus, VocabularyIsTheSortedCharactersOfTheFile) {
  const DataSplit split = parse("banana bread\n", text_options(4, 0.0));
  const Dataset& train = split.train;
  EXPECT_EQ(train.vocab, 8);
  EXPECT_EQ(train.token_text, (std::vector<std::string>{"\n", " ", "a", "b", "d", "e", "n", "r"}));
  EXPECT_EQ(split.validation.token_text, train.token_text);
  EXPECT_TRUE(train.is_sequence());
  EXPECT_EQ(train.name, "text train");
  EXPECT_EQ(split.validation.name, "text validation");
  EXPECT_EQ(split.validation.samples, 0);
  EXPECT_TRUE(has_consistent_shape(train));
  EXPECT_TRUE(has_consistent_shape(split.validation));
}

TEST(TextCorpus, WindowsGiveInputsAndTheNextCharacters) {
  const std::string text = "abcdefghijklmnopqrstuvwxyz";  // 26 characters
  const DataSplit split = parse(text, text_options(5, 0.0));
  const Dataset& train = split.train;
  // Windows of 6 starting every 5: 0, 5, 10, 15, 20 (20..25 is the last that fits).
  ASSERT_EQ(train.samples, 5);
  EXPECT_EQ(train.features, 5);
  for (int64_t i = 0; i < train.samples; ++i) {
    EXPECT_EQ(window_text(train, i), text.substr(static_cast<size_t>(i * 5), 6));
    for (int64_t p = 0; p < 5; ++p) {
      EXPECT_EQ(train.token_labels[i * 5 + p], static_cast<int32_t>(train.row(i)[p]) + 1);  // a..z
    }
  }
  EXPECT_EQ(std::count(train.loss_mask.begin(), train.loss_mask.end(), 1), 25);  // all ones
  EXPECT_EQ(train.loss_mask.size(), 25u);
}

TEST(TextCorpus, AStrideOverlapsTheWindows) {
  const std::string text = "abcdefghijklmnopqrstuvwxyz";
  const Dataset train = parse(text, text_options(5, 0.0, 2)).train;
  ASSERT_EQ(train.samples, 11);  // starts 0, 2, ..., 20
  for (int64_t i = 0; i < train.samples; ++i) {
    EXPECT_EQ(window_text(train, i), text.substr(static_cast<size_t>(i * 2), 6));
  }
  EXPECT_EQ(parse(text, text_options(5, 0.0, 1)).train.samples, 21);
}

TEST(TextCorpus, ValidationIsTheEndOfTheFileAndSharesNoCharacter) {
  const int count = 1000;
  const std::string text = distinct_characters(count);  // id i is character i
  const DataSplit split = parse(text, text_options(16, 0.25, 3));
  const int64_t boundary = count - 250;
  std::set<int32_t> train_ids;
  for (float id : split.train.x) train_ids.insert(static_cast<int32_t>(id));
  train_ids.insert(split.train.token_labels.begin(), split.train.token_labels.end());
  std::set<int32_t> validation_ids;
  for (float id : split.validation.x) validation_ids.insert(static_cast<int32_t>(id));
  validation_ids.insert(split.validation.token_labels.begin(), split.validation.token_labels.end());
  EXPECT_LT(*train_ids.rbegin(), boundary);
  EXPECT_GE(*validation_ids.begin(), boundary);
  EXPECT_EQ(split.train.samples, (boundary - 17) / 3 + 1);
  EXPECT_EQ(split.validation.samples, (250 - 17) / 3 + 1);
  EXPECT_EQ(split.validation.vocab, count);  // the vocabulary is the whole file's
  // Validation windows start at the boundary, so its first sample begins there.
  EXPECT_EQ(static_cast<int64_t>(split.validation.row(0)[0]), boundary);
}

TEST(TextCorpus, MultiByteCharactersAreOneTokenAndAByteOrderMarkIsDropped) {
  const std::string text =
      "\xEF\xBB\xBF"
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x99\x82!";  // café € 🙂!
  const Dataset train = parse(text, text_options(8, 0.0)).train;
  ASSERT_EQ(train.samples, 1);  // 9 characters: exactly one window
  EXPECT_EQ(window_text(train, 0), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x99\x82!");
  EXPECT_EQ(train.token_text.back(), "\xF0\x9F\x99\x82");  // the largest code point sorts last
}

TEST(TextCorpus, GzipTextIsRead) {
  TempDir dir;
  const std::string text = "the quick brown fox jumps over the lazy dog";
  test::write_bytes(dir.file("corpus.txt.gz"), test::gzip_bytes(bytes_of(text)));
  const DataSplit split = load_text_corpus(dir.file("corpus.txt.gz"), text_options(10, 0.0));
  EXPECT_EQ(window_text(split.train, 0), text.substr(0, 11));
}

TEST(TextCorpus, TheLicenseIsACorpus) {
  const std::string path = license_path();
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const DataSplit split = load_text_corpus(path, text_options(64, 0.1));
  EXPECT_TRUE(has_consistent_shape(split.train));
  EXPECT_TRUE(has_consistent_shape(split.validation));
  EXPECT_GT(split.train.samples, 400);
  EXPECT_GT(split.validation.samples, 40);
  EXPECT_GT(split.train.vocab, 50);  // letters, digits, punctuation, line ends
  EXPECT_LT(split.train.vocab, 128);
  // The first window is the file's first 65 characters (it is ASCII).
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  EXPECT_EQ(window_text(split.train, 0), std::string(bytes.begin(), bytes.begin() + 65));
  // Loading twice gives the same windows.
  EXPECT_EQ(load_text_corpus(path, text_options(64, 0.1)).train.x, split.train.x);
}

TEST(TextCorpus, AVeryLongLineIsJustText) {
  const std::string line(1 << 20, 'x');
  const DataSplit split = parse(line + "y", text_options(256, 0.1));
  EXPECT_EQ(split.train.vocab, 2);
  EXPECT_GT(split.train.samples, 3000);
  EXPECT_TRUE(has_consistent_shape(split.validation));
}

TEST(TextCorpus, ANulByteIsACharacterLikeAnyOther) {
  const std::string text("a\0b\0c", 5);
  const Dataset train = parse(text, text_options(4, 0.0)).train;
  EXPECT_EQ(train.token_text.front(), std::string(1, '\0'));
  EXPECT_EQ(train.samples, 1);
}

TEST(TextCorpus, InvalidUtf8NamesTheByteOffset) {
  struct Case {
    std::string bytes;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"hello\x80world", "at byte 5 (0x80)"},    // a lone continuation byte
      {"ab\xC0\x80", "at byte 2 (0xC0)"},        // an overlong NUL
      {"abc\xED\xA0\x80", "at byte 3 (0xED)"},   // a surrogate
      {"abcd\xF0\x9F\x99", "at byte 4 (0xF0)"},  // cut short at the end
      {"\xFF\xFE"
       "a\0b\0",
       "at byte 0 (0xFF)"},  // UTF-16
      {"\xEF\xBB\xBF"
       "ok\xF5\x80\x80\x80",
       "at byte 5 (0xF5)"},  // past U+10FFFF, after a BOM
  };
  for (const Case& c : cases) {
    const std::string message = parse_error(c.bytes, text_options(1, 0.0));
    EXPECT_NE(message.find("corpus.txt: not valid UTF-8 " + c.expected +
                           "; a text source must be UTF-8: convert the file to UTF-8"),
              std::string::npos)
        << message;
  }
}

TEST(TextCorpus, TooLittleTextSaysHowMuchItHasAndNeeds) {
  std::string message = parse_error("", text_options(64, 0.1));
  EXPECT_NE(
      message.find("corpus.txt: is empty; a text source needs at least 65 (data.sequence_length "
                   "64 + 1 for the last label) characters"),
      std::string::npos)
      << message;
  EXPECT_NE(parse_error("\xEF\xBB\xBF", text_options(64, 0.1)).find("is empty"), std::string::npos);

  message = parse_error("a", text_options(64, 0.1));
  EXPECT_NE(
      message.find("corpus.txt: holds 1 character; one sample needs 65 (data.sequence_length 64 "
                   "+ 1 for the last label); use a longer text or lower data.sequence_length"),
      std::string::npos)
      << message;

  message = parse_error(std::string(40, 'a'), text_options(64, 0.1));
  EXPECT_NE(message.find("holds 40 characters; one sample needs 65"), std::string::npos) << message;

  // Enough for one window, but not for one in each part.
  message = parse_error(std::string(100, 'a'), text_options(64, 0.1));
  EXPECT_NE(message.find("corpus.txt: its validation part (the last 10 characters) is shorter than "
                         "one sample of 65"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("raise data.validation_fraction, lower data.sequence_length, or use 0"),
            std::string::npos)
      << message;
  message = parse_error(std::string(100, 'a'), text_options(40, 0.8));
  EXPECT_NE(
      message.find("corpus.txt: its training part (the first 20 characters) is shorter than one "
                   "sample of 41"),
      std::string::npos)
      << message;
  EXPECT_NE(message.find("lower data.validation_fraction or data.sequence_length"),
            std::string::npos);
}

TEST(TextCorpus, OptionsOutOfRangeAreErrors) {
  const std::string text(200, 'a');
  EXPECT_NE(parse_error(text, text_options(0, 0.1))
                .find("text: data.sequence_length is 0; use at least 1 character per sample"),
            std::string::npos);
  EXPECT_NE(parse_error(text, text_options(8, 0.1, -1))
                .find("text: data.stride is -1; use 1..8 (data.sequence_length; more would skip "
                      "characters), or 0 for 8"),
            std::string::npos);
  EXPECT_NE(parse_error(text, text_options(8, 0.1, 9)).find("data.stride is 9"), std::string::npos);
  EXPECT_NE(parse_error(text, text_options(8, 1.0)).find("data.validation_fraction"),
            std::string::npos);
  EXPECT_NE(data_error([] {
              load_text_corpus("", text_options(8, 0.1));
            }).find("text: data.path is empty; name a UTF-8 text file"),
            std::string::npos);
}

TEST(TextCorpus, TooManyWindowsAreRefusedBeforeTheyTakeTheMemory) {
  // 300 000 characters in windows of 1024 every character: 300 million tokens.
  const std::string message = parse_error(std::string(300000, 'a'), text_options(1024, 0.0, 1));
  EXPECT_NE(message.find("corpus.txt: makes 298976 samples of 1024 tokens, more than the 268435456 "
                         "tokens a sequence set holds; raise data.stride or use a shorter text"),
            std::string::npos)
      << message;
}

TEST(TextCorpus, HostileFilesFailWithADataError) {
  TempDir dir;
  EXPECT_NE(data_error([&] {
              load_text_corpus(dir.file("missing.txt"), text_options(8, 0.1));
            }).find("missing.txt: file not found"),
            std::string::npos);
  EXPECT_NE(data_error([&] {
              load_text_corpus(dir.path(), text_options(8, 0.1));
            }).find("is a folder, expected a file"),
            std::string::npos);
  test::write_text(dir.file("empty.txt"), "");
  EXPECT_NE(data_error([&] {
              load_text_corpus(dir.file("empty.txt"), text_options(8, 0.1));
            }).find("empty.txt: is empty"),
            std::string::npos);
  test::write_text(dir.file("one.txt"), "x");
  EXPECT_NE(data_error([&] {
              load_text_corpus(dir.file("one.txt"), text_options(8, 0.1));
            }).find("one.txt: holds 1 character; one sample needs 9"),
            std::string::npos);
  test::write_bytes(dir.file("binary.bin"), test::pattern_pixels(4096));
  EXPECT_NE(data_error([&] {
              load_text_corpus(dir.file("binary.bin"), text_options(8, 0.1));
            }).find("binary.bin: not valid UTF-8 at byte"),
            std::string::npos);
  // A corrupt gzip stream is reported by the file reader, in one safe line.
  std::vector<uint8_t> gzip = test::gzip_bytes(bytes_of(std::string(5000, 'z')));
  gzip.resize(gzip.size() / 2);
  test::write_bytes(dir.file("cut.txt.gz"), gzip);
  EXPECT_NE(data_error([&] {
              load_text_corpus(dir.file("cut.txt.gz"), text_options(8, 0.1));
            }).find("cut.txt.gz"),
            std::string::npos);
  // A name with a line break is escaped in the message.
  test::write_text(dir.file("two\nlines.txt"), "\x80");
  EXPECT_NE(data_error([&] {
              load_text_corpus(dir.file("two\nlines.txt"), text_options(8, 0.1));
            }).find("two\\nlines.txt: not valid UTF-8 at byte 0"),
            std::string::npos);
}

}  // namespace
}  // namespace pipelab
