// Replay lays measured durations on the schedule's dependencies; calibration
// fits the simulator's device profile to measured ops.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>

#include "core/io/experiment_prediction.h"
#include "core/runtime/calibration.h"
#include "core/runtime/cpu_executor.h"
#include "core/runtime/op_durations.h"
#include "core/runtime/replay.h"
#include "runtime_test_support.h"

namespace pipelab {
namespace {

TEST(Replay, UsesMeasuredDurationsOnTheScheduleShape) {
  const Experiment experiment =
      testing::with_plan(testing::small_experiment(), ScheduleKind::GPipe, 4, 4);
  EventSink sink;
  CpuExecutor executor(experiment, sink);
  executor.start();
  executor.wait();
  ASSERT_EQ(executor.state(), RunState::Finished);
  Trace measured;
  append_batch(measured, sink.drain());

  const Schedule& window = *executor.program().windows().front().schedule;
  const CostModel fallback = experiment_cost_model(experiment, executor.stage_profiles());
  const SimulationResult replay = replay_measured(window, measured, fallback);

  // Each compute op lasts its measured mean over the 20 steps.
  std::map<std::tuple<int, int, int>, std::pair<double, int>> means;  // device, kind, micro-batch
  for (const TraceEvent& event : measured.events) {
    if (!is_compute(event.op.kind)) continue;
    auto& [sum, count] =
        means[{event.device, static_cast<int>(event.op.kind), event.op.microbatch}];
    sum += event.t_end - event.t_begin;
    ++count;
  }
  int compared = 0;
  for (const TraceEvent& event : replay.trace.events) {
    if (!is_compute(event.op.kind)) continue;
    const auto& [sum, count] =
        means.at({event.device, static_cast<int>(event.op.kind), event.op.microbatch});
    EXPECT_NEAR(event.t_end - event.t_begin, sum / count, 1e-12) << op_label(event.op);
    ++compared;
  }
  EXPECT_EQ(compared, 4 * (4 + 4 + 1));  // F, B per micro-batch and U, on 4 devices

  // GPipe's shape: a stage's forward of a micro-batch starts after the
  // previous stage's has ended (and its activation has arrived).
  std::map<std::pair<int, int>, const TraceEvent*> forwards;  // (stage, micro-batch)
  for (const TraceEvent& event : replay.trace.events)
    if (event.op.kind == OpKind::Forward) forwards[{event.op.stage, event.op.microbatch}] = &event;
  for (int stage = 1; stage < 4; ++stage)
    for (int mb = 0; mb < 4; ++mb)
      EXPECT_GE(forwards.at({stage, mb})->t_begin, forwards.at({stage - 1, mb})->t_end);
  EXPECT_GT(replay.makespan, 0.0);
  EXPECT_GT(replay.bubble_fraction, 0.0);
}

TEST(OwnDurations, ComputeOpsExcludeTheAllReducesNestedInThem) {
  Trace trace;
  Op forward;
  forward.kind = OpKind::Forward;
  Op reduce;
  reduce.kind = OpKind::AllReduce;
  reduce.group = CommGroup::TensorParallel;
  trace.events.push_back({0, reduce, 1.0, 1.5, 64});
  trace.events.push_back({0, forward, 0.5, 3.0, 0});
  trace.events.push_back({1, forward, 0.5, 3.0, 0});  // another device: nothing nested
  const std::vector<double> own = own_durations(trace);
  EXPECT_DOUBLE_EQ(own[0], 0.5);
  EXPECT_DOUBLE_EQ(own[1], 2.0);
  EXPECT_DOUBLE_EQ(own[2], 2.5);
}

TEST(Calibration, FitsComputeRateAndLinkFromOps) {
  std::vector<StageProfile> stages(2);
  stages[0].forward_flops = 2e6;
  stages[0].backward_input_flops = 1e6;
  stages[0].backward_weight_flops = 3e6;
  stages[1].forward_flops = 5e6;
  stages[1].backward_input_flops = 4e6;
  stages[1].backward_weight_flops = 6e6;
  const double rate = 4e9, bandwidth = 2e9, latency = 3e-6;
  Trace trace;
  auto add = [&](OpKind kind, int stage, double seconds, int64_t bytes) {
    Op op;
    op.kind = kind;
    op.stage = stage;
    trace.events.push_back({0, op, 1.0, 1.0 + seconds, bytes});
  };
  add(OpKind::Forward, 0, 2e6 / rate, 0);
  add(OpKind::Backward, 0, 4e6 / rate, 0);
  add(OpKind::BackwardInput, 1, 4e6 / rate, 0);
  add(OpKind::BackwardWeight, 1, 6e6 / rate, 0);
  add(OpKind::SendActivation, 0, latency + 1000 / bandwidth, 1000);
  add(OpKind::SendGradient, 1, latency + 9000 / bandwidth, 9000);
  const DeviceProfile base = *find_device_profile("cpu-core");
  const CalibrationResult fitted = calibrate_profile(trace, stages, base);
  EXPECT_EQ(fitted.compute_samples, 4);
  EXPECT_EQ(fitted.message_samples, 2);
  EXPECT_NEAR(fitted.profile.flops_per_s, rate, rate * 1e-9);
  EXPECT_NEAR(fitted.profile.link_bandwidth, bandwidth, bandwidth * 1e-6);
  EXPECT_NEAR(fitted.profile.link_latency_s, latency, 1e-12);
  EXPECT_EQ(fitted.profile.memory_bandwidth, base.memory_bandwidth);
  EXPECT_EQ(fitted.profile.name, "cpu-core-measured");
}

TEST(Calibration, ShortRunGivesAPlausibleRateForThisMachine) {
  Experiment experiment = testing::small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  const LayerSpec relu{LayerType::Relu, 0, true, 0.0};
  experiment.model.layers = {linear(256), relu, linear(256), relu, linear(3)};
  experiment.training.batch_size = 64;
  experiment.data.samples = 200;
  experiment = testing::with_plan(experiment, ScheduleKind::OneFOneB, 2, 2);
  const CalibrationResult fitted = calibrate_cpu_profile(experiment, 3);
  EXPECT_GT(fitted.compute_samples, 0);
  EXPECT_GT(fitted.message_samples, 0);
  // One core does between 0.1 and 1000 GFLOP/s on any machine this runs on.
  EXPECT_GT(fitted.profile.flops_per_s, 1e8);
  EXPECT_LT(fitted.profile.flops_per_s, 1e12);
  EXPECT_GT(fitted.profile.link_bandwidth, 0.0);
}

}  // namespace
}  // namespace pipelab
