// Activation offloading in the simulator: copies on the copy lane at the
// host-link bandwidth, the device's activations moved to host memory, and the
// exposed copy time, against a hand computation on one device; optimizer
// offloading's host update between its two copies, likewise.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/schedule/lowering.h"
#include "core/io/hardware_catalogue.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

constexpr int kActivations = static_cast<int>(MemoryCategory::Activations);
constexpr int kHost = static_cast<int>(MemoryCategory::Host);
constexpr int64_t kActivationBytes = 1000;

// One device, gpipe over three micro-batches: F0 F1 F2 B0 B1 B2. Every op is
// one FLOP on a one-FLOP/s device (F 1 s, B 2 s), no parameters, 1000
// activation bytes per micro-batch; a copy takes `copy_s` seconds.
// GPipe on one device whose one stage does one FLOP per pass at one FLOP/s
// (F 1 s, B 2 s), with `stage`'s bytes and `device`'s copy and memory rates.
SimulationResult run_one_device(int microbatches, OffloadMode offload, StageProfile stage, DeviceProfile device,
                                int optimizer_slots) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::GPipe;
  plan.pp = 1;
  plan.microbatches = microbatches;
  plan.offload = offload;
  stage.forward_flops = stage.backward_input_flops = stage.backward_weight_flops = 1;
  device.flops_per_s = 1;
  const std::vector<StageProfile> stages = {stage};
  return simulate(build_schedule(plan, stages), CostModel::from_profiles(stages, device, optimizer_slots));
}

SimulationResult run_gpipe(OffloadMode offload, double copy_s) {
  StageProfile stage;
  stage.activation_bytes = kActivationBytes;
  DeviceProfile device = *find_device_profile("cpu-core");
  device.host_link_bandwidth = kActivationBytes / copy_s;
  return run_one_device(3, offload, stage, device, 0);
}

std::vector<TraceEvent> events_of(const SimulationResult& result, OpKind kind) {
  std::vector<TraceEvent> events;
  for (const TraceEvent& event : result.trace.events)
    if (event.op.kind == kind) events.push_back(event);
  return events;
}

int64_t peak_of(const SimulationResult& result, int category) {
  int64_t peak = 0;
  for (const MemorySample& sample : result.trace.memory) peak = std::max(peak, sample.bytes[category]);
  return peak;
}

TEST(SimulatorOffload, HiddenCopiesLowerTheDevicePeakByOneMicrobatchAndCostNoTime) {
  // Copies of 0.5 s: OFFLOAD0 [1, 1.5], OFFLOAD1 [2, 2.5], RELOAD0 [2.5, 3]
  // (issued with F2 at 2), OFFLOAD2 [3, 3.5], RELOAD1 [3.5, 4] (issued with B0
  // at 3), RELOAD2 [5, 5.5] (with B1): every backward finds its activations
  // back, and at most two micro-batches' are on the device at once.
  const SimulationResult plain = run_gpipe(OffloadMode::None, 0.5);
  const SimulationResult offloaded = run_gpipe(OffloadMode::Activations, 0.5);
  EXPECT_DOUBLE_EQ(plain.makespan, 9.0);
  EXPECT_DOUBLE_EQ(offloaded.makespan, 9.0);
  EXPECT_EQ(plain.per_device[0].peak_bytes[kActivations], 3 * kActivationBytes);
  EXPECT_EQ(offloaded.per_device[0].peak_bytes[kActivations], 2 * kActivationBytes);
  EXPECT_EQ(offloaded.per_device[0].peak_total_bytes,
            plain.per_device[0].peak_total_bytes - kActivationBytes);
  EXPECT_EQ(peak_of(offloaded, kHost), 2 * kActivationBytes);
  EXPECT_EQ(offloaded.trace.memory.back().bytes[kHost], 0);  // everything came back

  const std::vector<TraceEvent> reloads = events_of(offloaded, OpKind::Reload);
  ASSERT_EQ(reloads.size(), 3u);
  EXPECT_DOUBLE_EQ(reloads[0].t_begin, 2.5);
  EXPECT_DOUBLE_EQ(reloads[1].t_begin, 3.5);
  EXPECT_DOUBLE_EQ(reloads[2].t_begin, 5.0);
  for (const TraceEvent& event : events_of(offloaded, OpKind::Offload)) {
    EXPECT_EQ(event.bytes, kActivationBytes);
    EXPECT_DOUBLE_EQ(event.t_end - event.t_begin, 0.5);
  }
}

TEST(SimulatorOffload, SlowCopiesExposeTheirTimeBeforeTheBackwards) {
  // Copies of 1.5 s queue on the lane: OFFLOAD0 [1, 2.5], OFFLOAD1 [2.5, 4],
  // RELOAD0 [4, 5.5], OFFLOAD2 [5.5, 7], RELOAD1 [7, 8.5]; B0 waits until 5.5
  // and runs to 7.5, RELOAD2 [8.5, 10] is issued then; B1 [8.5, 10.5], B2
  // [10.5, 12.5]: 3.5 s more than the 9 s without offloading.
  const SimulationResult offloaded = run_gpipe(OffloadMode::Activations, 1.5);
  EXPECT_DOUBLE_EQ(offloaded.makespan, 12.5);
  const std::vector<TraceEvent> backwards = events_of(offloaded, OpKind::Backward);
  ASSERT_EQ(backwards.size(), 3u);
  EXPECT_DOUBLE_EQ(backwards[0].t_begin, 5.5);
  EXPECT_DOUBLE_EQ(backwards[1].t_begin, 8.5);
  EXPECT_DOUBLE_EQ(backwards[2].t_begin, 10.5);
  // The forwards never wait for a copy.
  const std::vector<TraceEvent> forwards = events_of(offloaded, OpKind::Forward);
  ASSERT_EQ(forwards.size(), 3u);
  EXPECT_DOUBLE_EQ(forwards[2].t_end, 3.0);
}

TEST(SimulatorOffload, CopiesRunOneAtATimeOnTheCopyLane) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::OneFOneB;
  plan.pp = 4;
  plan.microbatches = 8;
  plan.offload = OffloadMode::Activations;
  const SimulationResult result = simulate(build_schedule(plan), CostModel::unit({1, 1, 1, 0.7, 0}));
  for (int device = 0; device < 4; ++device) {
    std::vector<TraceEvent> copies;
    for (const TraceEvent& event : result.trace.events)
      if (event.device == device && op_kind_facts(event.op.kind).family == OpFamily::HostTransfer)
        copies.push_back(event);
    for (size_t i = 1; i < copies.size(); ++i)
      EXPECT_GE(copies[i].t_begin, copies[i - 1].t_end) << op_label(copies[i].op);
  }
}

// With free copies, offloading changes no op's time on any schedule, and a
// device never holds more activations than without it.
TEST(SimulatorOffload, FreeCopiesKeepEveryScheduleItsMakespan) {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved1F1B,
                            ScheduleKind::ZeroBubbleH1, ScheduleKind::ZeroBubbleV, ScheduleKind::PipeDream,
                            ScheduleKind::PipeDream2BW}) {
    SCOPED_TRACE(schedule_name(kind));
    ParallelPlan plan;
    plan.schedule = kind;
    plan.pp = 4;
    plan.microbatches = 8;
    plan.chunks = kind == ScheduleKind::Interleaved1F1B || kind == ScheduleKind::ZeroBubbleV ? 2 : 1;
    const CostModel free_copies = CostModel::unit({1, 1, 1, 0, 0});
    const SimulationResult plain = simulate(build_schedule(plan), free_copies);
    plan.offload = OffloadMode::Activations;
    const SimulationResult offloaded = simulate(build_schedule(plan), free_copies);
    EXPECT_DOUBLE_EQ(offloaded.makespan, plain.makespan);
    for (int device = 0; device < plan.pp; ++device)
      EXPECT_LE(offloaded.per_device[device].peak_bytes[kActivations],
                plain.per_device[device].peak_bytes[kActivations])
          << "device " << device;
  }
}

TEST(SimulatorOffload, AProfileWithoutAHostLinkCannotPriceACopy) {
  ParallelPlan plan;
  plan.pp = 2;
  plan.microbatches = 4;
  plan.offload = OffloadMode::Activations;
  StageProfile stage;
  stage.forward_flops = 1;
  stage.activation_bytes = 10;
  DeviceProfile device = *find_device_profile("cpu-core");
  device.host_link_bandwidth = 0;
  const std::vector<StageProfile> stages(2, stage);
  EXPECT_THROW(simulate(build_schedule(plan, stages), CostModel::from_profiles(stages, device, 0)),
               std::invalid_argument);
}

constexpr int kOptimizerState = static_cast<int>(MemoryCategory::OptimizerState);

// Optimizer offloading on one device, one micro-batch: F 1 s, B 2 s; 1000
// parameters (4000 bytes of weights, of gradients), Adam (8000 bytes of
// state); each copy takes 1 s (4000 bytes at 4000 B/s) and the update reads
// and writes 28 bytes a parameter at 28000 B/s, 1 s, on the host or on the
// device alike.
SimulationResult run_single_step(OffloadMode offload) {
  StageProfile stage;
  stage.params = 1000;
  DeviceProfile device = *find_device_profile("cpu-core");
  device.host_link_bandwidth = 4000;
  device.memory_bandwidth = 28000;
  device.host_memory_bandwidth = 28000;
  return run_one_device(1, offload, stage, device, 2);
}

TEST(SimulatorOptimizerOffload, TheUpdateRunsOnTheHostBetweenTheTwoCopies) {
  // F [0, 1], B [1, 3], OFFLOAD of the gradients [3, 4], U on the host
  // [4, 5], RELOAD of the weights [5, 6]; on the device U is [3, 4].
  const SimulationResult plain = run_single_step(OffloadMode::None);
  const SimulationResult offloaded = run_single_step(OffloadMode::Optimizer);
  EXPECT_DOUBLE_EQ(plain.makespan, 4.0);
  EXPECT_DOUBLE_EQ(offloaded.makespan, 6.0);
  std::vector<std::pair<OpKind, double>> begins;
  for (const TraceEvent& event : offloaded.trace.events) begins.push_back({event.op.kind, event.t_begin});
  const std::vector<std::pair<OpKind, double>> expected = {
      {OpKind::Forward, 0}, {OpKind::Backward, 1}, {OpKind::Offload, 3}, {OpKind::Update, 4}, {OpKind::Reload, 5}};
  EXPECT_EQ(begins, expected);
  // The device only ran F and B.
  EXPECT_DOUBLE_EQ(offloaded.per_device[0].busy, 3.0);
}

TEST(SimulatorOptimizerOffload, TheOptimizerStateAndTheGradientsLeaveTheDevice) {
  const SimulationResult plain = run_single_step(OffloadMode::None);
  const SimulationResult offloaded = run_single_step(OffloadMode::Optimizer);
  // Without: weights 4000 + Adam's 8000 + gradients 4000 during B and U.
  EXPECT_EQ(plain.per_device[0].peak_total_bytes, 16000);
  EXPECT_EQ(plain.per_device[0].peak_bytes[kOptimizerState], 8000);
  // With: weights and, during B, the gradients; the host holds the state and,
  // from the OFFLOAD to the end of U, the gradients.
  EXPECT_EQ(offloaded.per_device[0].peak_total_bytes, 8000);
  EXPECT_EQ(offloaded.per_device[0].peak_bytes[kOptimizerState], 0);
  EXPECT_EQ(offloaded.per_device[0].peak_bytes[kHost], 12000);
  EXPECT_EQ(offloaded.trace.memory.back().bytes[kHost], 8000);  // the state stays there
}

}  // namespace
}  // namespace pipelab
