// Host-only checks (no GPU needed) of bf16_math.h, the float32 -> bfloat16
// rounding that the device kernels share: a table of bit patterns worked out
// by hand (ties to even, carries, infinities, NaNs, denormals), and, for many
// floats, the nearest bf16 found another way (in double, from the two bf16
// neighbours).
#include "gpu/kernels/bf16_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/nn/counter_rng.h"

namespace pipelab::gpu {
namespace {

using bf16_math::bf16_bits_to_float;
using bf16_math::to_bf16_bits;

float from_bits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// A bf16 as a double, infinity read as 2^128: the value past the largest
// finite bf16 that round to nearest overflows toward.
double bf16_as_double(uint16_t bits) {
  const float value = bf16_bits_to_float(bits);
  if (!std::isinf(value)) return value;
  return std::copysign(std::ldexp(1.0, 128), value);
}

struct Rounding {
  uint32_t float_bits;
  uint16_t bf16_bits;
  const char* why;
};

TEST(Bf16MathTest, RoundsTheTableOfBitPatterns) {
  const Rounding table[] = {
      {0x00000000u, 0x0000u, "zero"},
      {0x80000000u, 0x8000u, "negative zero keeps its sign"},
      {0x3F800000u, 0x3F80u, "1 is exact"},
      {0xC0000000u, 0xC000u, "-2 is exact"},
      {0x3F808000u, 0x3F80u, "a tie rounds down to the even 0x3F80"},
      {0x3F818000u, 0x3F82u, "a tie rounds up to the even 0x3F82"},
      {0xBF818000u, 0xBF82u, "ties to even on negatives too"},
      {0x3F808001u, 0x3F81u, "just above half rounds up"},
      {0x3F807FFFu, 0x3F80u, "just below half rounds down"},
      {0x3FFFFFFFu, 0x4000u, "the mantissa's carry enters the exponent (2)"},
      {0x7F7F7FFFu, 0x7F7Fu, "rounds down to the largest finite bf16"},
      {0x7F7FFFFFu, 0x7F80u, "the largest float rounds up to infinity"},
      {0x7F800000u, 0x7F80u, "infinity"},
      {0xFF800000u, 0xFF80u, "negative infinity"},
      {0x7FC00000u, 0x7FC0u, "a quiet NaN"},
      {0x7F800001u, 0x7FC0u, "a NaN whose payload is all in the dropped bits stays NaN"},
      {0xFF80FFFFu, 0xFFC0u, "a negative NaN that would round to infinity stays NaN"},
      {0x7FFFFFFFu, 0x7FFFu, "a NaN with every bit set does not carry into the sign"},
      {0x00000001u, 0x0000u, "the smallest denormal rounds to zero"},
      {0x00008000u, 0x0000u, "a denormal tie rounds to the even zero"},
      {0x00018000u, 0x0002u, "a denormal tie rounds up to the even 0x0002"},
  };
  for (const Rounding& row : table)
    EXPECT_EQ(to_bf16_bits(from_bits(row.float_bits)), row.bf16_bits)
        << std::hex << "0x" << row.float_bits << ": " << row.why;
}

TEST(Bf16MathTest, BackToFloatIsExact) {
  EXPECT_EQ(bf16_bits_to_float(0x3F80u), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(0xC000u), -2.0f);
  EXPECT_EQ(bf16_bits_to_float(0x7F80u), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(0x7FC0u)));
  for (uint32_t bits = 0; bits <= 0xFFFFu; ++bits) {
    const float value = bf16_bits_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    ASSERT_EQ(to_bf16_bits(value), bits) << std::hex << bits;  // every bf16 is its own rounding
  }
}

TEST(Bf16MathTest, PicksTheNearestBf16ForManyFloats) {
  for (uint64_t i = 0; i < 200000; ++i) {
    // Finite floats of every exponent: random bits with the exponent kept below 255.
    uint32_t bits = static_cast<uint32_t>(mix64(i));
    if ((bits & 0x7F800000u) == 0x7F800000u) bits &= ~0x00800000u;
    const float value = from_bits(bits);
    const uint16_t down = static_cast<uint16_t>(bits >> 16);  // toward zero
    const uint16_t up = static_cast<uint16_t>(down + 1);      // away from zero
    const double below = std::fabs(value - bf16_as_double(down));
    const double above = std::fabs(bf16_as_double(up) - value);
    const uint16_t nearest = below < above   ? down
                             : above < below ? up
                                             : (down % 2 == 0 ? down : up);
    ASSERT_EQ(to_bf16_bits(value), nearest) << std::hex << bits;
  }
}

TEST(Bf16MathTest, PairsPutTheFirstValueInTheLowHalf) {
  const float low = 1.00390625f, high = -3.5f;  // a tie (to even) and an exact value
  EXPECT_EQ(bf16_math::to_bf16_pair_bits(low, high),
            uint32_t{to_bf16_bits(low)} | (uint32_t{to_bf16_bits(high)} << 16));
  EXPECT_EQ(bf16_math::to_bf16_pair_bits(low, high), 0xC0603F80u);
}

}  // namespace
}  // namespace pipelab::gpu
