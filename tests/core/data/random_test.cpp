#include "core/data/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace pipelab {
namespace {

TEST(Random, SplitmixMatchesTheReferenceSequence) {
  // The first outputs of splitmix64 from state 0, as published with the
  // reference implementation (Vigna, prng.di.unimi.it).
  uint64_t state = 0;
  EXPECT_EQ(splitmix64_next(state), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64_next(state), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(splitmix64_next(state), 0x06C45D188009454Full);
}

TEST(Random, SameSeedAndStreamGiveTheSameSequence) {
  Rng a(42, 7);
  Rng b(42, 7);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(Random, OtherSeedOrStreamGivesAnotherSequence) {
  Rng base(42, 7);
  Rng other_seed(43, 7);
  Rng other_stream(42, 8);
  const uint64_t first = base.next_u64();
  EXPECT_NE(first, other_seed.next_u64());
  EXPECT_NE(first, other_stream.next_u64());
}

TEST(Random, UniformStaysInRangeAndBelowIsUnbiased) {
  Rng rng(1);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const uint64_t value = rng.below(7);
    ASSERT_LT(value, 7u);
    ++counts[value];
  }
  // Each bucket expects 10000 with a deviation of about 93: 5% is over five deviations.
  for (int count : counts) EXPECT_NEAR(count, 10000, 500);
}

TEST(Random, NormalHasMeanZeroAndDeviationOne) {
  Rng rng(3);
  const int n = 200000;
  double sum = 0.0;
  double sum_of_squares = 0.0;
  for (int i = 0; i < n; ++i) {
    const double value = rng.normal();
    ASSERT_TRUE(std::isfinite(value));
    sum += value;
    sum_of_squares += value * value;
  }
  const double mean = sum / n;
  EXPECT_NEAR(mean, 0.0, 0.01);  // standard error 1/sqrt(n) ~ 0.0022
  EXPECT_NEAR(sum_of_squares / n - mean * mean, 1.0, 0.02);
}

TEST(Random, PermutationHoldsEveryIndexOnce) {
  Rng rng(5);
  const auto order = random_permutation(1000, rng);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
  EXPECT_TRUE(random_permutation(0, rng).empty());
}

}  // namespace
}  // namespace pipelab
