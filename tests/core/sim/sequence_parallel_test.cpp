// Sequence parallelism in the schedule: a block's all-reduces become
// all-gathers and reduce-scatters, the schedule validates, each half costs half
// an all-reduce, and the memory falls as the analysis says.
#include <gtest/gtest.h>

#include <map>

#include "core/schedule/lowering.h"
#include "core/io/hardware_catalogue.h"
#include "core/schedule/validator.h"
#include "core/sim/simulator.h"
#include "tests/support/gpt_model.h"

namespace pipelab {
namespace {

ModelSpec gpt(int blocks) {
  return testing::gpt_model({.seq = 128, .vocab = 64, .dim = 64, .heads = 4, .blocks = blocks, .dropout = 0.1});
}

ParallelPlan plan(bool sequence_parallel) {
  ParallelPlan plan;
  plan.tp = 2;
  plan.pp = 2;
  plan.microbatches = 4;
  plan.sequence_parallel = sequence_parallel;
  return plan;
}

std::map<OpKind, int> collective_counts(const Schedule& schedule, int device) {
  std::map<OpKind, int> counts;
  for (const Op& op : schedule.devices[device])
    if (is_collective(op.kind)) ++counts[op.kind];
  return counts;
}

TEST(SequenceParallel, BlocksGatherAndScatterInsteadOfAllReducing) {
  const ModelSpec model = gpt(4);
  const auto profiles = profile_stages(model, plan(true), 2, Precision::Bf16Mixed);
  const Schedule schedule = build_schedule(plan(true), profiles, 1);
  const ValidationReport report = validate_schedule(schedule);
  ASSERT_TRUE(report.ok()) << (report.errors.empty() ? "" : report.errors.front());
  // The last stage holds some blocks, the final norm and the output layer.
  int last_stage_device = -1;
  for (int d = 0; d < schedule.device_count(); ++d)
    if (schedule.layout().coord_of(d).pipeline_rank == 1 && schedule.layout().coord_of(d).shard == 0)
      last_stage_device = d;
  ASSERT_GE(last_stage_device, 0);
  const int stage_blocks = profiles[1].layers.end - profiles[1].layers.begin - 2;
  const auto counts = collective_counts(schedule, last_stage_device);
  // One all-reduce per step: the norms' gradients, which each shard takes
  // from its slice of the sequence only; and the vocabulary-parallel loss's
  // two per micro-batch.
  EXPECT_EQ(counts.at(OpKind::AllReduce), 1 + 2 * 4);
  EXPECT_GT(profiles[1].sequence_parallel_gradient_bytes, 0);
  // Per micro-batch (4 of them): each block gathers twice and scatters twice in
  // its forward; its backward gathers the output gradient and the norm output
  // and scatters the norm output's gradient, per half. The output layer
  // gathers once in the forward and scatters once in the backward.
  EXPECT_EQ(counts.at(OpKind::AllGather), 4 * (6 * stage_blocks + 1));
  EXPECT_EQ(counts.at(OpKind::ReduceScatter), 4 * (4 * stage_blocks + 1));
}

// A standalone moe layer between the blocks (moe_layer.h): it gathers the
// whole sequence in the forward, and the output gradient and its input again
// in the backward, scatters nothing, and adds no gradient to the step's sum.
TEST(SequenceParallel, AMoeLayerGathersTheWholeSequenceThreeTimes) {
  ModelSpec model = gpt(4);
  LayerSpec moe;
  moe.type = LayerType::Moe;
  moe.experts = 4;
  moe.top_k = 2;
  moe.ffn = 128;
  moe.capacity_factor = 1.25;
  const int moe_index = 2;
  model.layers.insert(model.layers.begin() + moe_index, moe);
  ParallelPlan one_stage = plan(true);
  one_stage.pp = 1;
  const int64_t microbatch = 2;
  const auto profiles = profile_stages(model, one_stage, microbatch, Precision::Bf16Mixed);
  const LayerInfo info = describe_layers(model)[moe_index];
  std::vector<TensorParallelAllReduce> listed;
  for (const TensorParallelAllReduce& collective : profiles[0].tp_allreduces)
    if (collective.layer == moe_index) listed.push_back(collective);
  ASSERT_EQ(listed.size(), 3u);
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i].collective, TensorParallelCollective::AllGather);
    EXPECT_EQ(listed[i].in_forward, i == 0);
    EXPECT_EQ(listed[i].bytes, microbatch * info.out_features * 2);  // bf16 activations
  }
  const auto without = profile_stages(gpt(4), one_stage, microbatch, Precision::Bf16Mixed);
  EXPECT_EQ(profiles[0].sequence_parallel_gradient_bytes,
            without[0].sequence_parallel_gradient_bytes);
  const Schedule schedule = build_schedule(one_stage, profiles, 1);
  const ValidationReport report = validate_schedule(schedule);
  ASSERT_TRUE(report.ok()) << (report.errors.empty() ? "" : report.errors.front());
  int moe_gathers = 0;
  for (const Op& op : schedule.devices[0])
    moe_gathers += op.kind == OpKind::AllGather && op.layer == moe_index;
  EXPECT_EQ(moe_gathers, 3 * one_stage.microbatches);
}

TEST(SequenceParallel, SplitsActivationMemoryAndKeepsTheCommunicationVolume) {
  const ModelSpec model = gpt(4);
  ParallelPlan without = plan(false);
  ParallelPlan with = plan(true);
  const auto simulate_plan = [&](const ParallelPlan& p) {
    const auto profiles = profile_stages(model, p, 2, Precision::Bf16Mixed);
    const Schedule schedule = build_schedule(p, profiles, 1);
    return simulate(schedule, CostModel::from_profiles(profiles, *find_device_profile("h100"), 2));
  };
  const SimulationResult a = simulate_plan(without);
  const SimulationResult b = simulate_plan(with);
  const auto activations = [](const SimulationResult& r) {
    return r.per_device[0].peak_bytes[static_cast<size_t>(MemoryCategory::Activations)];
  };
  EXPECT_LT(activations(b), activations(a));
  // A ring reduce-scatter plus an all-gather moves what one all-reduce moves,
  // so the communication time per device stays close.
  EXPECT_NEAR(b.per_device[2].comm, a.per_device[2].comm, 0.25 * a.per_device[2].comm);
}

TEST(SequenceParallel, HalfACollectiveCostsHalfAnAllReduce) {
  const auto profile = *find_device_profile("h100");
  const CostModel cost = CostModel::from_profiles({StageProfile{}}, profile, 0);
  Op reduce;
  reduce.kind = OpKind::AllReduce;
  reduce.bytes = 1 << 24;
  Op gather = reduce;
  gather.kind = OpKind::AllGather;
  Op scatter = reduce;
  scatter.kind = OpKind::ReduceScatter;
  EXPECT_DOUBLE_EQ(cost.collective_duration(gather, 8), cost.collective_duration(reduce, 8) / 2);
  EXPECT_DOUBLE_EQ(cost.collective_duration(scatter, 8), cost.collective_duration(reduce, 8) / 2);
}

}  // namespace
}  // namespace pipelab
