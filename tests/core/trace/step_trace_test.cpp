// Cutting one step out of a recorded run: only its ops, memory and metrics,
// on a clock that starts with the step.
#include "core/trace/step_trace.h"

#include <gtest/gtest.h>

#include "tests/core/trace/trace_test_helpers.h"

namespace pipelab {
namespace {

// Two steps of the two-device trace, the second 10 s after the first.
Trace two_steps() {
  Trace trace = test::make_two_device_trace();
  const size_t per_step = trace.events.size();
  for (size_t i = 0; i < per_step; ++i) {
    TraceEvent later = trace.events[i];
    later.op.step = 1;
    later.t_begin += 10;
    later.t_end += 10;
    trace.events.push_back(later);
  }
  trace.memory = {{0, 1.0, {}}, {0, 12.0, {}}, {1, 19.0, {}}};
  StepMetrics first;
  first.step = 0;
  first.t_end = 8;
  StepMetrics second;
  second.step = 1;
  second.t_end = 18;
  trace.steps = {first, second};
  return trace;
}

TEST(StepTrace, KeepsOneStepOnItsOwnClock) {
  const Trace trace = two_steps();
  const Trace second = step_trace(trace, 1);
  ASSERT_EQ(second.events.size(), trace.events.size() / 2);
  for (size_t i = 0; i < second.events.size(); ++i) {
    EXPECT_EQ(second.events[i].op.step, 1);
    EXPECT_DOUBLE_EQ(second.events[i].t_begin, trace.events[i].t_begin);  // step 0's times
    EXPECT_DOUBLE_EQ(second.events[i].t_end, trace.events[i].t_end);
  }
  ASSERT_EQ(second.memory.size(), 1u);  // the sample at 12 s; 19 s is past the step's end
  EXPECT_DOUBLE_EQ(second.memory[0].t, 2.0);
  ASSERT_EQ(second.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(second.steps[0].t_end, 8.0);
  EXPECT_EQ(second.devices.size(), trace.devices.size());
  EXPECT_EQ(second.schedule, trace.schedule);
}

TEST(StepTrace, StartsWithTheFirstComputeOp) {
  Trace trace = two_steps();
  // Device 1 posts step 1's receive while step 0 still runs elsewhere.
  trace.events.push_back(test::make_event(1, OpKind::RecvActivation, 0, 7.0, 12.5, 1));
  trace.events.back().op.step = 1;
  const Trace second = step_trace(trace, 1);
  ASSERT_FALSE(second.events.empty());
  EXPECT_DOUBLE_EQ(second.events.front().t_begin, 0.0);  // the first F, at 10 s
  EXPECT_DOUBLE_EQ(second.events.back().t_begin, 0.0);   // the receive, cut at the step's start
  EXPECT_DOUBLE_EQ(second.events.back().t_end, 2.5);
}

TEST(StepTrace, AStepWithoutOpsIsEmpty) { EXPECT_TRUE(step_trace(two_steps(), 5).events.empty()); }

}  // namespace
}  // namespace pipelab
