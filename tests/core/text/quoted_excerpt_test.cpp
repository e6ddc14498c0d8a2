#include "core/text/quoted_excerpt.h"

#include <gtest/gtest.h>

#include <string>

#include "core/text/utf8.h"

namespace pipelab {
namespace {

// Every byte value, in order: the worst a binary file can put into a message.
std::string every_byte() {
  std::string bytes;
  for (int byte = 0; byte < 256; ++byte) bytes += static_cast<char>(byte);
  return bytes;
}

bool has_control_character(const std::string& text) {
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) return true;
  return false;
}

TEST(QuotedExcerpt, PrintableTextAndUtf8PassUnchanged) {
  EXPECT_EQ(quoted_excerpt("gpipe"), "'gpipe'");
  EXPECT_EQ(safe_excerpt("Größe 大きさ 🙂"), "Größe 大きさ 🙂");
}

TEST(QuotedExcerpt, ControlCharactersAreEscaped) {
  EXPECT_EQ(safe_excerpt("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(safe_excerpt(std::string("\x1b[31mred", 8)), "\\x1B[31mred");
  EXPECT_EQ(safe_excerpt(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(safe_excerpt("\x7f"), "\\x7F");
  // C1 controls and the Unicode line separator are valid UTF-8 but break lines.
  EXPECT_EQ(safe_excerpt("\xC2\x85"), "\\xC2\\x85");
  EXPECT_EQ(safe_excerpt("a\xE2\x80\xA8z"), "a\\xE2\\x80\\xA8z");
}

TEST(QuotedExcerpt, BackslashAndQuoteAreEscapedSoEscapesStayUnambiguous) {
  EXPECT_EQ(safe_excerpt("C:\\x41"), "C:\\\\x41");
  EXPECT_EQ(quoted_excerpt("it's"), "'it\\'s'");
  EXPECT_EQ(safe_excerpt("it's"), "it's");
}

TEST(QuotedExcerpt, InvalidUtf8BytesAreEscapedOneByOne) {
  EXPECT_EQ(safe_excerpt("\xff\xfe"), "\\xFF\\xFE");
  EXPECT_EQ(safe_excerpt("a\xC3"), "a\\xC3");            // a sequence cut short
  EXPECT_EQ(safe_excerpt("\xC0\xAF"), "\\xC0\\xAF");     // an overlong '/'
  EXPECT_EQ(safe_excerpt("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(safe_excerpt("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(QuotedExcerpt, BinaryGarbageBecomesOneLineOfValidUtf8) {
  const std::string garbage = every_byte() + every_byte();
  const std::string shown = safe_excerpt(garbage, garbage.size());
  EXPECT_TRUE(is_valid_utf8(shown));
  EXPECT_FALSE(has_control_character(shown));
  EXPECT_TRUE(is_valid_utf8(quoted_excerpt(garbage)));
  EXPECT_FALSE(has_control_character(quoted_excerpt(garbage)));
}

TEST(QuotedExcerpt, LongTextIsCutAtACharacterBoundary) {
  EXPECT_EQ(safe_excerpt(std::string(100, 'a'), 10), "aaaaaaaaaa...");
  EXPECT_EQ(safe_excerpt(std::string(10, 'a'), 10), "aaaaaaaaaa");
  // Nine bytes of 'a' then a 3-byte character: cutting at 10 would split it.
  EXPECT_EQ(safe_excerpt("aaaaaaaaa\xE5\xA4\xA7", 10), "aaaaaaaaa...");
  EXPECT_EQ(quoted_excerpt(std::string(1000, 'x')).size(), kExcerptBytes + 5);
}

TEST(QuotedExcerpt, PathsKeepTheirLength) {
  const std::string path = "/data/" + std::string(300, 'p') + "/train.csv";
  EXPECT_EQ(path_excerpt(path), path);
  EXPECT_EQ(path_excerpt("/data/\xff.csv"), "/data/\\xFF.csv");
}

TEST(Utf8, WellFormedSequencesOnly) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9\xE5\xA4\xA7\xF0\x9F\x99\x82"));
  EXPECT_FALSE(is_valid_utf8("\x80"));
  EXPECT_FALSE(is_valid_utf8("\xE5\xA4"));
  EXPECT_FALSE(is_valid_utf8("\xF8\x88\x80\x80\x80"));
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x99\x82", 0), 4u);
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x99", 0), 0u);
}

}  // namespace
}  // namespace pipelab
