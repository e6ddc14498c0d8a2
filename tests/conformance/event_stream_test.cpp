// What a run reports: one measured event per scheduled op, on one clock, and
// one StepMetrics per step with every field filled in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/cli/run_prediction.h"
#include "core/runtime/threaded_executor.h"
#include "conformance_support.h"

namespace pipelab {
namespace {

class EventStream : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(EventStream);

TEST_P(EventStream, EveryScheduledOpIsReportedOnceWithItsMeasuredTimes) {
  Experiment experiment =
      testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 2, 2, 2, 2);
  EventSink sink;
  ExecutorOptions options;
  options.prediction = predict_run(experiment);
  const std::unique_ptr<Executor> built = make_executor(experiment, sink, options);
  // Every backend's executor is a ThreadedExecutor: its program is the schedule it ran.
  auto& executor = dynamic_cast<ThreadedExecutor&>(*built);
  executor.start();
  executor.wait();
  ASSERT_EQ(executor.state(), RunState::Finished) << executor.error();
  testing::RunOutput output;
  testing::drain_into(sink, output);

  // Count ops per (device, kind) in the program and in the events.
  std::map<std::pair<int, int>, int> scheduled, reported;
  for (int w = 0; w < executor.program().window_count(); ++w)
    for (int d = 0; d < executor.device_count(); ++d)
      for (const Op& op : executor.program().window(w).schedule->devices[d])
        ++scheduled[{d, static_cast<int>(op.kind)}];
  double last_end = 0;
  for (const TraceEvent& event : output.trace.events) {
    ++reported[{event.device, static_cast<int>(event.op.kind)}];
    EXPECT_EQ(event.device, event.op.device);
    EXPECT_LE(event.t_begin, event.t_end);
    EXPECT_GE(event.t_begin, 0.0);
    last_end = std::max(last_end, event.t_end);
    if (is_communication(event.op.kind) && event.op.kind != OpKind::AllReduce) {
      EXPECT_GT(event.bytes, 0) << op_label(event.op);
    }
  }
  EXPECT_EQ(reported, scheduled);

  // A device's compute ops follow each other without overlapping.
  for (int d = 0; d < executor.device_count(); ++d) {
    double previous_end = 0;
    for (const TraceEvent& event : output.trace.events) {
      if (event.device != d || !is_compute(event.op.kind)) continue;
      EXPECT_GE(event.t_begin, previous_end);
      previous_end = event.t_end;
    }
  }

  ASSERT_EQ(output.trace.steps.size(), 20u);
  double previous_step_end = 0;
  for (const StepMetrics& step : output.trace.steps) {
    EXPECT_TRUE(std::isfinite(step.loss));
    EXPECT_GE(step.accuracy, 0.0);
    EXPECT_LE(step.accuracy, 1.0);
    EXPECT_GT(step.step_time_s, 0.0);
    EXPECT_NEAR(step.samples_per_s * step.step_time_s, 32.0, 1e-6);
    EXPECT_GE(step.bubble_measured, 0.0);
    EXPECT_LT(step.bubble_measured, 1.0);
    EXPECT_TRUE(std::isfinite(step.bubble_simulated));
    EXPECT_GE(step.t_end, previous_step_end);
    previous_step_end = step.t_end;
  }
  EXPECT_LE(previous_step_end, last_end + 1.0);
  // Validated after the last step only (eval_every = 0).
  for (size_t i = 0; i + 1 < output.trace.steps.size(); ++i)
    EXPECT_TRUE(std::isnan(output.trace.steps[i].val_loss));
  EXPECT_TRUE(std::isfinite(output.trace.steps.back().val_loss));
  EXPECT_GE(output.trace.steps.back().val_accuracy, 0.0);

  // Memory samples carry the same clock.
  for (const MemorySample& sample : output.trace.memory) EXPECT_LE(sample.t, last_end + 1.0);
}

TEST_P(EventStream, EvaluatesEveryEvalEverySteps) {
  Experiment experiment =
      testing::with_plan(testing::small_experiment(), ScheduleKind::PipeDream, 2, 2);
  experiment.training.eval_every = 5;
  const testing::RunOutput run = testing::run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  ASSERT_EQ(run.trace.steps.size(), 20u);
  for (const StepMetrics& step : run.trace.steps)
    EXPECT_EQ(std::isfinite(step.val_loss), (step.step + 1) % 5 == 0) << "step " << step.step;
  // Steps are reported in order.
  for (size_t i = 0; i < run.trace.steps.size(); ++i)
    EXPECT_EQ(run.trace.steps[i].step, static_cast<int>(i));
}

TEST_P(EventStream, ValidationMatchesTheSingleDeviceModel) {
  // Evaluation reassembles the stages' (and shards') weights into one model.
  Experiment experiment = testing::small_experiment();
  const testing::RunOutput single = testing::run_experiment(testing::on_backend(experiment, "cpu"));
  const testing::RunOutput split =
      testing::run_experiment(testing::with_plan(experiment, ScheduleKind::OneFOneB, 2, 2, 1, 2));
  ASSERT_EQ(split.state, RunState::Finished) << split.error;
  EXPECT_NEAR(split.trace.steps.back().val_loss, single.trace.steps.back().val_loss, 1e-4);
  EXPECT_NEAR(split.trace.steps.back().val_accuracy, single.trace.steps.back().val_accuracy, 1e-9);
}

}  // namespace
}  // namespace pipelab
