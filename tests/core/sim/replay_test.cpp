// Replay lays measured durations on the schedule's dependencies.
#include "core/sim/replay.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "core/schedule/lowering.h"

namespace pipelab {
namespace {

// A measured run of `window` over two steps: step 0 as simulated with
// `costs`, step 1 three times as slow, so each op's mean is twice step 0's.
Trace two_measured_steps(const Schedule& window, const CostModel& costs) {
  const SimulationResult first = simulate(window, costs);
  Trace measured;
  for (const TraceEvent& event : first.trace.events) {
    measured.events.push_back(event);
    TraceEvent slower = event;
    slower.op.step = 1;
    slower.t_begin = first.makespan + 3 * event.t_begin;
    slower.t_end = first.makespan + 3 * event.t_end;
    measured.events.push_back(slower);
  }
  return measured;
}

TEST(Replay, UsesMeasuredDurationsOnTheScheduleShape) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::GPipe;
  plan.pp = 4;
  plan.microbatches = 4;
  const Schedule window = build_schedule(plan);
  ASSERT_EQ(window.steps, 1);
  CostModel measured_costs = CostModel::unit({1, 2, 1, 0.5, 0.5});
  for (int device = 0; device < 4; ++device)
    measured_costs.set_compute_slowdown(device, 1 + device);
  const Trace measured = two_measured_steps(window, measured_costs);
  const SimulationResult replay = replay_measured(window, measured, CostModel::unit({}));

  // Each compute op lasts its measured mean over the two steps.
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

}  // namespace
}  // namespace pipelab
