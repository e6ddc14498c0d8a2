// Context parallelism (parallel.cp): the device grid and its groups, what one
// context rank holds and computes, the ring's exchanges in the lowered
// schedule, their overlap with attention, the bytes each rank sends, and the
// long-context example that needs it. (Training: tests/conformance/context_parallel_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "core/io/experiment_io.h"
#include "core/io/hardware_catalogue.h"
#include "core/schedule/lowering.h"
#include "core/schedule/op_matching.h"
#include "core/schedule/validator.h"
#include "core/sim/communication_volume.h"
#include "core/sim/experiment_prediction.h"
#include "core/sim/simulator.h"
#include "tests/support/gpt_model.h"

namespace pipelab {
namespace {

ModelSpec gpt(int64_t seq = 128) {
  return testing::gpt_model({.seq = seq, .vocab = 64, .dim = 64, .heads = 4, .blocks = 4, .dropout = 0.1});
}

ParallelPlan plan_with(int cp, int dp = 1, int tp = 1, int pp = 1) {
  ParallelPlan plan;
  plan.cp = cp;
  plan.dp = dp;
  plan.tp = tp;
  plan.pp = pp;
  plan.microbatches = 2;
  return plan;
}

std::string error_of(const ModelSpec& model, const ParallelPlan& plan) {
  try {
    profile_stages(model, plan, 2);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(ContextParallel, TheGridPutsContextRanksBetweenShardsAndStages) {
  const DeviceLayout layout{2, 2, 3, false, 1, 2};  // dp 2, tp 2, pp 3, cp 2
  EXPECT_EQ(layout.device_count(), 24);
  for (int device = 0; device < layout.device_count(); ++device)
    EXPECT_EQ(layout.device_of(layout.coord_of(device)), device);
  // The shards of a context rank sit together, then that stage's other context rank.
  EXPECT_EQ(layout.device_of(0, 0, 1, 0), 1);
  EXPECT_EQ(layout.device_of(0, 0, 0, 1), 2);
  EXPECT_EQ(layout.device_of(0, 1, 0, 0), 4);
  // A pipeline peer keeps its replica, context rank and shard.
  EXPECT_EQ(layout.pipeline_peer(layout.device_of(1, 0, 1, 1), 2), layout.device_of(1, 2, 1, 1));
  // Traces name each device's context rank.
  const std::vector<DeviceInfo> devices = describe_devices(2, 2, 3, 1, false, 2);
  ASSERT_EQ(devices.size(), 24u);
  EXPECT_EQ(devices[2].context, 1);
  EXPECT_EQ(devices[2].label, "device 2 · stage 0 · replica 0 · context 1 · shard 0");
}

TEST(ContextParallel, GroupsSpanWhatEachCollectiveSums) {
  const DeviceLayout layout{2, 2, 1, false, 1, 2};  // dp 2, tp 2, cp 2
  const int device = layout.device_of(1, 0, 1, 1);
  auto members_of = [&](CommGroup group) {
    for (const std::vector<int>& members : collective_groups(layout, group))
      if (std::find(members.begin(), members.end(), device) != members.end()) return members;
    return std::vector<int>{};
  };
  // Its tensor-parallel shards; its ring (same replica and shard); and every
  // device with the same weights: both replicas' context ranks.
  EXPECT_EQ(members_of(CommGroup::TensorParallel), (std::vector<int>{layout.device_of(1, 0, 0, 1), device}));
  EXPECT_EQ(members_of(CommGroup::ContextParallel), (std::vector<int>{layout.device_of(1, 0, 1, 0), device}));
  EXPECT_EQ(members_of(CommGroup::DataParallel).size(), 4u);
  // Without context parallelism there is no ring.
  EXPECT_TRUE(collective_groups(DeviceLayout{2, 2, 1}, CommGroup::ContextParallel).empty());
}

TEST(ContextParallel, EachRankHoldsItsShareOfTheSequenceAndAllTheWeights) {
  const ModelSpec model = gpt();
  // A rank's attention recomputes its scores in the backward, as selective
  // recomputation does (blockwise attention), and keeps each query's
  // log-sum-exp instead of P: 4 heads x 128 positions a block, 4 blocks, 2
  // samples, in fp32, over all ranks together.
  ParallelPlan selective = plan_with(1);
  selective.selective_recompute = true;
  const StageProfile whole = profile_stages(model, selective, 2).at(0);
  const int64_t log_sum_exps = 4 * 128 * 4 * 2 * 4;
  for (int cp : {2, 4}) {
    SCOPED_TRACE("cp " + std::to_string(cp));
    const StageProfile rank = profile_stages(model, plan_with(cp), 2).at(0);
    // The learned position table stays whole: the weights do not shrink.
    EXPECT_EQ(rank.params, whole.params);
    // Every kept activation is per position, and the scores are a rank's
    // queries against all keys: 1 / cp of them.
    EXPECT_EQ(rank.activation_bytes * cp, whole.activation_bytes + log_sum_exps);
    EXPECT_NEAR(rank.forward_flops * cp / whole.forward_flops, 1.0, 1e-12);
    EXPECT_NEAR(rank.backward_input_flops * cp / whole.backward_input_flops, 1.0, 1e-12);
    EXPECT_EQ(rank.input_bytes * cp, whole.input_bytes);
    EXPECT_EQ(rank.output_bytes * cp, whole.output_bytes);
  }
}

TEST(ContextParallel, EveryBlockPassesKeysAndValuesAroundTheRing) {
  const ModelSpec model = gpt();
  const StageProfile rank = profile_stages(model, plan_with(2, 1, 2), 2).at(0);  // cp 2 x tp 2
  ASSERT_EQ(rank.context_parallel_exchanges.size(), 3u * 4);  // three per block
  // The whole sequence's K and V of this shard's heads, for 2 samples, in fp32.
  const int64_t key_values = 2 * 128 * (64 / 2) * 2 * 4;
  int forward = 0, gathers = 0, scatters = 0;
  for (const ContextParallelExchange& exchange : rank.context_parallel_exchanges) {
    EXPECT_EQ(exchange.bytes, key_values);
    // Hidden behind the forward's Q K^T and P V of this rank's 64 queries against 128 keys.
    EXPECT_DOUBLE_EQ(exchange.hidden_flops, 2 * 4.0 * 64 * 128 * 64 / 2);
    forward += exchange.in_forward;
    (exchange.gradients ? scatters : gathers) += 1;
  }
  EXPECT_EQ(forward, 4);
  EXPECT_EQ(gathers, 8);
  EXPECT_EQ(scatters, 4);
  EXPECT_TRUE(profile_stages(model, plan_with(1), 2).at(0).context_parallel_exchanges.empty());
}

TEST(ContextParallel, RefusesWhatItCannotSplitWithTheReason) {
  EXPECT_NE(error_of(gpt(100), plan_with(4)).find("2 x cp = 8 equal chunks"), std::string::npos)
      << error_of(gpt(100), plan_with(4));
  ModelSpec mlp;
  mlp.input = {16};
  LayerSpec linear;
  linear.type = LayerType::Linear;
  linear.out = 8;
  mlp.layers = {linear, linear};
  EXPECT_NE(error_of(mlp, plan_with(2)).find("does not start with an embedding"), std::string::npos);
  ParallelPlan async = plan_with(2, 2);
  async.update = UpdateMode::Async;
  EXPECT_THROW(check_context_parallel(async), std::invalid_argument);
  EXPECT_THROW(check_context_parallel(plan_with(0)), std::invalid_argument);
  EXPECT_NO_THROW(check_context_parallel(plan_with(8, 4)));
}

std::map<OpKind, int> ring_ops(const Schedule& schedule, int device) {
  std::map<OpKind, int> count;
  for (const Op& op : schedule.devices[device])
    if (op.group == CommGroup::ContextParallel) ++count[op.kind];
  return count;
}

TEST(ContextParallel, TheLoweredScheduleRunsTheRingInsideEachBlocksPasses) {
  const ModelSpec model = gpt();
  const ParallelPlan plan = plan_with(2, 2, 2, 2);  // 16 devices
  const std::vector<StageProfile> profiles = profile_stages(model, plan, 2);
  const Schedule schedule = build_schedule(plan, profiles, 1);
  ASSERT_EQ(schedule.device_count(), 16);
  const ValidationReport report = validate_schedule(schedule);
  ASSERT_TRUE(report.ok()) << (report.errors.empty() ? "" : report.errors.front());
  for (int device = 0; device < schedule.device_count(); ++device) {
    const int stage = schedule.layout().coord_of(device).pipeline_rank;
    const int blocks = static_cast<int>(profiles[stage].context_parallel_exchanges.size()) / 3;
    // Per micro-batch: a gather in the forward; a gather and a scatter in the backward.
    EXPECT_EQ(ring_ops(schedule, device),
              (std::map<OpKind, int>{{OpKind::AllGather, 2 * 2 * blocks}, {OpKind::ReduceScatter, 2 * blocks}}));
  }
  // The gradients are summed over both replicas and both context ranks.
  const std::vector<Op>& ops = schedule.devices[0];
  const auto reduce = std::find_if(ops.begin(), ops.end(), [](const Op& op) {
    return op.kind == OpKind::AllReduce && op.group == CommGroup::DataParallel;
  });
  ASSERT_NE(reduce, ops.end());
  const ScheduleMatching matching = match_schedule_ops(schedule);
  const int global = matching.first_op[0] + static_cast<int>(reduce - ops.begin());
  EXPECT_EQ(matching.groups[matching.group_of_collective[matching.partner[global]]].members.size(), 4u);
  // One context rank alone still sums its gradients with the other.
  const Schedule alone = build_schedule(plan_with(2), profile_stages(model, plan_with(2), 2), 1);
  EXPECT_EQ(std::count_if(alone.devices[0].begin(), alone.devices[0].end(),
                          [](const Op& op) { return op.kind == OpKind::AllReduce; }),
            1);
}

TEST(ContextParallel, TheRingCostsOnlyWhatAttentionDoesNotHide) {
  // Long enough that attention's GEMMs outlast the ring on NVLink.
  const ModelSpec model = testing::gpt_model({.seq = 16384, .vocab = 64, .dim = 1024, .heads = 8, .blocks = 2});
  const std::vector<StageProfile> profiles = profile_stages(model, plan_with(2), 2);
  const ContextParallelExchange& exchange = profiles[0].context_parallel_exchanges.front();
  Op ring;
  ring.kind = OpKind::AllGather;
  ring.group = CommGroup::ContextParallel;
  ring.layer = exchange.layer;
  ring.bytes = exchange.bytes;
  DeviceProfile device = *find_device_profile("h100");
  const double attention = exchange.hidden_flops / device.flops_per_s;
  auto ring_alone = [&](const DeviceProfile& on) {
    return 0.5 * static_cast<double>(exchange.bytes) / on.link_bandwidth + on.link_latency_s;
  };
  // NVLink brings K and V faster than the GEMMs use them: nothing exposed.
  ASSERT_LT(ring_alone(device), attention);
  EXPECT_EQ(CostModel::from_profiles(profiles, device, 2).collective_duration(ring, 2), 0.0);
  // A link a million times slower exposes all but the attention's time.
  device.link_bandwidth /= 1e6;
  EXPECT_NEAR(CostModel::from_profiles(profiles, device, 2).collective_duration(ring, 2),
              ring_alone(device) - attention, 1e-9 * ring_alone(device));
  // Other collectives are not hidden.
  ring.group = CommGroup::TensorParallel;
  EXPECT_NEAR(CostModel::from_profiles(profiles, device, 2).collective_duration(ring, 2), ring_alone(device),
              1e-9 * ring_alone(device));
}

Experiment long_context() {
  return load_experiment(std::string(PIPELAB_SOURCE_DIR) + "/examples/llama3_8b_long_context.json");
}

const SimulationOptions kMetricsOnly{false, false};

TEST(ContextParallel, ALongContextRunSendsItsRingAndHalvesItsActivationsAtTwiceTheRanks) {
  Experiment experiment = long_context();
  ASSERT_GT(experiment.parallel.cp, 1);
  const int cp = experiment.parallel.cp;
  const Prediction split = predict_experiment(experiment, std::nullopt, 0, kMetricsOnly);
  const DeviceSimStats& device = split.result.per_device.at(0);
  const int64_t activations = device.peak_bytes[static_cast<int>(MemoryCategory::Activations)];
  // Every rank sends its ring K and V: per micro-batch and block, (cp - 1) / cp
  // of the whole K and V three times (forward gather; backward gather and scatter).
  const CommunicationVolume sent = communication_per_step(split.schedule, 0);
  double ring = 0;
  for (const ContextParallelExchange& exchange : split.profiles[0].context_parallel_exchanges)
    ring += static_cast<double>(exchange.bytes) * (cp - 1) / cp;
  EXPECT_NEAR(sent.context_parallel, ring * experiment.parallel.microbatches, 1e-9 * ring);
  EXPECT_EQ(sent.context_parallel, communication_per_step(split.schedule, 1).context_parallel);

  // Twice the ranks hold half the activations each.
  experiment.parallel.cp = 2 * cp;
  experiment.simulation.cluster.nodes *= 2;
  const Prediction finer = predict_experiment(experiment, std::nullopt, 0, kMetricsOnly);
  EXPECT_EQ(finer.profiles[0].activation_bytes * 2, split.profiles[0].activation_bytes);
  EXPECT_LT(finer.result.per_device.at(0).peak_bytes[static_cast<int>(MemoryCategory::Activations)], activations);
}

TEST(ContextParallel, ExperimentFilesReadAndWriteIt) {
  Experiment experiment = long_context();
  const Experiment again = parse_experiment(experiment_to_json(experiment));
  EXPECT_EQ(again.parallel.cp, experiment.parallel.cp);
  experiment.parallel.cp = 65;
  const std::vector<std::string> problems = validate_experiment(experiment);
  EXPECT_TRUE(std::any_of(problems.begin(), problems.end(), [](const std::string& problem) {
    return problem.find("parallel.cp") != std::string::npos;
  }));
}

}  // namespace
}  // namespace pipelab
