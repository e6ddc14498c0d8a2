#include "core/trace/bubbles.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/core/trace/trace_test_helpers.h"

namespace pipelab {
namespace {

using test::make_event;
using test::make_two_device_trace;

void expect_slice(const BubbleSlice& slice, int device, double t_begin, double t_end) {
  EXPECT_EQ(slice.device, device);
  EXPECT_DOUBLE_EQ(slice.t_begin, t_begin);
  EXPECT_DOUBLE_EQ(slice.t_end, t_end);
}

TEST(FindBubbles, FindsEveryGapBetweenComputeOpsOverTheWholeRun) {
  const auto bubbles = find_bubbles(make_two_device_trace());
  // Device 0 computes [0,2] and [4,8]; its send at [2,2.5] is not busy time.
  // Device 1 computes [2.5,5.5] and [6,7]; the run ends at 8.
  ASSERT_EQ(bubbles.size(), 4u);
  expect_slice(bubbles[0], 0, 2.0, 4.0);
  expect_slice(bubbles[1], 1, 0.0, 2.5);
  expect_slice(bubbles[2], 1, 5.5, 6.0);
  expect_slice(bubbles[3], 1, 7.0, 8.0);
}

TEST(FindBubbles, MinDurationDropsShortGaps) {
  const auto bubbles = find_bubbles(make_two_device_trace(), 1.0);
  ASSERT_EQ(bubbles.size(), 3u);  // [5.5, 6] on device 1 is too short
  expect_slice(bubbles[0], 0, 2.0, 4.0);
  expect_slice(bubbles[1], 1, 0.0, 2.5);
  expect_slice(bubbles[2], 1, 7.0, 8.0);
}

TEST(FindBubbles, CommunicationIsNotBusyTime) {
  Trace trace;
  trace.events = {make_event(0, OpKind::AllReduce, -1, 0.0, 3.0),
                  make_event(0, OpKind::Forward, 0, 3.0, 4.0)};
  const auto bubbles = find_bubbles(trace);
  ASSERT_EQ(bubbles.size(), 1u);
  expect_slice(bubbles[0], 0, 0.0, 3.0);
  EXPECT_DOUBLE_EQ(bubble_fraction(trace), 0.75);
}

TEST(FindBubbles, OverlappingComputeIsMergedAndAnIdleDeviceIsOneBubble) {
  Trace trace;
  trace.devices = describe_devices(1, 1, 3, 1);  // device 2 never runs anything
  trace.events = {make_event(0, OpKind::Forward, 0, 0.0, 2.0),
                  make_event(0, OpKind::BackwardWeight, 0, 1.0, 3.0),  // overlaps the forward
                  make_event(0, OpKind::BackwardInput, 0, 1.5, 2.5),   // inside both
                  make_event(1, OpKind::Recompute, 0, 4.0, 5.0)};
  const auto bubbles = find_bubbles(trace);
  ASSERT_EQ(bubbles.size(), 3u);
  expect_slice(bubbles[0], 0, 3.0, 5.0);
  expect_slice(bubbles[1], 1, 0.0, 4.0);
  expect_slice(bubbles[2], 2, 0.0, 5.0);
  // Busy: device 0 covers [0,3], device 1 [4,5], device 2 nothing.
  const auto per_device = bubble_fraction_per_device(trace);
  ASSERT_EQ(per_device.size(), 3u);
  EXPECT_DOUBLE_EQ(per_device[0], 1.0 - 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(per_device[1], 1.0 - 1.0 / 5.0);
  EXPECT_DOUBLE_EQ(per_device[2], 1.0);
}

TEST(BubbleFraction, IsOneMinusBusyOverDevicesTimesSpan) {
  const Trace trace = make_two_device_trace();
  // Compute time: device 0 is 1+1+2+2 = 6, device 1 is 1+2+1 = 4; span 8.
  EXPECT_DOUBLE_EQ(bubble_fraction(trace), 1.0 - (6.0 + 4.0) / (2 * 8.0));
  const auto per_device = bubble_fraction_per_device(trace);
  ASSERT_EQ(per_device.size(), 2u);
  EXPECT_DOUBLE_EQ(per_device[0], 1.0 - 6.0 / 8.0);
  EXPECT_DOUBLE_EQ(per_device[1], 1.0 - 4.0 / 8.0);
}

TEST(BubbleFraction, TheWindowStartsAtTheFirstEventNotAtZero) {
  // A measured run whose clock starts before the first op: the lead-in is not bubble.
  Trace trace;
  trace.events = {make_event(0, OpKind::Forward, 0, 10.0, 11.0),
                  make_event(0, OpKind::Backward, 0, 12.0, 14.0)};
  EXPECT_DOUBLE_EQ(bubble_fraction(trace), 0.25);
  const auto bubbles = find_bubbles(trace);
  ASSERT_EQ(bubbles.size(), 1u);
  expect_slice(bubbles[0], 0, 11.0, 12.0);
}

TEST(BubbleFraction, IsNaNWithoutEvents) {
  Trace trace;
  EXPECT_TRUE(find_bubbles(trace).empty());
  EXPECT_TRUE(std::isnan(bubble_fraction(trace)));
  trace.devices = describe_devices(1, 1, 2, 1);
  const auto per_device = bubble_fraction_per_device(trace);
  ASSERT_EQ(per_device.size(), 2u);
  EXPECT_TRUE(std::isnan(per_device[0]));
}

}  // namespace
}  // namespace pipelab
