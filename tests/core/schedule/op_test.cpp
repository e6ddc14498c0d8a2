#include "core/schedule/op.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "core/plan/stage_profile.h"

namespace pipelab {
namespace {

// Every enumerator, so a kind added to the enum without a row fails here.
static_assert(kAllOpKinds.size() == static_cast<size_t>(OpKind::AllToAll) + 1,
              "kAllOpKinds must list every OpKind; AllToAll is the last enumerator");

TEST(OpKind, NamesRoundTrip) {
  std::set<std::string> names;
  for (size_t i = 0; i < kAllOpKinds.size(); ++i) {
    const OpKind kind = kAllOpKinds[i];
    EXPECT_EQ(static_cast<size_t>(kind), i);
    const std::string name = op_kind_name(kind);
    EXPECT_TRUE(names.insert(name).second) << "two kinds are called " << name;
    ASSERT_TRUE(parse_op_kind(name).has_value()) << name;
    EXPECT_EQ(*parse_op_kind(name), kind);
  }
  // The names traces and CSV files already use.
  EXPECT_EQ(std::string(op_kind_name(OpKind::Forward)), "F");
  EXPECT_EQ(std::string(op_kind_name(OpKind::BackwardInput)), "BI");
  EXPECT_EQ(std::string(op_kind_name(OpKind::SendActivation)), "SEND_ACT");
  EXPECT_EQ(std::string(op_kind_name(OpKind::PullWeights)), "PULL_WEIGHTS");
  EXPECT_FALSE(parse_op_kind("f").has_value());
  EXPECT_FALSE(parse_op_kind("FORWARD").has_value());
  EXPECT_FALSE(parse_op_kind("").has_value());
}

TEST(OpKind, EveryKindHasACompleteRow) {
  for (const OpKind kind : kAllOpKinds) {
    const OpKindFacts& facts = op_kind_facts(kind);
    EXPECT_EQ(facts.kind, kind);
    ASSERT_NE(facts.name, nullptr) << "kind " << static_cast<int>(kind);
    const std::string name = facts.name;
    EXPECT_NE(name, "") << "kind " << static_cast<int>(kind);
    ASSERT_NE(facts.short_name, nullptr) << name;
    EXPECT_NE(std::string(facts.short_name), "") << name;

    const StageWork& work = facts.work;
    const bool does_work =
        work.forward || work.backward_input || work.backward_weight || work.optimizer_step;
    // Compute ops cost their stage's work; everything else costs bytes.
    EXPECT_EQ(does_work, facts.family == OpFamily::Compute) << name;
    EXPECT_NE(is_compute(kind), is_communication(kind)) << name;
    if (facts.reads_weights || facts.in_compute_schedule) {
      EXPECT_TRUE(is_compute(kind)) << name;
    }
    EXPECT_FALSE(facts.reads_weights && facts.writes_weights) << name;

    // A message names its other end, which names it back, one stage away.
    const bool message = facts.message_end != MessageEnd::None;
    EXPECT_EQ(message, facts.family == OpFamily::PointToPoint) << name;
    if (message) {
      const OpKindFacts& other = op_kind_facts(facts.other_end);
      EXPECT_EQ(other.other_end, kind) << name;
      EXPECT_NE(other.message_end, facts.message_end) << name;
      EXPECT_NE(other.message_end, MessageEnd::None) << name;
      EXPECT_EQ(other.peer_stage_offset, -facts.peer_stage_offset) << name;
      EXPECT_EQ(std::abs(facts.peer_stage_offset), 1) << name;
    } else {
      EXPECT_EQ(facts.peer_stage_offset, 0) << name;
    }
  }
}

TEST(OpKind, ComputeAndCommunicationSplitTheKinds) {
  const std::set<OpKind> compute = {OpKind::Forward,        OpKind::Backward, OpKind::BackwardInput,
                                    OpKind::BackwardWeight, OpKind::Update,   OpKind::Recompute};
  for (const OpKind kind : kAllOpKinds)
    EXPECT_EQ(is_compute(kind), compute.count(kind) == 1) << op_kind_name(kind);
}

TEST(OpKind, StageFlopsFollowTheWorkEachKindDoes) {
  StageProfile stage;
  stage.forward_flops = 2;
  stage.backward_input_flops = 3;
  stage.backward_weight_flops = 5;
  EXPECT_EQ(stage_flops(OpKind::Forward, stage), 2);
  EXPECT_EQ(stage_flops(OpKind::Recompute, stage), 2);
  EXPECT_EQ(stage_flops(OpKind::Backward, stage), 8);
  EXPECT_EQ(stage_flops(OpKind::BackwardInput, stage), 3);
  EXPECT_EQ(stage_flops(OpKind::BackwardWeight, stage), 5);
  EXPECT_EQ(stage_flops(OpKind::Update, stage), 0);  // memory-bound
  EXPECT_EQ(stage_flops(OpKind::SendActivation, stage), 0);
}

TEST(OpLabel, NamesKindMicrobatchStageAndWhatElseIdentifiesTheOp) {
  Op forward;
  forward.kind = OpKind::Forward;
  forward.microbatch = 3;
  forward.stage = 1;
  EXPECT_EQ(op_label(forward), "F3 s1");

  Op backward = forward;
  backward.kind = OpKind::Backward;
  EXPECT_EQ(op_label(backward), "B3 s1");

  Op later = forward;
  later.step = 2;
  EXPECT_EQ(op_label(later), "F3 s1 t2");

  Op update;
  update.kind = OpKind::Update;
  update.stage = 1;
  update.step = 1;
  update.weight_version = 2;
  EXPECT_EQ(op_label(update), "U s1 v2");

  Op send = forward;
  send.kind = OpKind::SendActivation;
  send.peer = 2;
  EXPECT_EQ(op_label(send), "SEND_ACT3 s1 to d2");

  Op recv = forward;
  recv.kind = OpKind::RecvGradient;
  recv.peer = 0;
  EXPECT_EQ(op_label(recv), "RECV_GRAD3 s1 from d0");

  Op reduce = forward;
  reduce.kind = OpKind::AllReduce;
  reduce.group = CommGroup::TensorParallel;
  reduce.layer = 5;
  EXPECT_EQ(op_label(reduce), "ALLREDUCE3 s1 tp L5");
}

}  // namespace
}  // namespace pipelab
