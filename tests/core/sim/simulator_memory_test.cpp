// Memory over a simulated run: in-flight micro-batches, activations, weight
// versions, recomputation and the byte categories.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/schedule/lowering.h"
#include "core/io/hardware_catalogue.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

constexpr int kActivations = static_cast<int>(MemoryCategory::Activations);
constexpr int kStashed = static_cast<int>(MemoryCategory::StashedWeights);

ParallelPlan pipeline(ScheduleKind kind, int p, int m) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.pp = p;
  plan.microbatches = m;
  return plan;
}

SimulationResult run_unit(const ParallelPlan& plan, const UnitCosts& costs = UnitCosts{}) {
  return simulate(build_schedule(plan), CostModel::unit(costs));
}

// Identical stages with round byte counts, timed on the cpu-core profile.
std::vector<StageProfile> uniform_profiles(int stages, int64_t params, int64_t activation_bytes,
                                           int64_t input_bytes, double flops = 1e6) {
  StageProfile stage;
  stage.forward_flops = flops;
  stage.backward_input_flops = flops;
  stage.backward_weight_flops = flops;
  stage.params = params;
  stage.activation_bytes = activation_bytes;
  stage.input_bytes = input_bytes;
  stage.output_bytes = input_bytes;
  // Full recomputation keeps the input and rebuilds the rest (an MLP stage).
  stage.recompute_kept_bytes = std::min(input_bytes, activation_bytes);
  stage.recompute_working_bytes = activation_bytes - stage.recompute_kept_bytes;
  stage.recompute_forward_peak_bytes = activation_bytes;
  return std::vector<StageProfile>(stages, stage);
}

SimulationResult run_profiled(const ParallelPlan& plan, const std::vector<StageProfile>& stages,
                              int optimizer_slots) {
  return simulate(
      build_schedule(plan, stages),
      CostModel::from_profiles(stages, *find_device_profile("cpu-core"), optimizer_slots));
}

TEST(SimulatorMemoryTest, OneFOneBHoldsAtMostPMinusSMicrobatches) {
  for (auto [p, m] : {std::pair{4, 8}, {4, 2}, {5, 5}, {3, 1}}) {
    const SimulationResult one_f_one_b = run_unit(pipeline(ScheduleKind::OneFOneB, p, m));
    const SimulationResult gpipe = run_unit(pipeline(ScheduleKind::GPipe, p, m));
    for (int s = 0; s < p; ++s) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) +
                   " s=" + std::to_string(s));
      EXPECT_EQ(one_f_one_b.per_device[s].peak_inflight_microbatches, std::min(p - s, m));
      EXPECT_EQ(gpipe.per_device[s].peak_inflight_microbatches, m);
      // Unit mode counts one activation unit per in-flight micro-batch.
      EXPECT_EQ(one_f_one_b.per_device[s].peak_bytes[kActivations], std::min(p - s, m));
      EXPECT_EQ(gpipe.per_device[s].peak_bytes[kActivations], m);
    }
  }
}

TEST(SimulatorMemoryTest, OneFOneBNeedsLessActivationMemoryThanGPipe) {
  const auto stages = uniform_profiles(4, 1000, 1 << 20, 1 << 16);
  const SimulationResult gpipe = run_profiled(pipeline(ScheduleKind::GPipe, 4, 16), stages, 0);
  const SimulationResult one_f_one_b =
      run_profiled(pipeline(ScheduleKind::OneFOneB, 4, 16), stages, 0);
  for (int s = 0; s < 4; ++s) {
    EXPECT_LT(one_f_one_b.per_device[s].peak_bytes[kActivations],
              gpipe.per_device[s].peak_bytes[kActivations]);
    EXPECT_EQ(gpipe.per_device[s].peak_bytes[kActivations], 16 * (1 << 20));
    EXPECT_EQ(one_f_one_b.per_device[s].peak_bytes[kActivations], (4 - s) * (1 << 20));
    EXPECT_LT(one_f_one_b.per_device[s].peak_total_bytes, gpipe.per_device[s].peak_total_bytes);
  }
}

TEST(SimulatorMemoryTest, WeightsGradientsAndOptimizerStateInBytes) {
  const auto stages = uniform_profiles(2, 1000, 4096, 512);
  const SimulationResult result = run_profiled(pipeline(ScheduleKind::OneFOneB, 2, 4), stages, 2);
  for (const DeviceSimStats& device : result.per_device) {
    EXPECT_EQ(device.peak_bytes[static_cast<int>(MemoryCategory::Weights)], 4000);
    EXPECT_EQ(device.peak_bytes[static_cast<int>(MemoryCategory::Gradients)], 4000);
    EXPECT_EQ(device.peak_bytes[static_cast<int>(MemoryCategory::OptimizerState)], 8000);
    EXPECT_EQ(device.peak_bytes[kStashed], 0);
    EXPECT_LE(device.peak_total_bytes, total_bytes(device.peak_bytes));
    EXPECT_GE(device.peak_total_bytes, 4000 + 8000 + 4096);
  }
  // Samples come per device in time order, and the run ends with every
  // activation freed and the gradients released by the optimizer step.
  const std::vector<MemorySample>& memory = result.trace.memory;
  ASSERT_FALSE(memory.empty());
  for (size_t i = 1; i < memory.size(); ++i) {
    if (memory[i].device == memory[i - 1].device) {
      EXPECT_LT(memory[i - 1].t, memory[i].t);
    }
  }
  for (int d = 0; d < 2; ++d) {
    auto last = std::find_if(memory.rbegin(), memory.rend(),
                             [d](const MemorySample& s) { return s.device == d; });
    ASSERT_NE(last, memory.rend());
    EXPECT_EQ(last->bytes[kActivations], 0);
    EXPECT_EQ(last->bytes[static_cast<int>(MemoryCategory::Gradients)], 0);
    EXPECT_EQ(last->bytes[static_cast<int>(MemoryCategory::Weights)], 4000);
  }
}

// The last stage computes each micro-batch's loss gradient right after its
// F and holds it until its B: GPipe's last stage holds all but the running
// one's when its first B starts, 1F1B's none beyond the running one.
TEST(SimulatorMemoryTest, TheLastStageHoldsEachLossGradientUntilItsBackward) {
  auto stages = uniform_profiles(2, 1000, 4096, 512);
  stages[1].loss_gradient_bytes = 256;
  const SimulationResult gpipe = run_profiled(pipeline(ScheduleKind::GPipe, 2, 4), stages, 0);
  const SimulationResult one_f_one_b =
      run_profiled(pipeline(ScheduleKind::OneFOneB, 2, 4), stages, 0);
  EXPECT_EQ(gpipe.per_device[1].peak_bytes[kActivations], 4 * 4096 + 3 * 256);
  EXPECT_EQ(one_f_one_b.per_device[1].peak_bytes[kActivations], 4096);
}

// A running B holds its gradient buffers at their peak, net of the kept
// activations it has freed by then (StageProfile::backward_peak_bytes), not
// the largest layer's buffers on top of them all (backward_working_bytes).
TEST(SimulatorMemoryTest, ABackwardHoldsItsGradientBuffersAtTheirPeak) {
  auto stages = uniform_profiles(1, 1000, 4096, 512);
  stages[0].backward_working_bytes = 300;
  stages[0].backward_peak_bytes = 100;
  const SimulationResult result = run_profiled(pipeline(ScheduleKind::OneFOneB, 1, 1), stages, 0);
  EXPECT_EQ(result.per_device[0].peak_bytes[kActivations], 4096 + 100);
}

TEST(SimulatorMemoryTest, MessagesWaitInCommBuffersOnTheReceiver) {
  // 20 ms per forward on a cpu-core, 0.2 ms per 1 MiB message.
  const auto stages = uniform_profiles(2, 1000, 4096, 1 << 20, 1e9);
  const SimulationResult result = run_profiled(pipeline(ScheduleKind::OneFOneB, 2, 8), stages, 0);
  // Device 1 is busy when activations arrive, so each waits in a buffer.
  EXPECT_GE(result.per_device[1].peak_bytes[static_cast<int>(MemoryCategory::CommBuffers)],
            1 << 20);
}

TEST(SimulatorMemoryTest, PipeDreamStashesPMinusSVersions) {
  const int p = 4;
  const auto stages = uniform_profiles(p, 1000, 4096, 512);
  const SimulationResult result = run_profiled(pipeline(ScheduleKind::PipeDream, p, 8), stages, 0);
  for (int s = 0; s < p; ++s) {
    EXPECT_EQ(result.per_device[s].weight_versions, p - s) << "stage " << s;
    EXPECT_EQ(result.per_device[s].peak_bytes[kStashed], (p - s - 1) * 4000) << "stage " << s;
  }
}

TEST(SimulatorMemoryTest, PipeDream2BWKeepsTwoVersions) {
  // With m >= p every stage but the last has micro-batches of two versions in
  // flight; the last stage runs each backward right after its forward.
  const int p = 4;
  const SimulationResult result = run_unit(pipeline(ScheduleKind::PipeDream2BW, p, 8));
  for (int s = 0; s < p - 1; ++s) EXPECT_EQ(result.per_device[s].weight_versions, 2) << s;
  EXPECT_EQ(result.per_device[p - 1].weight_versions, 1);
  EXPECT_EQ(result.per_device[0].peak_bytes[kStashed], 1);  // one extra copy, in units
}

TEST(SimulatorMemoryTest, SynchronousSchedulesKeepOneVersion) {
  for (ScheduleKind kind :
       {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::ZeroBubbleH1}) {
    const SimulationResult result = run_unit(pipeline(kind, 4, 8));
    for (const DeviceSimStats& device : result.per_device) {
      EXPECT_EQ(device.weight_versions, 1) << schedule_name(kind);
      EXPECT_EQ(device.peak_bytes[kStashed], 0) << schedule_name(kind);
    }
  }
}

TEST(SimulatorMemoryTest, RecomputationTradesTimeForActivationMemory) {
  const int p = 4, m = 8;
  const int64_t activation = 1000, input = 100;
  const auto stages = uniform_profiles(p, 10, activation, input);
  ParallelPlan plan = pipeline(ScheduleKind::OneFOneB, p, m);
  const SimulationResult plain = run_profiled(plan, stages, 0);
  plan.recompute = true;
  const SimulationResult recomputed = run_profiled(plan, stages, 0);
  // Stage 0: p micro-batches in flight. Without recomputation all keep their
  // activations; with it they keep their inputs, and one at a time is rebuilt.
  EXPECT_EQ(plain.per_device[0].peak_bytes[kActivations], p * activation);
  EXPECT_EQ(recomputed.per_device[0].peak_bytes[kActivations], activation + (p - 1) * input);
  const double forward_time = 1e6 / find_device_profile("cpu-core")->flops_per_s;
  for (int s = 0; s < p; ++s) {
    // The last stage holds one micro-batch at a time either way.
    if (s < p - 1) {
      EXPECT_LT(recomputed.per_device[s].peak_bytes[kActivations],
                plain.per_device[s].peak_bytes[kActivations]);
    }
    EXPECT_NEAR(recomputed.per_device[s].busy - plain.per_device[s].busy, m * forward_time, 1e-12);
  }
  EXPECT_GT(recomputed.makespan, plain.makespan);
  int recompute_events = 0;
  for (const TraceEvent& event : recomputed.trace.events)
    if (event.op.kind == OpKind::Recompute) {
      ++recompute_events;
      EXPECT_NEAR(event.t_end - event.t_begin, forward_time, 1e-15);
    }
  EXPECT_EQ(recompute_events, p * m);
}

// Full recomputation with each Transformer block as its unit (Megatron-LM):
// the forward holds the checkpoints and one block's rest at a time, never
// the whole stage, and keeps the checkpoints for the backward.
TEST(SimulatorMemoryTest, AForwardWithBlockUnitsHoldsOneBlockAtATime) {
  const int64_t activation = 1000, checkpoints = 300, one_block = 100;
  auto stages = uniform_profiles(1, 10, activation, 10);
  stages[0].recompute_kept_bytes = checkpoints;
  stages[0].recompute_working_bytes = one_block;
  stages[0].recompute_forward_peak_bytes = checkpoints + one_block;
  ParallelPlan plan = pipeline(ScheduleKind::OneFOneB, 1, 4);
  EXPECT_EQ(run_profiled(plan, stages, 0).per_device[0].peak_bytes[kActivations], activation);
  plan.recompute = true;
  EXPECT_EQ(run_profiled(plan, stages, 0).per_device[0].peak_bytes[kActivations],
            checkpoints + one_block);
  // Two micro-batches in flight on the first of two stages: one forward's
  // peak on top of the other's checkpoints.
  ParallelPlan two = pipeline(ScheduleKind::OneFOneB, 2, 4);
  two.recompute = true;
  auto pair = uniform_profiles(2, 10, activation, 10);
  for (StageProfile& stage : pair) {
    stage.recompute_kept_bytes = checkpoints;
    stage.recompute_working_bytes = one_block;
    stage.recompute_forward_peak_bytes = checkpoints + one_block;
  }
  EXPECT_EQ(run_profiled(two, pair, 0).per_device[0].peak_bytes[kActivations],
            2 * checkpoints + one_block);
}

TEST(SimulatorMemoryTest, UnitModeRecomputationKeepsNothingButTheRebuiltMicrobatch) {
  ParallelPlan plan = pipeline(ScheduleKind::GPipe, 4, 8);
  plan.recompute = true;
  const SimulationResult result = run_unit(plan);
  for (const DeviceSimStats& device : result.per_device) {
    EXPECT_EQ(device.peak_bytes[kActivations], 1);
    EXPECT_EQ(device.peak_inflight_microbatches, 8);  // still in flight, just smaller
  }
}

}  // namespace
}  // namespace pipelab
