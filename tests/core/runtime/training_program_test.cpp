// The windows a run is cut into, and the step boundaries inside them.
#include "core/runtime/training_program.h"

#include <gtest/gtest.h>

#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

ParallelPlan plan_of(ScheduleKind kind, int pp, int microbatches, int dp = 1) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.pp = pp;
  plan.microbatches = microbatches;
  plan.dp = dp;
  return plan;
}

TEST(TrainingProgram, SynchronousSchedulesRunOneStepPerWindow) {
  const TrainingProgram program(plan_of(ScheduleKind::OneFOneB, 2, 4), {}, 5);
  ASSERT_EQ(program.windows().size(), 5u);
  EXPECT_FALSE(program.asynchronous());
  const int64_t ops = static_cast<int64_t>(program.windows()[0].schedule->devices[0].size());
  EXPECT_EQ(program.windows()[3].first_step, 3);
  EXPECT_EQ(program.windows()[3].first_position[0], 3 * ops);
  // A synchronous step ends with the whole window.
  EXPECT_EQ(program.positions_after_step(2)[0], 3 * ops);
  EXPECT_EQ(program.end_positions()[0], 5 * ops);
}

TEST(TrainingProgram, AsynchronousRunsAreOneWindowUpToTheLimit) {
  const TrainingProgram program(plan_of(ScheduleKind::PipeDream, 4, 4), {}, 20);
  ASSERT_EQ(program.windows().size(), 1u);
  EXPECT_EQ(program.windows()[0].steps, 20);

  const int steps = TrainingProgram::kMaxWindowSteps + 3;
  const TrainingProgram long_run(plan_of(ScheduleKind::PipeDream, 2, 2), {}, steps);
  ASSERT_EQ(long_run.windows().size(), 2u);
  EXPECT_EQ(long_run.windows()[1].first_step, TrainingProgram::kMaxWindowSteps);
  EXPECT_EQ(long_run.windows()[1].steps, 3);
}

TEST(TrainingProgram, ShortWindowsAreCutToTheirSteps) {
  ParallelPlan plan = plan_of(ScheduleKind::OneFOneB, 2, 2, 2);
  plan.update = UpdateMode::Async;
  plan.staleness = 3;  // needs 5 steps to lower
  const Schedule window = build_window(plan, {}, 2);
  EXPECT_EQ(window.steps, 2);
  for (const auto& ops : window.devices)
    for (const Op& op : ops) EXPECT_LT(op.step, 2);
  EXPECT_NO_THROW(simulate(window, CostModel::unit({})));  // still a valid program
}

TEST(StepBoundaries, PipeDreamHaltsMidWindowWithEveryDependencyInside) {
  const Schedule window = build_schedule(plan_of(ScheduleKind::PipeDream, 4, 4), {}, 4);
  const StepBoundaries boundaries(window);
  const std::vector<int> after_first = boundaries.after_step(0);
  for (int d = 0; d < 4; ++d) {
    const std::vector<Op>& ops = window.devices[d];
    // Every op of step 0 is inside, and the prefix stops before the end.
    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
      if (ops[i].step == 0) {
        EXPECT_LT(i, after_first[d]);
      }
    }
    EXPECT_LT(after_first[d], static_cast<int>(ops.size()));
  }
  // Stage 0 runs later steps' forwards before its last backward of step 0.
  int later_forwards = 0;
  for (int i = 0; i < after_first[0]; ++i)
    later_forwards += window.devices[0][i].kind == OpKind::Forward && window.devices[0][i].step > 0;
  EXPECT_GT(later_forwards, 0);
  // Closed: a receive inside means its send is inside.
  for (int d = 0; d < 4; ++d)
    for (int i = 0; i < after_first[d]; ++i) {
      const Op& op = window.devices[d][i];
      if (op.kind != OpKind::RecvActivation && op.kind != OpKind::RecvGradient) continue;
      const OpKind send =
          op.kind == OpKind::RecvActivation ? OpKind::SendActivation : OpKind::SendGradient;
      bool found = false;
      for (int j = 0; j < after_first[op.peer]; ++j) {
        const Op& other = window.devices[op.peer][j];
        found |= other.kind == send && other.step == op.step && other.microbatch == op.microbatch;
      }
      EXPECT_TRUE(found) << op_label(op) << " on device " << d;
    }
  EXPECT_EQ(boundaries.after_step(3)[0], static_cast<int>(window.devices[0].size()));
}

}  // namespace
}  // namespace pipelab
