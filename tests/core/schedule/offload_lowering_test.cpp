// Offloading in the lowered schedule: where OFFLOAD and RELOAD go (around each
// micro-batch's activations, or around each U for optimizer offloading), what
// they carry, and what the validator says when one is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/schedule/lowering.h"
#include "core/schedule/validator.h"

namespace pipelab {
namespace {

ParallelPlan offload_plan(ScheduleKind kind, int pp, int m) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.pp = pp;
  plan.microbatches = m;
  plan.offload = OffloadMode::Activations;
  return plan;
}

std::vector<StageProfile> profiles_with_activations(int stages) {
  std::vector<StageProfile> profiles(stages);
  for (int s = 0; s < stages; ++s) {
    profiles[s].activation_bytes = 5000 + s;
    profiles[s].params = 10;
  }
  return profiles;
}

bool is_host_transfer(OpKind kind) { return op_kind_facts(kind).family == OpFamily::HostTransfer; }

// The device's compute passes and host transfers, as "F0 OFFLOAD0 ... B3".
std::string passes_and_transfers(const std::vector<Op>& ops) {
  std::string text;
  for (const Op& op : ops) {
    if (!op_kind_facts(op.kind).in_compute_schedule && !is_host_transfer(op.kind)) continue;
    if (!text.empty()) text += ' ';
    text += op_kind_name(op.kind);
    text += std::to_string(op.microbatch);
  }
  return text;
}

TEST(OffloadLowering, OneFOneBFirstStageOffloadsAndPrefetchesOneComputeOpAhead) {
  // Stage 0 of 1f1b, pp 3, m 4 runs F0 F1 F2 B0 F3 B1 B2 B3: every backward is
  // three or more compute ops after its forward, so all four are offloaded,
  // and each RELOAD comes before the compute op that precedes its backward.
  const Schedule lowered = build_schedule(offload_plan(ScheduleKind::OneFOneB, 3, 4));
  ASSERT_TRUE(validate_schedule(lowered).ok()) << validate_schedule(lowered).errors.front();
  EXPECT_EQ(passes_and_transfers(lowered.devices[0]),
            "F0 OFFLOAD0 F1 OFFLOAD1 RELOAD0 F2 OFFLOAD2 B0 RELOAD1 F3 OFFLOAD3 RELOAD2 B1 RELOAD3 B2 B3");
  // The last stage runs each backward right after its forward: nothing to offload.
  EXPECT_EQ(passes_and_transfers(lowered.devices[2]), "F0 B0 F1 B1 F2 B2 F3 B3");
}

// For every offloaded micro-batch: OFFLOAD right after its F's group, RELOAD
// exactly one compute op before its B/BI, both with the stage's activation bytes.
void expect_offload_placement(ScheduleKind kind) {
  SCOPED_TRACE(schedule_name(kind));
  const ParallelPlan plan = offload_plan(kind, 4, 8);
  const std::vector<StageProfile> profiles = profiles_with_activations(plan.stages());
  const Schedule lowered = build_schedule(plan, profiles);
  const ValidationReport report = validate_schedule(lowered);
  ASSERT_TRUE(report.ok()) << report.errors.front();
  int offloads = 0;
  for (const std::vector<Op>& ops : lowered.devices) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (!is_host_transfer(op.kind)) continue;
      EXPECT_EQ(op.bytes, profiles[op.stage].activation_bytes) << op_label(op);
      auto same_microbatch = [&](const Op& other) {
        return other.stage == op.stage && other.step == op.step && other.microbatch == op.microbatch;
      };
      if (op.kind == OpKind::Offload) {
        ++offloads;
        // The last compute op before it is its own forward.
        auto before = std::find_if(ops.rbegin() + (ops.size() - i), ops.rend(),
                                   [](const Op& o) { return op_kind_facts(o.kind).in_compute_schedule; });
        ASSERT_NE(before, ops.rend());
        EXPECT_EQ(before->kind, OpKind::Forward) << op_label(op);
        EXPECT_TRUE(same_microbatch(*before)) << op_label(op);
      } else {
        // Exactly one compute op, then its B/BI.
        std::vector<const Op*> next_compute;
        for (size_t j = i + 1; j < ops.size() && next_compute.size() < 2; ++j)
          if (op_kind_facts(ops[j].kind).in_compute_schedule) next_compute.push_back(&ops[j]);
        ASSERT_EQ(next_compute.size(), 2u) << op_label(op);
        EXPECT_TRUE(computes_input_gradient(next_compute[1]->kind)) << op_label(op);
        EXPECT_TRUE(same_microbatch(*next_compute[1])) << op_label(op);
      }
    }
  }
  EXPECT_GT(offloads, 0);
}

TEST(OffloadLowering, GPipeOneFOneBAndZbH1PlaceOffloadAfterFAndReloadBeforeTheBackward) {
  expect_offload_placement(ScheduleKind::GPipe);
  expect_offload_placement(ScheduleKind::OneFOneB);
  expect_offload_placement(ScheduleKind::ZeroBubbleH1);
}

TEST(OffloadLowering, NoHostTransfersWithoutOffload) {
  ParallelPlan plan = offload_plan(ScheduleKind::GPipe, 4, 8);
  plan.offload = OffloadMode::None;
  for (const std::vector<Op>& ops : build_schedule(plan).devices)
    for (const Op& op : ops) EXPECT_FALSE(is_host_transfer(op.kind)) << op_label(op);
}

TEST(OffloadLowering, RefusesOffloadWithRecompute) {
  ParallelPlan plan = offload_plan(ScheduleKind::OneFOneB, 2, 4);
  plan.recompute = true;
  try {
    build_schedule(plan);
    FAIL() << "offload with recompute was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("choose one"), std::string::npos) << error.what();
  }
}

TEST(OffloadValidator, RejectsAnOffloadWithoutItsReload) {
  Schedule lowered = build_schedule(offload_plan(ScheduleKind::GPipe, 2, 4));
  std::vector<Op>& ops = lowered.devices[0];
  const auto reload = std::find_if(ops.begin(), ops.end(), [](const Op& op) { return op.kind == OpKind::Reload; });
  ASSERT_NE(reload, ops.end());
  const int microbatch = reload->microbatch;
  ops.erase(reload);
  const ValidationReport report = validate_schedule(lowered);
  ASSERT_FALSE(report.ok());
  const std::string expected = "OFFLOAD" + std::to_string(microbatch);
  EXPECT_TRUE(std::any_of(report.errors.begin(), report.errors.end(), [&](const std::string& error) {
    return error.find(expected) != std::string::npos && error.find("has no RELOAD") != std::string::npos;
  })) << report.errors.front();
}

TEST(OffloadValidator, RejectsAReloadAfterItsBackward) {
  Schedule lowered = build_schedule(offload_plan(ScheduleKind::GPipe, 2, 4));
  std::vector<Op>& ops = lowered.devices[0];
  const auto reload = std::find_if(ops.begin(), ops.end(), [](const Op& op) { return op.kind == OpKind::Reload; });
  ASSERT_NE(reload, ops.end());
  const Op moved = *reload;
  ops.erase(reload);
  ops.push_back(moved);  // after every backward
  const ValidationReport report = validate_schedule(lowered);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(std::any_of(report.errors.begin(), report.errors.end(), [](const std::string& error) {
    return error.find("runs after its B/BI") != std::string::npos;
  })) << report.errors.front();
}

ParallelPlan optimizer_offload_plan(ScheduleKind kind) {
  ParallelPlan plan;
  plan.schedule = kind;
  plan.pp = 2;
  plan.microbatches = 4;
  plan.dp = 2;
  plan.offload = OffloadMode::Optimizer;
  return plan;
}

TEST(OptimizerOffloadLowering, EachUpdateIsWrappedInTheGradientsOffloadAndTheWeightsReload) {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::ZeroBubbleH1}) {
    SCOPED_TRACE(schedule_name(kind));
    const ParallelPlan plan = optimizer_offload_plan(kind);
    std::vector<StageProfile> profiles(2);
    profiles[0].params = 100;
    profiles[1].params = 300;
    const Schedule lowered = build_schedule(plan, profiles);
    const ValidationReport report = validate_schedule(lowered);
    ASSERT_TRUE(report.ok()) << report.errors.front();
    for (const std::vector<Op>& ops : lowered.devices) {
      const auto update = std::find_if(ops.begin(), ops.end(), [](const Op& op) { return op.kind == OpKind::Update; });
      ASSERT_NE(update, ops.end());
      ASSERT_TRUE(update != ops.begin() && update + 1 != ops.end());
      const Op& offload = *(update - 1);
      const Op& reload = *(update + 1);
      EXPECT_EQ(offload.kind, OpKind::Offload);
      EXPECT_EQ(reload.kind, OpKind::Reload);
      EXPECT_EQ(offload.microbatch, -1);
      EXPECT_EQ(offload.bytes, profiles[update->stage].gradient_bytes());
      EXPECT_EQ(reload.bytes, profiles[update->stage].weight_bytes());
      // The replicas average the gradients before they leave the device.
      EXPECT_EQ((update - 2)->kind, OpKind::AllReduce);
    }
  }
}

TEST(OptimizerOffloadValidator, RejectsAnUpdateWithoutItsReload) {
  Schedule lowered = build_schedule(optimizer_offload_plan(ScheduleKind::OneFOneB));
  std::vector<Op>& ops = lowered.devices[0];
  const auto reload = std::find_if(ops.begin(), ops.end(), [](const Op& op) { return op.kind == OpKind::Reload; });
  ASSERT_NE(reload, ops.end());
  ops.erase(reload);
  const ValidationReport report = validate_schedule(lowered);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(std::any_of(report.errors.begin(), report.errors.end(), [](const std::string& error) {
    return error.find("needs an OFFLOAD right before it and a RELOAD right after it") != std::string::npos;
  })) << report.errors.front();
}

TEST(OptimizerOffloadLowering, RefusesAsynchronousSchedulesAndUpdates) {
  ParallelPlan plan = optimizer_offload_plan(ScheduleKind::PipeDream);
  EXPECT_THROW(build_schedule(plan), std::invalid_argument);
  plan.schedule = ScheduleKind::OneFOneB;
  plan.update = UpdateMode::Async;
  try {
    build_schedule(plan);
    FAIL() << "optimizer offload with update = async was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("update = async"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pipelab
