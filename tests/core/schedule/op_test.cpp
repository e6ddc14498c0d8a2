#include "core/schedule/op.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace pipelab {
namespace {

const std::vector<std::pair<OpKind, std::string>> kNames = {
    {OpKind::Forward, "F"},
    {OpKind::Backward, "B"},
    {OpKind::BackwardInput, "BI"},
    {OpKind::BackwardWeight, "BW"},
    {OpKind::Update, "U"},
    {OpKind::SendActivation, "SEND_ACT"},
    {OpKind::RecvActivation, "RECV_ACT"},
    {OpKind::SendGradient, "SEND_GRAD"},
    {OpKind::RecvGradient, "RECV_GRAD"},
    {OpKind::AllReduce, "ALLREDUCE"},
    {OpKind::Recompute, "RECOMPUTE"},
    {OpKind::Offload, "OFFLOAD"},
    {OpKind::Reload, "RELOAD"},
    {OpKind::PushGradient, "PUSH_GRAD"},
    {OpKind::PullWeights, "PULL_WEIGHTS"},
};

TEST(OpKind, NamesRoundTrip) {
  for (const auto& [kind, name] : kNames) {
    EXPECT_EQ(op_kind_name(kind), name);
    ASSERT_TRUE(parse_op_kind(name).has_value()) << name;
    EXPECT_EQ(*parse_op_kind(name), kind);
  }
  EXPECT_FALSE(parse_op_kind("f").has_value());
  EXPECT_FALSE(parse_op_kind("FORWARD").has_value());
  EXPECT_FALSE(parse_op_kind("").has_value());
}

TEST(OpKind, ComputeAndCommunicationSplitTheKinds) {
  const std::set<OpKind> compute = {OpKind::Forward,        OpKind::Backward, OpKind::BackwardInput,
                                    OpKind::BackwardWeight, OpKind::Update,   OpKind::Recompute};
  for (const auto& [kind, name] : kNames) {
    EXPECT_EQ(is_compute(kind), compute.count(kind) == 1) << name;
    EXPECT_NE(is_compute(kind), is_communication(kind)) << name;
  }
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
