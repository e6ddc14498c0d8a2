#include "core/schedule/validator.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/schedule/generators.h"
#include "core/schedule/lowering.h"
#include "schedule_test_util.h"

namespace pipelab {
namespace {

using testing::errors_text;
using testing::has_error;

ParallelPlan make_plan(ScheduleKind kind, int dp, int tp, int pp, int m) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.dp = dp;
  plan.tp = tp;
  plan.pp = pp;
  plan.microbatches = m;
  return plan;
}

// Index of the first op matching kind, stage-independent micro-batch, on a device.
size_t find_op(const std::vector<Op>& ops, OpKind kind, int microbatch) {
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == kind && ops[i].microbatch == microbatch) return i;
  ADD_FAILURE() << "no " << op_kind_name(kind) << microbatch;
  return 0;
}

TEST(Validator, AcceptsGeneratedSchedules) {
  const Schedule compute = generate_1f1b(3, 4);
  EXPECT_TRUE(validate_schedule(compute).ok()) << errors_text(validate_schedule(compute));
}

TEST(Validator, CatchesAMissingBackward) {
  Schedule schedule = generate_1f1b(3, 4);
  auto& ops = schedule.devices[1];
  ops.erase(ops.begin() + find_op(ops, OpKind::Backward, 2));
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 1", "'B2 s1'", "missing"})) << errors_text(report);
}

TEST(Validator, CatchesAMissingWeightGradient) {
  Schedule schedule = generate_zb_h1(2, 3);
  auto& ops = schedule.devices[0];
  ops.erase(ops.begin() + find_op(ops, OpKind::BackwardWeight, 1));
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", "'BW1 s0'", "missing"})) << errors_text(report);
}

TEST(Validator, CatchesADuplicateForward) {
  Schedule schedule = generate_gpipe(2, 2);
  schedule.devices[0].insert(schedule.devices[0].begin(), schedule.devices[0][0]);
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", "'F0 s0'", "twice"})) << errors_text(report);
}

TEST(Validator, CatchesAnOpOnTheWrongDevice) {
  Schedule schedule = generate_gpipe(2, 2);
  schedule.devices[0][1].stage = 1;
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", "'F1 s1'", "wrong device"})) << errors_text(report);
}

TEST(Validator, CatchesBackwardBeforeItsForward) {
  Schedule schedule = generate_gpipe(1, 2);
  auto& ops = schedule.devices[0];  // F0 F1 B0 B1 -> F0 B1 F1 B0... swap F1 and B1
  std::swap(ops[1], ops[3]);
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"'B1 s0'", "before its own F"})) << errors_text(report);
}

// 1F1B for p = 2, m = 2 is d0: F0 F1 B0 B1 and d1: F0 B0 F1 B1. Swapping the
// middle two ops on both devices (d0: F0 B0 F1 B1, d1: F0 F1 B0 B1) keeps each
// list locally sound but B0 (d0) waits for B0 (d1), which waits for F1 (d1),
// which waits for F1 (d0), which waits for B0 (d0).
Schedule swapped_1f1b() {
  Schedule schedule = generate_1f1b(2, 2);
  std::swap(schedule.devices[0][1], schedule.devices[0][2]);
  std::swap(schedule.devices[1][1], schedule.devices[1][2]);
  return schedule;
}

TEST(Validator, CatchesASwappedOrderThatDeadlocks) {
  const Schedule schedule = swapped_1f1b();
  ASSERT_EQ(schedule.devices[0][1].kind, OpKind::Backward);
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", "'B0 s0'", "deadlock"})) << errors_text(report);
  EXPECT_TRUE(has_error(report, {"device 1", "'F1 s1'", "deadlock"})) << errors_text(report);
}

TEST(Validator, CatchesALoweredDeadlock) {
  // The same swap, lowered: d0's RECV_GRAD0 waits for d1's SEND_GRAD0, behind
  // d1's RECV_ACT1, which waits for d0's SEND_ACT1, behind d0's RECV_GRAD0.
  const Schedule schedule =
      lower_schedule(swapped_1f1b(), make_plan(ScheduleKind::OneFOneB, 1, 1, 2, 2));
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", "'RECV_GRAD0 s0 from d1'", "deadlock"}))
      << errors_text(report);
  EXPECT_TRUE(has_error(report, {"device 1", "'RECV_ACT1 s1 from d0'", "deadlock"}))
      << errors_text(report);
}

TEST(Validator, CatchesAnUnmatchedReceive) {
  Schedule schedule = build_schedule(make_plan(ScheduleKind::GPipe, 1, 1, 3, 2));
  auto& ops = schedule.devices[0];
  ops.erase(ops.begin() + find_op(ops, OpKind::SendActivation, 1));
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 1", "'RECV_ACT1 s1 from d0'", "unmatched"}))
      << errors_text(report);
}

TEST(Validator, CatchesAForwardWithoutItsReceive) {
  Schedule schedule = build_schedule(make_plan(ScheduleKind::GPipe, 1, 1, 2, 2));
  auto& ops = schedule.devices[1];
  ops.erase(ops.begin() + find_op(ops, OpKind::RecvActivation, 0));
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 1", "'F0 s1'", "needs a RECV_ACT"}))
      << errors_text(report);
  EXPECT_TRUE(has_error(report, {"device 0", "'SEND_ACT0 s0 to d1'", "unmatched"}))
      << errors_text(report);
}

TEST(Validator, CatchesASendToTheWrongPeer) {
  Schedule schedule = build_schedule(make_plan(ScheduleKind::GPipe, 2, 1, 2, 1));
  auto& ops = schedule.devices[0];
  ops[find_op(ops, OpKind::SendActivation, 0)].peer = 3;  // replica 1's stage 1
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", "sends to d3", "runs on d1"})) << errors_text(report);
}

TEST(Validator, CatchesAWrongWeightVersion) {
  Schedule schedule = generate_schedule({ScheduleKind::OneFOneB, 2, 2, 1, 2});
  for (Op& op : schedule.devices[1])
    if (op.kind == OpKind::Forward && op.step == 1 && op.microbatch == 0) op.weight_version = 0;
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 1", "'F0 s1 t1'", "expected 1"})) << errors_text(report);
}

TEST(Validator, CatchesABackwardThatDoesNotReadItsForwardsVersion) {
  Schedule schedule = generate_pipedream(3, 2, 3);
  auto& ops = schedule.devices[0];
  // The last backward: its forward read an older version than the newest.
  Op& last = ops.back();
  ASSERT_EQ(last.kind, OpKind::Backward);
  last.weight_version += 1;
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", op_label(last), "its F read"})) << errors_text(report);
}

TEST(Validator, CatchesAMissingUpdate) {
  Schedule schedule = build_schedule(make_plan(ScheduleKind::OneFOneB, 1, 1, 2, 2), {}, 2);
  auto& ops = schedule.devices[1];
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::Update) {
      ops.erase(ops.begin() + i);
      break;
    }
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 1", "'F0 s1 t1'", "newest is 0"})) << errors_text(report);
  EXPECT_TRUE(has_error(report, {"device 1", "stage 1", "1 U in the window, expected 2"}))
      << errors_text(report);
}

TEST(Validator, CatchesAnUpdateBeforeTheLastBackward) {
  Schedule schedule = build_schedule(make_plan(ScheduleKind::GPipe, 1, 1, 1, 2));
  auto& ops = schedule.devices[0];                           // F0 F1 B0 B1 U
  std::rotate(ops.begin() + 3, ops.begin() + 4, ops.end());  // F0 F1 B0 U B1
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"'U s0 v1'", "before the stage's last backward"}))
      << errors_text(report);
}

TEST(Validator, CatchesThreeLiveVersionsInPipeDream2BW) {
  // With one micro-batch per step, 2BW's versions equal PipeDream's, but the
  // first stage of four keeps four versions alive.
  Schedule schedule = generate_pipedream(4, 1, 8);
  schedule.kind = ScheduleKind::PipeDream2BW;
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", "stage 0", "4 weight versions alive"}))
      << errors_text(report);
}

TEST(Validator, CatchesMismatchedTensorParallelCollectives) {
  Schedule schedule = build_schedule(make_plan(ScheduleKind::OneFOneB, 1, 2, 2, 2));
  auto& ops = schedule.devices[1];  // rank 0, shard 1
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::AllReduce) {
      ops.erase(ops.begin() + i);
      break;
    }
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 1", "tensor-parallel collectives", "device 0"}))
      << errors_text(report);
}

TEST(Validator, CatchesAMissingPullInAsyncDataParallel) {
  ParallelPlan plan = make_plan(ScheduleKind::GPipe, 2, 1, 2, 2);
  plan.update = UpdateMode::Async;
  Schedule schedule = build_schedule(plan);
  auto& ops = schedule.devices[0];
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::PullWeights && ops[i].step == 1) {
      ops.erase(ops.begin() + i);
      break;
    }
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 0", "PULL_WEIGHTS s0", "missing"})) << errors_text(report);
}

TEST(Validator, CatchesAPullThatCouldNeverHappen) {
  // With staleness 0 a pull waits for every replica's push of the same step.
  ParallelPlan plan = make_plan(ScheduleKind::GPipe, 2, 1, 1, 1);
  plan.update = UpdateMode::Async;
  plan.staleness = 0;
  Schedule schedule = build_schedule(plan);
  ASSERT_TRUE(validate_schedule(schedule).ok()) << errors_text(validate_schedule(schedule));
  // Replica 1 (device 1) pulls before it pushes: its pull waits for its own
  // push, and replica 0's pull waits for it too.
  auto& ops = schedule.devices[1];
  const size_t push = find_op(ops, OpKind::PushGradient, -1);
  std::swap(ops[push], ops[push + 1]);
  const ValidationReport report = validate_schedule(schedule);
  EXPECT_TRUE(has_error(report, {"device 1", "pulls before its push"})) << errors_text(report);
  EXPECT_TRUE(has_error(report, {"device 0", "'PULL_WEIGHTS s0 v1'", "deadlock"}))
      << errors_text(report);
}

TEST(Validator, CatchesBadShapes) {
  Schedule schedule = generate_1f1b(2, 2);
  schedule.devices.pop_back();
  EXPECT_TRUE(has_error(validate_schedule(schedule), {"1 device lists, expected 2"}));
  Schedule compute_with_update = generate_1f1b(2, 2);
  Op update;
  update.kind = OpKind::Update;
  compute_with_update.devices[0].push_back(update);
  EXPECT_TRUE(has_error(validate_schedule(compute_with_update), {"'U s0 v0'", "compute-only"}));
}

TEST(Validator, CapsTheNumberOfErrors) {
  Schedule schedule = generate_gpipe(4, 64);
  for (auto& ops : schedule.devices) ops.clear();
  const ValidationReport report = validate_schedule(schedule);
  ASSERT_FALSE(report.ok());
  EXPECT_LE(report.errors.size(), 51u);
  EXPECT_NE(report.errors.back().find("more errors not shown"), std::string::npos);
}

}  // namespace
}  // namespace pipelab
