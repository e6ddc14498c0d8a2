// Schedules the simulator must refuse, with a message naming the problem.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/schedule/generators.h"
#include "core/io/hardware_catalogue.h"
#include "core/schedule/lowering.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

Op make_op(OpKind kind, int device, int stage, int microbatch) {
  Op op;
  op.kind = kind;
  op.device = device;
  op.stage = stage;
  op.microbatch = microbatch;
  return op;
}

// Two stages, one micro-batch, written out by hand.
Schedule two_stage_schedule() {
  Schedule schedule;
  schedule.kind = ScheduleKind::GPipe;
  schedule.pp = 2;
  schedule.lowered = true;
  schedule.devices = {
      {make_op(OpKind::Forward, 0, 0, 0), make_op(OpKind::SendActivation, 0, 0, 0),
       make_op(OpKind::RecvGradient, 0, 0, 0), make_op(OpKind::Backward, 0, 0, 0)},
      {make_op(OpKind::RecvActivation, 1, 1, 0), make_op(OpKind::Forward, 1, 1, 0),
       make_op(OpKind::Backward, 1, 1, 0), make_op(OpKind::SendGradient, 1, 1, 0)},
  };
  return schedule;
}

std::string error_of(const Schedule& schedule) {
  try {
    simulate(schedule, CostModel::unit(UnitCosts{}));
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(SimulatorErrorsTest, HandBuiltScheduleRuns) {
  const SimulationResult result = simulate(two_stage_schedule(), CostModel::unit(UnitCosts{}));
  EXPECT_DOUBLE_EQ(result.makespan, 6);  // F, F, B, B of 1 + 2 units each
  EXPECT_EQ(result.trace.events.size(), 8u);
}

TEST(SimulatorErrorsTest, RefusesAnUnloweredSchedule) {
  ParallelPlan plan;
  plan.pp = 2;
  plan.microbatches = 2;
  GeneratorOptions options;
  options.pp = 2;
  options.microbatches = 2;
  const std::string message = error_of(generate_schedule(options));
  EXPECT_NE(message.find("lowered"), std::string::npos) << message;
}

TEST(SimulatorErrorsTest, ReportsADeadlock) {
  Schedule schedule = two_stage_schedule();
  // Device 0 now waits for the gradient before sending the activation.
  std::swap(schedule.devices[0][1], schedule.devices[0][2]);
  const std::string message = error_of(schedule);
  EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
  EXPECT_NE(message.find("device 0"), std::string::npos) << message;
}

TEST(SimulatorErrorsTest, ReportsAReceiveWithoutSend) {
  Schedule schedule = two_stage_schedule();
  schedule.devices[1].pop_back();  // drop the SendGradient
  const std::string message = error_of(schedule);
  EXPECT_NE(message.find("no matching send"), std::string::npos) << message;
}

TEST(SimulatorErrorsTest, ReportsASendToTheWrongPeer) {
  Schedule schedule = two_stage_schedule();
  schedule.devices[0][1].peer = 0;
  const std::string message = error_of(schedule);
  EXPECT_NE(message.find("peer"), std::string::npos) << message;
}

TEST(SimulatorErrorsTest, ReportsMismatchedCollectives) {
  ParallelPlan plan;
  plan.dp = 2;
  plan.microbatches = 2;
  Schedule schedule = build_schedule(plan);
  auto& ops = schedule.devices[1];
  ops.erase(std::find_if(ops.begin(), ops.end(),
                         [](const Op& op) { return op.kind == OpKind::AllReduce; }));
  const std::string message = error_of(schedule);
  EXPECT_NE(message.find("all-reduce"), std::string::npos) << message;
}

TEST(SimulatorErrorsTest, ReportsMissingStageProfiles) {
  ParallelPlan plan;
  plan.pp = 2;
  StageProfile stage;
  stage.forward_flops = 1;
  const CostModel cost = CostModel::from_profiles({stage}, *find_device_profile("h100"), 0);
  EXPECT_THROW(simulate(build_schedule(plan), cost), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
