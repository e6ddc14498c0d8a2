// Measured memory: every allocation change is a sample, categories are the
// real bytes, and in-flight memory comes and goes with the schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/sim/experiment_prediction.h"
#include "conformance_support.h"

namespace pipelab {
namespace {

using testing::run_experiment;
using testing::small_experiment;
using testing::with_plan;

int64_t category(const MemorySample& sample, MemoryCategory which) {
  return sample.bytes[static_cast<int>(which)];
}

// Workspace a backend keeps for the whole run (0 on the CPU, the cuBLAS
// workspace on CUDA): what device `device` holds there before its first op.
int64_t persistent_workspace(const Trace& trace, int device) {
  double first_op = 1e300;
  for (const TraceEvent& event : trace.events)
    if (event.device == device) first_op = std::min(first_op, event.t_begin);
  int64_t workspace = 0;
  for (const MemorySample& sample : trace.memory)
    if (sample.device == device && sample.t <= first_op)
      workspace = category(sample, MemoryCategory::Workspace);
  return workspace;
}

class MemoryAccounting : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(MemoryAccounting);

TEST_P(MemoryAccounting, EveryStepFreesItsActivationsBeforeItsUpdate) {
  for (ScheduleKind kind :
       {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::ZeroBubbleH1}) {
    const Experiment experiment = with_plan(small_experiment(), kind, 2, 4, 2);
    const testing::RunOutput run = run_experiment(experiment);
    ASSERT_EQ(run.state, RunState::Finished) << run.error;
    const std::vector<int64_t> parameter_bytes = testing::stage_parameter_bytes(experiment);

    std::map<int, std::vector<double>> update_begins;
    for (const TraceEvent& event : run.trace.events)
      if (event.op.kind == OpKind::Update) update_begins[event.device].push_back(event.t_begin);
    ASSERT_EQ(update_begins.size(), 4u);
    // The CUDA backend keeps each micro-batch's per-sample results (a double
    // loss and an int32 hit per row) on the loss stage until the step ends,
    // so that it never waits for its GPU mid-step: they may still be there
    // when the update begins. Nothing else may be.
    const int64_t rows = experiment.training.batch_size / (experiment.parallel.dp *
                                                           experiment.parallel.microbatches);
    const int64_t loss_rows_bytes = experiment.parallel.microbatches * rows *
                                    static_cast<int64_t>(sizeof(double) + sizeof(int32_t));
    for (const auto& [device, begins] : update_begins) {
      ASSERT_EQ(begins.size(), 20u);
      const int64_t bytes = parameter_bytes[device % 2];  // device = replica * pp + rank
      const int64_t workspace = persistent_workspace(run.trace, device);
      const bool loss_stage = device % 2 == 1;
      for (double begin : begins) {
        const MemorySample* last = nullptr;
        for (const MemorySample& sample : run.trace.memory)
          if (sample.device == device && sample.t <= begin) last = &sample;
        ASSERT_NE(last, nullptr);
        const std::string where =
            std::string(schedule_name(kind)) + " device " + std::to_string(device);
        EXPECT_EQ(category(*last, MemoryCategory::Weights), bytes) << where;
        EXPECT_EQ(category(*last, MemoryCategory::Gradients), bytes) << where;
        EXPECT_EQ(category(*last, MemoryCategory::OptimizerState), bytes) << where;
        EXPECT_EQ(category(*last, MemoryCategory::Activations), 0) << where;
        EXPECT_GE(category(*last, MemoryCategory::Workspace), workspace) << where;
        EXPECT_LE(category(*last, MemoryCategory::Workspace),
                  workspace + (loss_stage ? loss_rows_bytes : 0))
            << where;
        EXPECT_EQ(category(*last, MemoryCategory::StashedWeights), 0) << where;
        // Only the next step's first activations may already wait in a mailbox.
        EXPECT_LE(category(*last, MemoryCategory::CommBuffers), 4 * 8 * 16 * 4) << where;
      }
    }
  }
}

TEST_P(MemoryAccounting, StepBoundariesAreExactlyTheBaseline) {
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4, 2);
  const std::vector<int64_t> parameter_bytes = testing::stage_parameter_bytes(experiment);
  EventSink sink;
  ExecutorOptions options;
  options.steps = 3;
  std::unique_ptr<Executor> executor = make_executor(experiment, sink, options);
  testing::RunOutput output;
  for (int step = 1; step <= 3; ++step) {
    executor->step();
    testing::wait_for_pause(*executor);
    ASSERT_EQ(executor->steps_done(), step);
    testing::drain_into(sink, output);
    std::map<int, MemoryBytes> last;
    for (const MemorySample& sample : output.trace.memory) last[sample.device] = sample.bytes;
    ASSERT_EQ(last.size(), 4u);
    for (const auto& [device, bytes] : last)
      EXPECT_EQ(total_bytes(bytes), 3 * parameter_bytes[device % 2] +
                                        persistent_workspace(output.trace, device))
          << "device " << device << " after step " << step;
  }
  executor->stop();
}

TEST_P(MemoryAccounting, OneFOneBKeepsFewerActivationsThanGPipe) {
  auto peak_activations = [](ScheduleKind kind) {
    const testing::RunOutput run = run_experiment(with_plan(small_experiment(), kind, 2, 8));
    EXPECT_EQ(run.state, RunState::Finished) << run.error;
    int64_t peak = 0;
    for (const MemorySample& sample : run.trace.memory)
      if (sample.device == 0) peak = std::max(peak, category(sample, MemoryCategory::Activations));
    return peak;
  };
  const int64_t gpipe = peak_activations(ScheduleKind::GPipe);
  const int64_t one_f_one_b = peak_activations(ScheduleKind::OneFOneB);
  EXPECT_GT(one_f_one_b, 0);
  // GPipe keeps all 8 micro-batches in flight on stage 0, 1F1B at most pp = 2.
  EXPECT_LT(one_f_one_b, gpipe);
  EXPECT_LE(one_f_one_b * 3, gpipe);
}

// Optimizer offloading (ZeRO-Offload): the optimizer's state lives in host
// memory, so the device holds none and its Host bytes are that state's.
TEST_P(MemoryAccounting, OffloadedOptimizerStateIsHostMemory) {
  Experiment plain = with_plan(small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  plain.training.steps = 2;
  Experiment offload = plain;
  offload.parallel.offload = OffloadMode::Optimizer;
  const testing::RunOutput without = run_experiment(plain);
  const testing::RunOutput with = run_experiment(offload);
  ASSERT_EQ(without.state, RunState::Finished) << without.error;
  ASSERT_EQ(with.state, RunState::Finished) << with.error;
  const auto peak = [](const Trace& trace, int device, MemoryCategory which) {
    int64_t most = 0;
    for (const MemorySample& sample : trace.memory)
      if (sample.device == device) most = std::max(most, category(sample, which));
    return most;
  };
  for (int device = 0; device < 2; ++device) {
    const int64_t state = peak(without.trace, device, MemoryCategory::OptimizerState);
    EXPECT_GT(state, 0) << "device " << device;
    EXPECT_EQ(peak(with.trace, device, MemoryCategory::OptimizerState), 0) << "device " << device;
    EXPECT_EQ(peak(with.trace, device, MemoryCategory::Host), state) << "device " << device;
  }
}

TEST_P(MemoryAccounting, MessagesAreCommBuffersOnTheReceiver) {
  const testing::RunOutput run =
      run_experiment(with_plan(small_experiment(), ScheduleKind::GPipe, 2, 4));
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  int64_t on_receiver = 0;
  for (const MemorySample& sample : run.trace.memory)
    if (sample.device == 1)
      on_receiver = std::max(on_receiver, category(sample, MemoryCategory::CommBuffers));
  // A micro-batch of 8 samples x 16 features crosses the stage boundary.
  EXPECT_GE(on_receiver, 8 * 16 * 4);
}

TEST_P(MemoryAccounting, RecomputationKeepsOnlyStageInputsBetweenForwardAndBackward) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::GPipe, 2, 4);
  auto peak_on_stage_0 = [](const Experiment& e) {
    const testing::RunOutput run = run_experiment(e);
    EXPECT_EQ(run.state, RunState::Finished) << run.error;
    int64_t peak = 0;
    for (const MemorySample& sample : run.trace.memory)
      if (sample.device == 0) peak = std::max(peak, category(sample, MemoryCategory::Activations));
    return peak;
  };
  const int64_t kept = peak_on_stage_0(experiment);
  experiment.parallel.recompute = true;
  const int64_t recomputed = peak_on_stage_0(experiment);
  EXPECT_LT(recomputed, kept);
}

}  // namespace
}  // namespace pipelab
