#include "core/text/byte_size.h"

#include <gtest/gtest.h>

namespace pipelab {
namespace {

TEST(ByteSize, ParsesUnitsAsPeopleWriteThem) {
  EXPECT_EQ(parse_byte_size("16GiB"), int64_t{16} << 30);
  EXPECT_EQ(parse_byte_size("16 gib"), int64_t{16} << 30);
  EXPECT_EQ(parse_byte_size("80GB"), int64_t{80'000'000'000});
  EXPECT_EQ(parse_byte_size("1.5MiB"), int64_t{3} << 19);
  EXPECT_EQ(parse_byte_size("512"), 512);
  EXPECT_EQ(parse_byte_size("512B"), 512);
  EXPECT_EQ(parse_byte_size("2KB"), 2000);
}

TEST(ByteSize, RefusesWhatIsNotASize) {
  for (const char* text :
       {"", "GiB", "-1GiB", "16 GiBs", "1.2.3", "16XB", "16 G", "1e3", "99999999999TiB"})
    EXPECT_FALSE(parse_byte_size(text)) << text;
}

TEST(ByteSize, TextRoundsUpSoTheFigureSuffices) {
  EXPECT_EQ(byte_size_text(int64_t{16} << 30), "16.00 GiB");
  EXPECT_EQ(byte_size_text((int64_t{16} << 30) + 1), "16.01 GiB");
  EXPECT_EQ(byte_size_text(0), "0 B");
  EXPECT_EQ(byte_size_text(1023), "1023 B");
  EXPECT_EQ(byte_size_text(1536), "1.50 KiB");
  EXPECT_EQ(byte_size_text(4831360), "4.61 MiB");
}

}  // namespace
}  // namespace pipelab
