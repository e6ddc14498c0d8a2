#include "core/trace/run_statistics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/trace/bubbles.h"
#include "trace_test_helpers.h"

namespace pipelab {
namespace {

using test::make_event;

StepMetrics make_step(int step, double t_end, double step_time, double bubble, double loss) {
  StepMetrics metrics;
  metrics.step = step;
  metrics.t_end = t_end;
  metrics.step_time_s = step_time;
  metrics.samples_per_s = 100.0 / step_time;  // a batch of 100 samples
  metrics.bubble_measured = bubble;
  metrics.loss = loss;
  return metrics;
}

MemorySample make_sample(int device, double t, int64_t activations) {
  MemorySample sample;
  sample.device = device;
  sample.t = t;
  sample.bytes[static_cast<int>(MemoryCategory::Activations)] = activations;
  return sample;
}

// One device, three steps: a slow warm-up step [0, 10] that allocates a lot,
// then two steps of 2 s each, half busy.
Trace three_step_trace() {
  Trace trace;
  trace.source = "measured";
  trace.devices = describe_devices(1, 1, 1, 1);
  trace.events = {make_event(0, OpKind::Forward, 0, 0.0, 9.0),
                  make_event(0, OpKind::Forward, 0, 10.0, 11.0),
                  make_event(0, OpKind::Forward, 0, 12.0, 13.0)};
  trace.steps = {make_step(0, 10.0, 10.0, 0.1, 3.0), make_step(1, 12.0, 2.0, 0.5, 2.0),
                 make_step(2, 14.0, 2.0, 0.5, 1.0)};
  trace.memory = {make_sample(0, 0.5, 1000), make_sample(0, 9.5, 200), make_sample(0, 10.5, 300),
                  make_sample(0, 11.5, 100)};
  return trace;
}

TEST(RunStatistics, LeavesTheWarmupStepOut) {
  const Trace trace = three_step_trace();
  EXPECT_DOUBLE_EQ(warmup_end_time(trace), 10.0);
  const RunStatistics stats = run_statistics(trace);
  EXPECT_FALSE(stats.includes_warmup);
  EXPECT_EQ(stats.steps_counted, 2);
  EXPECT_DOUBLE_EQ(stats.step_time_s, 2.0);      // not (10 + 2 + 2) / 3
  EXPECT_DOUBLE_EQ(stats.samples_per_s, 50.0);   // 200 samples in 4 s
  EXPECT_DOUBLE_EQ(stats.bubble_fraction, 0.5);  // not the warm-up's 0.1
  EXPECT_DOUBLE_EQ(stats.final_loss, 1.0);
  // The warm-up's 1000 bytes are left out; its last level (200) is carried in.
  ASSERT_EQ(stats.peak_bytes_per_device.size(), 1u);
  EXPECT_EQ(stats.peak_bytes_per_device[0], 300);
  // Events from 10 s on: busy [10, 11] and [12, 13] of [10, 13].
  ASSERT_EQ(stats.utilisation_per_device.size(), 1u);
  EXPECT_NEAR(stats.utilisation_per_device[0], 2.0 / 3.0, 1e-12);
}

TEST(RunStatistics, ARunOfOneStepIsAllWarmupAndSaysSo) {
  Trace trace = three_step_trace();
  trace.steps.resize(1);
  const RunStatistics stats = run_statistics(trace);
  EXPECT_TRUE(std::isnan(warmup_end_time(trace)));  // nothing is left out, nothing marked
  EXPECT_TRUE(stats.includes_warmup);
  EXPECT_EQ(stats.steps_counted, 1);
  EXPECT_DOUBLE_EQ(stats.step_time_s, 10.0);
  EXPECT_EQ(stats.peak_bytes_per_device[0], 1000);
}

TEST(RunStatistics, WithoutPerStepBubblesTheCountedEventsGiveIt) {
  Trace trace = test::make_two_device_trace();
  const RunStatistics whole = run_statistics(trace);  // no steps: everything counts
  EXPECT_TRUE(whole.includes_warmup);
  EXPECT_TRUE(std::isnan(whole.step_time_s));
  EXPECT_DOUBLE_EQ(whole.bubble_fraction, bubble_fraction(trace));
  EXPECT_EQ(whole.utilisation_per_device.size(), 2u);
}

TEST(RunStatistics, AnEmptyTraceHasNoNumbers) {
  const RunStatistics stats = run_statistics(Trace{});
  EXPECT_TRUE(std::isnan(warmup_end_time(Trace{})));
  EXPECT_TRUE(std::isnan(stats.bubble_fraction));
  EXPECT_TRUE(std::isnan(stats.final_loss));
  EXPECT_TRUE(stats.peak_bytes_per_device.empty());
}

}  // namespace
}  // namespace pipelab
