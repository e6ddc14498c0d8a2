// Asynchronous schedules are real: PipeDream's backwards read the weight
// version their forward read (stashed), 2BW keeps two versions, and the
// parameter server applies stale gradients within the staleness bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/sim/experiment_prediction.h"
#include "core/runtime/training_program.h"
#include "core/schedule/lowering.h"
#include "conformance_support.h"

namespace pipelab {
namespace {

using testing::run_experiment;
using testing::small_experiment;
using testing::with_plan;

using OpIdentity = std::tuple<int, int, int, int, int>;  // device, kind, stage, step, micro-batch

OpIdentity identity(const Op& op, int device) {
  return {device, static_cast<int>(op.kind), op.stage, op.step, op.microbatch};
}

// Largest value of one memory category per device.
std::map<int, int64_t> peak_of(const Trace& trace, MemoryCategory category) {
  std::map<int, int64_t> peaks;
  for (const MemorySample& sample : trace.memory)
    peaks[sample.device] = std::max(peaks[sample.device], sample.bytes[static_cast<int>(category)]);
  return peaks;
}

class PipeDream : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(PipeDream);

TEST_P(PipeDream, BackwardsReadTheVersionTheirForwardRead) {
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::PipeDream, 4, 4);
  const testing::RunOutput run = run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;

  // The executor reports the version it actually used; the schedule says
  // which one each op must read (one window covers all 20 steps).
  const Schedule schedule = build_schedule(experiment.parallel, {}, 20);
  std::map<OpIdentity, int> scheduled;
  for (int d = 0; d < schedule.device_count(); ++d)
    for (const Op& op : schedule.devices[d])
      if (op.kind == OpKind::Forward || op.kind == OpKind::Backward)
        scheduled[identity(op, d)] = op.weight_version;
  int backwards = 0, stale_backwards = 0;
  for (const TraceEvent& event : run.trace.events) {
    if (event.op.kind != OpKind::Forward && event.op.kind != OpKind::Backward) continue;
    const auto expected = scheduled.find(identity(event.op, event.device));
    ASSERT_NE(expected, scheduled.end()) << op_label(event.op);
    EXPECT_EQ(event.op.weight_version, expected->second)
        << op_label(event.op) << " on device " << event.device;
    if (event.op.kind == OpKind::Backward) {
      ++backwards;
      if (event.op.stage == 0 && event.op.weight_version > 0) ++stale_backwards;
    }
  }
  EXPECT_EQ(backwards, 4 * 4 * 20);
  EXPECT_GT(stale_backwards, 0);
}

TEST_P(PipeDream, StashesOlderVersionsAndTrainsDifferently) {
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::PipeDream, 4, 4);
  const testing::RunOutput run = run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  const std::vector<int64_t> weights = testing::stage_parameter_bytes(experiment);
  const std::map<int, int64_t> stashed = peak_of(run.trace, MemoryCategory::StashedWeights);
  EXPECT_GT(stashed.at(0), 0);
  for (int s = 0; s < 4; ++s)  // stage s keeps p - s versions at its peak
    EXPECT_EQ(stashed.at(s), (4 - s - 1) * weights[s]) << "stage " << s;

  const testing::RunOutput sync =
      run_experiment(with_plan(small_experiment(), ScheduleKind::OneFOneB, 4, 4));
  ASSERT_EQ(sync.trace.steps.size(), run.trace.steps.size());
  // The first micro-batches see the initial weights either way, then the
  // per-micro-batch updates of stale gradients change the curve.
  EXPECT_NEAR(run.trace.steps[0].loss, sync.trace.steps[0].loss, 0.05);
  int differing = 0;
  for (size_t i = 1; i < sync.trace.steps.size(); ++i)
    if (std::abs(run.trace.steps[i].loss - sync.trace.steps[i].loss) > 1e-4) ++differing;
  EXPECT_GT(differing, 15);
}

class PipeDream2BW : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(PipeDream2BW);

TEST_P(PipeDream2BW, KeepsAtMostTwoVersions) {
  const Experiment experiment = with_plan(small_experiment(), ScheduleKind::PipeDream2BW, 4, 4);
  const testing::RunOutput run = run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  const std::vector<int64_t> weights = testing::stage_parameter_bytes(experiment);
  const std::map<int, int64_t> stashed = peak_of(run.trace, MemoryCategory::StashedWeights);
  EXPECT_EQ(stashed.at(0), weights[0]);  // one older version besides the current one
  for (int s = 0; s < 4; ++s) EXPECT_LE(stashed.at(s), weights[s]);
  // One update per step and stage.
  int updates = 0;
  for (const TraceEvent& event : run.trace.events) updates += event.op.kind == OpKind::Update;
  EXPECT_EQ(updates, 4 * 20);
}

TEST_P(PipeDream, LongRunsRepeatTheWindow) {
  // More steps than one window holds: the pipeline flushes between windows
  // and versions keep counting.
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::PipeDream, 2, 2);
  ExecutorOptions options;
  options.steps = TrainingProgram::kMaxWindowSteps + 4;
  const testing::RunOutput run = run_experiment(experiment, options);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  ASSERT_EQ(static_cast<int>(run.trace.steps.size()), options.steps);
  int last_update_version = 0;
  for (const TraceEvent& event : run.trace.events)
    if (event.op.kind == OpKind::Update && event.device == 0)
      last_update_version = std::max(last_update_version, event.op.weight_version);
  EXPECT_EQ(last_update_version, options.steps * 2);  // one update per micro-batch
  EXPECT_TRUE(std::isfinite(run.trace.steps.back().loss));
}

class AsyncDataParallel : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(AsyncDataParallel);

TEST_P(AsyncDataParallel, PullsTheBoundedStaleVersion) {
  Experiment experiment = with_plan(small_experiment(), ScheduleKind::OneFOneB, 1, 2, 2);
  experiment.parallel.update = UpdateMode::Async;
  experiment.parallel.staleness = 2;
  const testing::RunOutput run = run_experiment(experiment);
  ASSERT_EQ(run.state, RunState::Finished) << run.error;
  int pulls = 0;
  for (const TraceEvent& event : run.trace.events) {
    if (event.op.kind == OpKind::PullWeights) {
      EXPECT_EQ(event.op.weight_version, std::max(0, event.op.step + 1 - 2));
      ++pulls;
    }
    if (event.op.kind == OpKind::Forward) {
      EXPECT_EQ(event.op.weight_version, std::max(0, event.op.step - 2));
    }
  }
  EXPECT_EQ(pulls, 2 * 20);

  // Stale gradients train differently from synchronous data parallelism.
  Experiment sync = experiment;
  sync.parallel.update = UpdateMode::Sync;
  const std::vector<double> sync_losses = run_experiment(sync).losses();
  const std::vector<double> async_losses = run.losses();
  ASSERT_EQ(sync_losses.size(), async_losses.size());
  EXPECT_NEAR(async_losses[0], sync_losses[0], 1e-5);  // both start from version 0
  EXPECT_NE(async_losses.back(), sync_losses.back());
  // And the same experiment repeats exactly (the server sums in replica order).
  EXPECT_EQ(run_experiment(experiment).losses(), async_losses);
}

// Asynchronous schedules give every backend the CPU's curve: the same weight
// versions are read, stashed and pulled whatever runs the math.
class AsynchronousAgreement : public testing::BackendConformance {};
PIPELAB_CONFORMANCE_SUITE(AsynchronousAgreement);

TEST_P(AsynchronousAgreement, CurvesMatchTheCpu) {
  Experiment async_dp = with_plan(small_experiment(), ScheduleKind::OneFOneB, 1, 1, 2);
  async_dp.parallel.update = UpdateMode::Async;
  async_dp.parallel.staleness = 2;
  // PipeMare with both techniques (on by default): the velocity and the
  // extrapolated weights are the loop's, in each backend's tensors.
  for (const auto& [experiment, name] : std::vector<std::pair<Experiment, std::string>>{
           {with_plan(small_experiment(), ScheduleKind::PipeDream, 4, 4), "pipedream pp4 m4"},
           {with_plan(small_experiment(), ScheduleKind::PipeDream2BW, 4, 4), "2bw pp4 m4"},
           {with_plan(small_experiment(), ScheduleKind::PipeMare, 4, 4), "pipemare pp4 m4"},
           {async_dp, "async dp2 staleness 2"}}) {
    const testing::RunOutput cpu = run_experiment(testing::on_backend(experiment, "cpu"));
    ASSERT_EQ(cpu.state, RunState::Finished) << name << ": " << cpu.error;
    const testing::RunOutput run = run_experiment(experiment);
    ASSERT_EQ(run.state, RunState::Finished) << name << ": " << run.error;
    testing::expect_same_curve(cpu.losses(), run.losses(), testing::kBackendLossTolerance, name);
  }
}

}  // namespace
}  // namespace pipelab
