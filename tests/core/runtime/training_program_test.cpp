// The windows a run is cut into, the step boundaries inside them, and the
// steps after which it is evaluated.
#include "core/runtime/training_program.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/runtime/run_recorder.h"
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
  ASSERT_EQ(program.window_count(), 5);
  EXPECT_FALSE(program.asynchronous());
  const int64_t ops = static_cast<int64_t>(program.schedule().devices[0].size());
  EXPECT_EQ(program.window(3).first_step, 3);
  EXPECT_EQ(program.window(3).first_position[0], 3 * ops);
  // A synchronous step ends with the whole window.
  EXPECT_EQ(program.positions_after_step(2)[0], 3 * ops);
  EXPECT_EQ(program.end_positions()[0], 5 * ops);
}

TEST(TrainingProgram, AsynchronousRunsAreOneWindowUpToTheLimit) {
  const TrainingProgram program(plan_of(ScheduleKind::PipeDream, 4, 4), {}, 20);
  ASSERT_EQ(program.window_count(), 1);
  EXPECT_EQ(program.window(0).steps, 20);

  const int steps = TrainingProgram::kMaxWindowSteps + 3;
  const TrainingProgram long_run(plan_of(ScheduleKind::PipeDream, 2, 2), {}, steps);
  ASSERT_EQ(long_run.window_count(), 2);
  EXPECT_EQ(long_run.window(1).first_step, TrainingProgram::kMaxWindowSteps);
  EXPECT_EQ(long_run.window(1).first_position[0],
            static_cast<int64_t>(long_run.schedule().devices[0].size()));
  EXPECT_EQ(long_run.window(1).steps, 3);
}

TEST(TrainingProgram, WindowsAreComputedSoALongRunCostsNothingPerStep) {
  // A billion steps used to be a billion stored windows (tens of gigabytes).
  const int steps = 1000000000;
  const TrainingProgram program(plan_of(ScheduleKind::OneFOneB, 2, 4), {}, steps);
  ASSERT_EQ(program.window_count(), steps);
  const int64_t ops = static_cast<int64_t>(program.schedule().devices[1].size());
  EXPECT_EQ(program.window(steps - 1).first_step, steps - 1);
  EXPECT_EQ(program.window(steps - 1).first_position[1], (steps - 1) * ops);
  EXPECT_EQ(program.end_positions()[1], steps * ops);
}

TEST(EvaluatedSteps, EveryNthAndTheLast) {
  const EvaluatedSteps every_third{3, 10};
  std::vector<int> listed;
  for (int step = every_third.first_from(0); step < 10; step = every_third.first_from(step + 1))
    listed.push_back(step);
  EXPECT_EQ(listed, (std::vector<int>{2, 5, 8, 9}));
  for (int step = 0; step < 10; ++step)
    EXPECT_EQ(every_third.contains(step), step == 2 || step == 5 || step == 8 || step == 9) << step;
  EXPECT_EQ(every_third.first_from(10), 10);

  const EvaluatedSteps last_only{0, 10};
  EXPECT_EQ(last_only.first_from(0), 9);
  EXPECT_FALSE(last_only.contains(0));
  const EvaluatedSteps none{};
  EXPECT_EQ(none.first_from(0), 0);
  EXPECT_FALSE(none.contains(0));
  // Near the int range: no overflow on the way to the last step.
  const int most = std::numeric_limits<int>::max();
  const EvaluatedSteps huge{most - 1, most};
  EXPECT_EQ(huge.first_from(0), most - 2);
  EXPECT_EQ(huge.first_from(most - 1), most - 1);
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
