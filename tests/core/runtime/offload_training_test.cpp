// Activation offloading on the CPU executor: the activations really move to
// the host pool and back, so training is bit-identical to training without
// it, the event stream shows each copy with its bytes, and the device holds
// less at its peak. Optimizer offloading steps a host optimizer, same numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/io/experiment_io.h"
#include "core/schedule/lowering.h"
#include "tests/support/runtime_test_support.h"

namespace pipelab {
namespace {

constexpr int kActivations = static_cast<int>(MemoryCategory::Activations);
constexpr int kHost = static_cast<int>(MemoryCategory::Host);

Experiment offloaded(Experiment experiment) {
  experiment.parallel.offload = OffloadMode::Activations;
  return experiment;
}

// The largest value of `category` on `device` over the run.
int64_t peak_of(const Trace& trace, int device, int category) {
  int64_t peak = 0;
  for (const MemorySample& sample : trace.memory)
    if (sample.device == device) peak = std::max(peak, sample.bytes[category]);
  return peak;
}

MemoryBytes last_sample_of(const Trace& trace, int device) {
  MemoryBytes last{};
  for (const MemorySample& sample : trace.memory)
    if (sample.device == device) last = sample.bytes;
  return last;
}

void expect_same_training_with_and_without_offload(const Experiment& plain) {
  const testing::RunOutput without = testing::run_experiment(plain);
  const testing::RunOutput with = testing::run_experiment(offloaded(plain));
  ASSERT_EQ(without.state, RunState::Finished) << without.error;
  ASSERT_EQ(with.state, RunState::Finished) << with.error;
  // Copies, not approximations: every step's loss is the same double.
  EXPECT_EQ(with.losses(), without.losses());

  // Every OFFLOAD and RELOAD the schedule lists ran, each moving the bytes
  // of its micro-batch's activations, the same both ways.
  const Schedule schedule = build_schedule(offloaded(plain).parallel);
  int64_t listed = 0;
  for (const std::vector<Op>& ops : schedule.devices)
    listed += std::count_if(ops.begin(), ops.end(), [](const Op& op) { return op.kind == OpKind::Offload; });
  ASSERT_GT(listed, 0);
  std::map<std::tuple<int, int, int, int>, int64_t> offloaded_bytes;  // device, stage, step, micro-batch
  int offloads = 0, reloads = 0;
  for (const TraceEvent& event : with.trace.events) {
    const auto key = std::make_tuple(event.device, event.op.stage, event.op.step, event.op.microbatch);
    if (event.op.kind == OpKind::Offload) {
      ++offloads;
      EXPECT_GT(event.bytes, 0) << op_label(event.op);
      offloaded_bytes[key] = event.bytes;
    } else if (event.op.kind == OpKind::Reload) {
      ++reloads;
      EXPECT_EQ(event.bytes, offloaded_bytes.at(key)) << op_label(event.op);
    }
  }
  EXPECT_EQ(offloads, listed * plain.training.steps);
  EXPECT_EQ(reloads, offloads);

  // Device 0 offloads: its activations peak lower, its host pool is used,
  // and after the run every device holds what it holds without offloading.
  EXPECT_LT(peak_of(with.trace, 0, kActivations), peak_of(without.trace, 0, kActivations));
  EXPECT_GT(peak_of(with.trace, 0, kHost), 0);
  for (int device = 0; device < plain.parallel.devices(); ++device)
    EXPECT_EQ(last_sample_of(with.trace, device), last_sample_of(without.trace, device)) << "device " << device;
}

TEST(OffloadTraining, GPipeMlpTrainsBitIdentically) {
  Experiment experiment = testing::with_plan(testing::small_experiment(), ScheduleKind::GPipe, 2, 4);
  experiment.training.steps = 4;
  expect_same_training_with_and_without_offload(experiment);
}

TEST(OffloadTraining, ZeroBubbleMlpTrainsBitIdentically) {
  Experiment experiment = testing::with_plan(testing::small_experiment(), ScheduleKind::ZeroBubbleH1, 2, 4);
  experiment.training.steps = 4;
  expect_same_training_with_and_without_offload(experiment);
}

TEST(OffloadTraining, GPipeTransformerMovesItsBlockCachesToo) {
  Experiment experiment = testing::with_plan(testing::tiny_gpt_experiment(), ScheduleKind::GPipe, 2, 4);
  experiment.training.steps = 3;
  expect_same_training_with_and_without_offload(experiment);
}

TEST(OffloadTraining, RecomputeWithOffloadIsRefusedWithTheFix) {
  Experiment experiment = offloaded(testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 2, 4));
  experiment.parallel.recompute = true;
  const std::vector<std::string> problems = validate_experiment(experiment);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("choose one"), std::string::npos) << problems[0];
}

// Optimizer offloading: the update runs on the stage's host view with its
// state counted as Host; the numbers are the same updates.
TEST(OptimizerOffloadTraining, TrainsBitIdenticallyWithTheStateOnTheHost) {
  Experiment plain = testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 2, 4);
  plain.training.steps = 4;
  Experiment offload = plain;
  offload.parallel.offload = OffloadMode::Optimizer;
  const testing::RunOutput without = testing::run_experiment(plain);
  const testing::RunOutput with = testing::run_experiment(offload);
  ASSERT_EQ(without.state, RunState::Finished) << without.error;
  ASSERT_EQ(with.state, RunState::Finished) << with.error;
  EXPECT_EQ(with.losses(), without.losses());
  constexpr int kOptimizerState = static_cast<int>(MemoryCategory::OptimizerState);
  for (int device = 0; device < 2; ++device) {
    const int64_t state = peak_of(without.trace, device, kOptimizerState);
    EXPECT_GT(state, 0);
    EXPECT_EQ(peak_of(with.trace, device, kOptimizerState), 0);
    EXPECT_EQ(peak_of(with.trace, device, kHost), state);
  }
  int transfers = 0;
  for (const TraceEvent& event : with.trace.events)
    if (op_kind_facts(event.op.kind).family == OpFamily::HostTransfer) {
      ++transfers;
      EXPECT_EQ(event.op.microbatch, -1);
      EXPECT_GT(event.bytes, 0);
    }
  EXPECT_EQ(transfers, 2 * 2 * plain.training.steps);  // OFFLOAD and RELOAD per device and step
}

}  // namespace
}  // namespace pipelab
