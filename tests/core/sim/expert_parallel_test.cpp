// Expert parallelism in the schedule: the lowering lists a moe layer's
// all-to-alls after its stage's F and B, the validator accepts them and
// refuses broken ones, and the simulator charges each (ep - 1) / ep of its
// bytes at the link bandwidth.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/schedule/lowering.h"
#include "core/io/hardware_catalogue.h"
#include "core/schedule/validator.h"
#include "core/sim/simulator.h"

namespace pipelab {
namespace {

// linear 16, moe (4 experts, top-2, ffn 32), linear 3 on 8 features.
ModelSpec moe_model() {
  ModelSpec model;
  model.input = {8};
  LayerSpec hidden;
  hidden.out = 16;
  LayerSpec moe;
  moe.type = LayerType::Moe;
  moe.experts = 4;
  moe.top_k = 2;
  moe.ffn = 32;
  LayerSpec output;
  output.out = 3;
  model.layers = {hidden, moe, output};
  return model;
}

ParallelPlan plan(int ep) {
  ParallelPlan plan;
  plan.dp = 4;
  plan.ep = ep;
  plan.pp = 2;
  plan.microbatches = 2;
  plan.partition = PartitionRule::Explicit;
  plan.boundaries = {1};  // the moe layer starts stage 1
  return plan;
}

constexpr int64_t kMicrobatch = 8;

Schedule lowered(int ep) {
  const ParallelPlan p = plan(ep);
  return build_schedule(p, profile_stages(moe_model(), p, kMicrobatch, Precision::Fp32), 1);
}

int count_all_to_alls(const std::vector<Op>& ops) {
  return static_cast<int>(std::count_if(ops.begin(), ops.end(),
                                        [](const Op& op) { return op.kind == OpKind::AllToAll; }));
}

TEST(ExpertParallel, LoweringListsADispatchAndACombineAfterEachForwardAndBackward) {
  const Schedule schedule = lowered(2);
  const ValidationReport report = validate_schedule(schedule);
  ASSERT_TRUE(report.ok()) << report.errors.front();
  const DeviceLayout layout = schedule.layout();
  for (int d = 0; d < schedule.device_count(); ++d) {
    const std::vector<Op>& ops = schedule.devices[d];
    const bool holds_experts = layout.coord_of(d).pipeline_rank == 1;
    EXPECT_EQ(count_all_to_alls(ops), holds_experts ? 2 * 4 : 0) << "device " << d;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::AllToAll) continue;
      EXPECT_EQ(ops[i].group, CommGroup::ExpertParallel);
      EXPECT_EQ(ops[i].layer, 1);
      // Right after its compute op (or the other all-to-all of the pair).
      const OpKind before = ops[i - 1].kind;
      EXPECT_TRUE(before == OpKind::Forward || before == OpKind::Backward ||
                  before == OpKind::AllToAll);
      // 4 experts x ceil(1.25 x 8 tokens x 2 / 4) = 5 slots x 16 values x 4 bytes.
      EXPECT_EQ(ops[i].bytes, 4 * 5 * 16 * 4);
    }
  }
  EXPECT_EQ(count_all_to_alls(lowered(1).devices[6]), 0)
      << "no all-to-all without expert parallelism";
}

TEST(ExpertParallel, TheValidatorRefusesAllToAllsTheGroupDoesNotShare) {
  Schedule missing = lowered(2);
  // Device 1 (replica 0, stage 1) loses one all-to-all its group partner (device 3) runs.
  std::vector<Op>& ops = missing.devices[1];
  ops.erase(std::find_if(ops.begin(), ops.end(),
                         [](const Op& op) { return op.kind == OpKind::AllToAll; }));
  EXPECT_FALSE(validate_schedule(missing).ok());

  Schedule wrong_group = lowered(2);
  for (Op& op : wrong_group.devices[1])
    if (op.kind == OpKind::AllToAll) op.group = CommGroup::DataParallel;
  const ValidationReport report = validate_schedule(wrong_group);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.errors.front().find("expert-parallel"), std::string::npos)
      << report.errors.front();

  Schedule without_ep = lowered(2);
  without_ep.ep = 1;
  EXPECT_FALSE(validate_schedule(without_ep).ok());
}

TEST(ExpertParallel, TheSimulatorChargesEachAllToAllItsShareOfTheBytes) {
  const DeviceProfile h100 = *find_device_profile("h100");
  const CostModel cost = CostModel::from_profiles({StageProfile{}}, h100, 0);
  Op exchange;
  exchange.kind = OpKind::AllToAll;
  exchange.group = CommGroup::ExpertParallel;
  exchange.bytes = 1 << 24;
  // Each member keeps 1/ep of its buffer and sends the rest once.
  EXPECT_DOUBLE_EQ(cost.collective_duration(exchange, 4),
                   0.75 * (1 << 24) / h100.link_bandwidth + 3 * h100.link_latency_s);

  // In a simulated run each listed all-to-all takes that time, on the devices holding experts.
  const ParallelPlan p = plan(4);
  const auto profiles = profile_stages(moe_model(), p, kMicrobatch, Precision::Fp32);
  const SimulationResult result =
      simulate(build_schedule(p, profiles, 1), CostModel::from_profiles(profiles, h100, 2));
  int simulated = 0;
  for (const TraceEvent& event : result.trace.events) {
    if (event.op.kind != OpKind::AllToAll) continue;
    ++simulated;
    EXPECT_NEAR(event.t_end - event.t_begin, cost.collective_duration(event.op, 4), 1e-12);
  }
  EXPECT_EQ(simulated, 4 * 2 * 4);  // four devices of stage 1, two micro-batches, four each
}

TEST(ExpertParallel, EachDeviceHoldsItsShareOfTheExperts) {
  const auto whole = profile_stages(moe_model(), plan(1), kMicrobatch, Precision::Fp32);
  const auto split = profile_stages(moe_model(), plan(4), kMicrobatch, Precision::Fp32);
  const int64_t experts = 4 * (16 * 32 + 32 + 32 * 16 + 16);
  EXPECT_EQ(whole[1].params - split[1].params, experts * 3 / 4);
  EXPECT_EQ(whole[1].forward_flops, split[1].forward_flops);
}

TEST(ExpertParallel, ABlockWithExpertsGetsAMoeLayersAllToAllsAndShare) {
  // A GPT of 4 positions: embedding 16, a block whose MLP is the moe layer's
  // experts, layernorm, linear; the block starts stage 1.
  ModelSpec model;
  model.input = {4};
  LayerSpec embedding;
  embedding.type = LayerType::Embedding;
  embedding.vocab = 8;
  embedding.dim = 16;
  LayerSpec block;
  block.type = LayerType::TransformerBlock;
  block.heads = 2;
  block.ffn = 32;
  block.experts = 4;
  block.top_k = 2;
  LayerSpec norm;
  norm.type = LayerType::LayerNorm;
  LayerSpec output;
  output.out = 8;
  model.layers = {embedding, block, norm, output};
  const ParallelPlan p = plan(2);
  const auto profiles = profile_stages(model, p, 2, Precision::Fp32);
  const Schedule schedule = build_schedule(p, profiles, 1);
  ASSERT_TRUE(validate_schedule(schedule).ok()) << validate_schedule(schedule).errors.front();
  const DeviceLayout layout = schedule.layout();
  for (int d = 0; d < schedule.device_count(); ++d) {
    const bool holds_experts = layout.coord_of(d).pipeline_rank == 1;
    EXPECT_EQ(count_all_to_alls(schedule.devices[d]), holds_experts ? 2 * 4 : 0) << "device " << d;
    for (const Op& op : schedule.devices[d])
      if (op.kind == OpKind::AllToAll) {
        EXPECT_EQ(op.layer, 1);
        // 4 experts x ceil(1.25 x 2 x 4 tokens x 2 / 4) = 5 slots x 16 values x 4 bytes.
        EXPECT_EQ(op.bytes, 4 * 5 * 16 * 4);
      }
  }
  // Each member of a group of 2 holds half the experts.
  const auto whole = profile_stages(model, plan(1), 2, Precision::Fp32);
  EXPECT_EQ(whole[1].params - profiles[1].params, 4 * (16 * 32 + 32 + 32 * 16 + 16) / 2);
}

}  // namespace
}  // namespace pipelab
