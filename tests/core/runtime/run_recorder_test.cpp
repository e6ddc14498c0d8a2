#include "core/runtime/run_recorder.h"

#include <gtest/gtest.h>

#include <string>

namespace pipelab {
namespace {

// In a run over processes rank 0 may evaluate a step before the other ranks'
// reports of its end arrive: the result waits for the step.
TEST(RunRecorder, AValidationBeforeTheStepEndsIsKeptForIt) {
  EventSink sink;
  RunClock clock;
  RecorderSettings settings;
  settings.devices = 2;
  settings.total_steps = 1;
  settings.evaluated_steps = {0, 1};
  std::string failure;
  RunRecorder recorder(sink, clock, settings,
                       [&](const std::string& message) { failure = message; });
  LossResult loss;
  loss.loss_sum = 3;
  loss.samples = 2;
  recorder.loss(0, 0, 0, loss);
  recorder.device_finished_step(0);
  EvaluationResult validation;
  validation.loss = 0.25;
  validation.accuracy = 0.5;
  recorder.validation(0, validation);
  EXPECT_TRUE(sink.drain().steps.empty()) << "one device has not finished the step";
  recorder.device_finished_step(0);
  const EventBatch batch = sink.drain();
  ASSERT_EQ(batch.steps.size(), 1u);
  EXPECT_EQ(batch.steps[0].loss, 1.5);
  EXPECT_EQ(batch.steps[0].val_loss, 0.25);
  EXPECT_EQ(batch.steps[0].val_accuracy, 0.5);
  EXPECT_TRUE(failure.empty()) << failure;
}

}  // namespace
}  // namespace pipelab
