// Event timing on the host clock and NVTX ranges (skipped without a GPU).
#include <gtest/gtest.h>

#include <chrono>

#include "gpu/layers/device_context.h"
#include "gpu/executor/event_timer.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

TEST(EventTimerTest, MapsAnOpOntoTheHostClock) {
  PIPELAB_REQUIRE_GPU();
  DeviceContext context(0);
  context.make_current();
  EventClock clock(context.stream());
  const HostTime before = std::chrono::steady_clock::now();
  EventTimer timer;
  // Some real work: a 2048 x 2048 product.
  DeviceTensor a(2048, 2048, &context.allocator()), c(2048, 2048, &context.allocator());
  a.fill(0.5f);
  timer.begin(context.stream(), "F0 s0");
  for (int i = 0; i < 4; ++i) gemm(context.cublas(), a, false, a, false, c, 1.0f, 0.0f);
  timer.end(context.stream());
  const float ms = timer.elapsed_ms();
  const HostTime after = std::chrono::steady_clock::now();
  EXPECT_TRUE(timer.ready());
  EXPECT_GT(ms, 0.0f);

  const HostInterval interval = timer.resolve(clock);
  EXPECT_NEAR(interval.seconds() * 1e3, ms, 0.01);
  // The op ran after the first host reading and was over by the second (the
  // calibration's wake-up latency is well under the millisecond allowed).
  const auto slack = std::chrono::milliseconds(1);
  EXPECT_GE(interval.begin + slack, before);
  EXPECT_LE(interval.end, after + slack);
  EXPECT_EQ(c.to_vector()[0], 2048 * 0.25f);
}

TEST(EventTimerTest, StaysOnTheHostClockAcrossReAnchors) {
  PIPELAB_REQUIRE_GPU();
  DeviceContext context(0);
  context.make_current();
  EventClock clock(context.stream());
  EventTimer timer;
  const auto slack = std::chrono::milliseconds(1);
  for (int round = 0; round < 5; ++round) {
    clock.recalibrate(context.stream());
    const HostTime before = std::chrono::steady_clock::now();
    timer.begin(context.stream(), "F0 s0");
    timer.end(context.stream());
    const HostInterval interval = timer.resolve(clock);
    const HostTime after = std::chrono::steady_clock::now();
    EXPECT_GE(interval.begin + slack, before) << "round " << round;
    EXPECT_LE(interval.end, after + slack) << "round " << round;
    EXPECT_LE(interval.begin, interval.end);
  }
}

}  // namespace
}  // namespace pipelab::gpu
