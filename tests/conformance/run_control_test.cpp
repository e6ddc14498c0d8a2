// Run control: start in the background, pause, single-step, resume and stop,
// and a diverging run ending as Failed, never crashing.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "conformance_support.h"

namespace pipelab {
namespace {

using Clock = std::chrono::steady_clock;
using testing::small_experiment;
using testing::with_plan;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class RunControl : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(RunControl);

TEST_P(RunControl, StepsOneTrainingStepAtATimeThenResumes) {
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4, 2);
  const std::vector<double> straight = testing::run_experiment(experiment).losses();

  EventSink sink;
  ExecutorOptions options;
  options.start_paused = true;
  std::unique_ptr<Executor> executor = make_executor(experiment, sink, options);
  EXPECT_EQ(executor->state(), RunState::Ready);
  EXPECT_EQ(executor->steps_total(), 20);
  executor->start();
  testing::wait_for_pause(*executor);
  EXPECT_EQ(executor->state(), RunState::Paused);
  EXPECT_EQ(executor->steps_done(), 0);

  testing::RunOutput output;
  for (int step = 1; step <= 3; ++step) {
    executor->step();
    testing::wait_for_pause(*executor);
    EXPECT_EQ(executor->state(), RunState::Paused);
    EXPECT_EQ(executor->steps_done(), step);
    testing::drain_into(sink, output);
    EXPECT_EQ(static_cast<int>(output.trace.steps.size()), step);
  }
  // Halted: nothing more happens while paused.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(executor->steps_done(), 3);

  executor->resume();
  executor->wait();
  EXPECT_EQ(executor->state(), RunState::Finished);
  EXPECT_EQ(executor->steps_done(), 20);
  testing::drain_into(sink, output);
  // Stepping changes nothing in the numbers.
  EXPECT_EQ(output.losses(), straight);
}

TEST_P(RunControl, PauseHaltsMidRunAndResumeContinues) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::GPipe, 4, 4);
  EventSink sink;
  ExecutorOptions options;
  options.steps = 400;
  std::unique_ptr<Executor> executor = make_executor(experiment, sink, options);
  executor->start();
  while (executor->steps_done() < 3) std::this_thread::sleep_for(std::chrono::microseconds(100));
  executor->pause();
  testing::wait_for_pause(*executor);
  ASSERT_EQ(executor->state(), RunState::Paused);
  const int done = executor->steps_done();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(executor->steps_done(), done);
  // A step from a mid-step pause finishes the step under way.
  executor->step();
  testing::wait_for_pause(*executor);
  EXPECT_EQ(executor->steps_done(), done + 1);
  executor->resume();
  executor->wait();
  EXPECT_EQ(executor->state(), RunState::Finished);
  EXPECT_EQ(executor->steps_done(), 400);
}

TEST_P(RunControl, StopEndsQuicklyAndLeavesNothingBehind) {
  EventSink sink;
  {
    ExecutorOptions options;
    options.steps = 1000000;  // far more than the test waits for
    std::unique_ptr<Executor> executor = make_executor(
        with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4, 2), sink, options);
    executor->start();
    while (executor->steps_done() < 2) std::this_thread::sleep_for(std::chrono::microseconds(100));
    const Clock::time_point before = Clock::now();
    executor->stop();  // joins every worker
    EXPECT_LT(seconds_since(before), 0.5);
    EXPECT_EQ(executor->state(), RunState::Stopped);
    EXPECT_LT(executor->steps_done(), 1000000);
  }
  // Destroyed: every device's memory went back to nothing.
  testing::RunOutput output;
  testing::drain_into(sink, output);
  std::map<int, int64_t> last_total;
  for (const MemorySample& sample : output.trace.memory)
    last_total[sample.device] = total_bytes(sample.bytes);
  ASSERT_EQ(last_total.size(), 4u);
  for (const auto& [device, total] : last_total) EXPECT_EQ(total, 0) << "device " << device;
}

TEST_P(RunControl, StopWakesWorkersBlockedInReceives) {
  // Paused mid-run, the later stages wait in receives for halted senders.
  EventSink sink;
  ExecutorOptions options;
  options.steps = 1000000;
  std::unique_ptr<Executor> executor =
      make_executor(with_plan(small_experiment(), ScheduleKind::GPipe, 4, 8), sink, options);
  executor->start();
  while (executor->steps_done() < 1) std::this_thread::sleep_for(std::chrono::microseconds(100));
  executor->pause();
  testing::wait_for_pause(*executor);
  const Clock::time_point before = Clock::now();
  executor->stop();
  EXPECT_LT(seconds_since(before), 0.5);
  EXPECT_EQ(executor->state(), RunState::Stopped);
}

TEST_P(RunControl, StopBeforeStartAndWaitWithoutStartReturn) {
  EventSink sink;
  std::unique_ptr<Executor> executor = make_executor(small_experiment(), sink);
  executor->wait();  // never started: returns at once
  executor->stop();
  EXPECT_EQ(executor->state(), RunState::Stopped);
  executor->start();  // a stopped run does not start again
  EXPECT_EQ(executor->state(), RunState::Stopped);
}

TEST_P(RunControl, DivergenceFailsWithAMessageNamingTheStep) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 2);
  experiment.training.optimizer.lr = 1000;
  experiment.training.optimizer.momentum = 0.0;
  const testing::RunOutput run = testing::run_experiment(experiment);
  EXPECT_EQ(run.state, RunState::Failed);
  EXPECT_NE(run.error.find("training diverged at step "), std::string::npos) << run.error;
  EXPECT_NE(run.error.find("lower training.optimizer.lr (now 1000)"), std::string::npos)
      << run.error;
  ASSERT_FALSE(run.trace.steps.empty());
  EXPECT_FALSE(std::isfinite(run.trace.steps.back().loss));
  EXPECT_LT(run.trace.steps.size(), 20u);
  bool told = false;
  for (const std::string& message : run.messages)
    told |= message.find("diverged") != std::string::npos;
  EXPECT_TRUE(told);
}

}  // namespace
}  // namespace pipelab
