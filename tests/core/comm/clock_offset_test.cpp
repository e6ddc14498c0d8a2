#include "core/comm/clock_offset.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace pipelab {
namespace {

TEST(ClockOffset, TheShortestRoundTripGivesTheOffsetAndItsBound) {
  // The remote clock is 5 s ahead; the second ping's answer came back fastest.
  const std::vector<ClockSample> samples = {{0.0, 5.5, 1.0}, {2.0, 7.1, 2.2}, {3.0, 8.3, 3.5}};
  const ClockOffset offset = estimate_clock_offset(samples);
  EXPECT_DOUBLE_EQ(offset.offset_s, 7.1 - 2.1);
  EXPECT_NEAR(offset.uncertainty_s, 0.1, 1e-12);
  EXPECT_THROW(estimate_clock_offset({}), std::invalid_argument);
}

TEST(ClockOffset, RunTimesMoveOntoTheReferenceClock) {
  // A rank whose steady clock is 100 s ahead started its run 0.25 s after rank 0.
  const ClockOffset ahead{100.0, 0.001};
  const double reference_origin = 50.0;
  const double origin = 150.25;
  EXPECT_DOUBLE_EQ(on_reference_clock(1.0, origin, ahead, reference_origin), 1.25);
  EXPECT_EQ(on_reference_clock(0.0, origin, ahead, reference_origin), 0.0)
      << "before the start stays 0";
}

}  // namespace
}  // namespace pipelab
