// Host-only checks of the event clock's arithmetic (clock_calibration.h): the
// best calibration sample, the bounded slew of a re-anchor, and the
// per-stream monotone clamp. No GPU needed.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "gpu/executor/clock_calibration.h"

namespace pipelab::gpu {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

const HostTime kOrigin = HostTime{} + std::chrono::seconds(1000);
HostTime at_us(int64_t us) { return kOrigin + microseconds(us); }

TEST(ClockCalibrationTest, TheBestSampleIsTheOneWithTheLeastWakeUpDelay) {
  // The anchor completed at 0 us; the samples completed 2, 4, 6, 8 us after
  // it, and the host saw each late by 30, 3, 50, 9 us.
  const std::vector<ClockSample> samples = {{at_us(30), microseconds(0)},
                                            {at_us(2 + 3), microseconds(2)},
                                            {at_us(4 + 50), microseconds(4)},
                                            {at_us(6 + 9), microseconds(6)}};
  EXPECT_EQ(best_anchor_time(samples), at_us(3));
  EXPECT_EQ(best_anchor_time(std::vector<ClockSample>{{at_us(7), microseconds(0)}}), at_us(7));
}

TEST(ClockCalibrationTest, TheSlewLimitGrowsWithTheTimeSinceTheLastAnchor) {
  EXPECT_EQ(max_slew(HostDuration::zero()), kSlewFixed);
  EXPECT_EQ(max_slew(std::chrono::seconds(1)), kSlewFixed + microseconds(200));
  EXPECT_EQ(max_slew(std::chrono::seconds(10)), kSlewFixed + milliseconds(2));
  EXPECT_EQ(max_slew(-std::chrono::seconds(1)), kSlewFixed);  // never below the fixed part
}

TEST(ClockCalibrationTest, AReAnchorMovesTowardsTheMeasurementByABoundedStep) {
  const HostDuration limit = microseconds(40);
  // Within the limit: the measurement is taken as it is.
  EXPECT_EQ(slewed_anchor_time(at_us(1000), at_us(1010), limit), at_us(1010));
  EXPECT_EQ(slewed_anchor_time(at_us(1000), at_us(990), limit), at_us(990));
  // A late wake-up (a jump of 500 us) moves the mapping by 40 us only, either way.
  EXPECT_EQ(slewed_anchor_time(at_us(1000), at_us(1500), limit), at_us(1040));
  EXPECT_EQ(slewed_anchor_time(at_us(1000), at_us(500), limit), at_us(960));
}

TEST(ClockCalibrationTest, RepeatedSlewsCloseAPersistentOffset) {
  // The mapping puts the anchor 300 us before the truth. Each re-anchor, a
  // second later, may close max_slew(1 s) = 225 us of the gap.
  const std::chrono::seconds second(1);
  HostTime mapped = at_us(0);
  const HostTime truth = at_us(300);
  mapped = slewed_anchor_time(mapped + second, truth + second, max_slew(second));
  EXPECT_EQ(truth + second - mapped, microseconds(75));
  mapped = slewed_anchor_time(mapped + second, truth + 2 * second, max_slew(second));
  EXPECT_EQ(mapped, truth + 2 * second);
}

TEST(StreamMonotonicityTest, AnOpNeverBeginsBeforeThePreviousOpOnItsStreamEnded) {
  StreamMonotonicity monotone;
  const uintptr_t compute = 1;
  HostInterval first = monotone.clamp(compute, 1, 2, {at_us(0), at_us(100)});
  EXPECT_EQ(first.begin, at_us(0));
  EXPECT_EQ(first.end, at_us(100));
  // A re-anchor mapped the next op 20 us too early: it starts where the first ended.
  HostInterval second = monotone.clamp(compute, 3, 4, {at_us(90), at_us(150)});
  EXPECT_EQ(second.begin, at_us(100));
  EXPECT_EQ(second.end, at_us(150));
  // An op mapped wholly before the previous end collapses onto it.
  HostInterval third = monotone.clamp(compute, 5, 6, {at_us(120), at_us(140)});
  EXPECT_EQ(third.begin, at_us(150));
  EXPECT_EQ(third.end, at_us(150));
}

TEST(StreamMonotonicityTest, StreamsAreIndependent) {
  StreamMonotonicity monotone;
  const uintptr_t compute = 1, comm = 2;
  monotone.clamp(compute, 1, 2, {at_us(0), at_us(100)});
  // A send on the comm stream overlapping the compute op keeps its times.
  const HostInterval send = monotone.clamp(comm, 3, 4, {at_us(50), at_us(80)});
  EXPECT_EQ(send.begin, at_us(50));
  EXPECT_EQ(send.end, at_us(80));
}

TEST(StreamMonotonicityTest, AnEnclosingOpKeepsItsBeginAndEndsAfterTheNestedOne) {
  StreamMonotonicity monotone;
  const uintptr_t compute = 1;
  monotone.clamp(compute, 1, 2, {at_us(0), at_us(10)});
  // A forward (events 3 .. 6) with a tensor-parallel all-reduce inside (4 .. 5):
  // the all-reduce ends first and is reported first.
  const HostInterval all_reduce = monotone.clamp(compute, 4, 5, {at_us(40), at_us(60)});
  EXPECT_EQ(all_reduce.begin, at_us(40));
  EXPECT_EQ(all_reduce.end, at_us(60));
  const HostInterval forward = monotone.clamp(compute, 3, 6, {at_us(20), at_us(55)});
  EXPECT_EQ(forward.begin, at_us(20));  // begins before the all-reduce: left alone
  EXPECT_EQ(forward.end, at_us(60));    // but cannot end before it
  monotone.clear();
  const HostInterval fresh = monotone.clamp(compute, 7, 8, {at_us(5), at_us(6)});
  EXPECT_EQ(fresh.begin, at_us(5));
}

}  // namespace
}  // namespace pipelab::gpu
