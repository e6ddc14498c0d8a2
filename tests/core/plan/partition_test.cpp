#include "core/plan/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

LayerSpec linear(int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; }
LayerSpec relu() { return LayerSpec{LayerType::Relu, 0, true, 0.0}; }

ParallelPlan plan_with(int pp, PartitionRule rule, int chunks = 1) {
  ParallelPlan plan;
  plan.pp = pp;
  plan.chunks = chunks;
  plan.partition = rule;
  return plan;
}

// A deliberately lopsided stack: one wide layer, then narrow ones.
ModelSpec lopsided_model() {
  ModelSpec model;
  model.input = {256};
  model.layers = {linear(256), relu(), linear(16), relu(), linear(16), relu(), linear(16), relu(), linear(4)};
  return model;
}

void expect_contiguous_cover(const std::vector<LayerRange>& ranges, int layers, int stages) {
  ASSERT_EQ(static_cast<int>(ranges.size()), stages);
  EXPECT_EQ(ranges.front().begin, 0);
  EXPECT_EQ(ranges.back().end, layers);
  for (size_t s = 0; s < ranges.size(); ++s) {
    EXPECT_LT(ranges[s].begin, ranges[s].end) << "stage " << s << " is empty";
    if (s > 0) {
      EXPECT_EQ(ranges[s].begin, ranges[s - 1].end);
    }
  }
}

double stage_sum(const std::vector<double>& costs, LayerRange range) {
  double sum = 0;
  for (int i = range.begin; i < range.end; ++i) sum += costs[i];
  return sum;
}

double max_stage(const std::vector<double>& costs, const std::vector<LayerRange>& ranges) {
  double worst = 0;
  for (const LayerRange& range : ranges) worst = std::max(worst, stage_sum(costs, range));
  return worst;
}

// The smallest possible slowest stage, by trying every split.
double brute_force_min_max(const std::vector<double>& costs, int stages) {
  const int n = static_cast<int>(costs.size());
  double best = 1e300;
  std::function<void(int, int, double)> search = [&](int begin, int stages_left, double worst) {
    if (stages_left == 1) {
      best = std::min(best, std::max(worst, stage_sum(costs, {begin, n})));
      return;
    }
    for (int end = begin + 1; end <= n - (stages_left - 1); ++end)
      search(end, stages_left - 1, std::max(worst, stage_sum(costs, {begin, end})));
  };
  search(0, stages, 0);
  return best;
}

std::vector<double> compute_costs(const ModelSpec& model, int tp) {
  std::vector<double> costs;
  for (const LayerInfo& info : describe_layers(model)) {
    double cost = info.forward_flops + info.backward_input_flops + info.backward_weight_flops;
    if (info.type == LayerType::Linear) cost /= tp;
    costs.push_back(cost);
  }
  return costs;
}

std::string error_of(const ModelSpec& model, const ParallelPlan& plan) {
  try {
    partition_layers(model, plan);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(Partition, UniformGivesTheRemainderToTheFirstStages) {
  const ModelSpec model = lopsided_model();  // 9 layers
  const auto ranges = partition_layers(model, plan_with(4, PartitionRule::Uniform));
  expect_contiguous_cover(ranges, 9, 4);
  EXPECT_EQ(ranges[0].end - ranges[0].begin, 3);
  for (int s = 1; s < 4; ++s) EXPECT_EQ(ranges[s].end - ranges[s].begin, 2);
}

TEST(Partition, BalancedIsTheExactMinimumOfTheSlowestStage) {
  const ModelSpec model = lopsided_model();
  for (int tp : {1, 4}) {
    for (int stages = 1; stages <= 9; ++stages) {
      ParallelPlan plan = plan_with(stages, PartitionRule::Balanced);
      plan.tp = tp;
      const auto ranges = partition_layers(model, plan);
      expect_contiguous_cover(ranges, 9, stages);
      const auto costs = compute_costs(model, tp);
      EXPECT_NEAR(max_stage(costs, ranges), brute_force_min_max(costs, stages), 1e-6)
          << "tp " << tp << ", " << stages << " stages";
    }
  }
}

TEST(Partition, BalancedBeatsUniformOnALopsidedModel) {
  const ModelSpec model = lopsided_model();
  const auto costs = compute_costs(model, 1);
  const auto balanced = partition_layers(model, plan_with(3, PartitionRule::Balanced));
  const auto uniform = partition_layers(model, plan_with(3, PartitionRule::Uniform));
  EXPECT_LT(max_stage(costs, balanced), max_stage(costs, uniform));
  // The wide first linear dominates, so it ends up alone in stage 0.
  EXPECT_EQ(balanced[0].end, 1);
}

TEST(Partition, ParamsMinimisesTheLargestStage) {
  const ModelSpec model = lopsided_model();
  std::vector<double> params;
  for (const LayerInfo& info : describe_layers(model)) params.push_back(static_cast<double>(info.params));
  for (int stages = 1; stages <= 5; ++stages) {
    const auto ranges = partition_layers(model, plan_with(stages, PartitionRule::Params));
    expect_contiguous_cover(ranges, 9, stages);
    EXPECT_DOUBLE_EQ(max_stage(params, ranges), brute_force_min_max(params, stages));
  }
}

TEST(Partition, ExplicitUsesTheGivenStageStarts) {
  const ModelSpec model = lopsided_model();
  ParallelPlan plan = plan_with(3, PartitionRule::Explicit);
  plan.boundaries = {2, 7};
  const auto ranges = partition_layers(model, plan);
  expect_contiguous_cover(ranges, 9, 3);
  EXPECT_EQ(ranges[0].end, 2);
  EXPECT_EQ(ranges[1].end, 7);

  // Interleaved: pp x chunks stages.
  ParallelPlan interleaved = plan_with(2, PartitionRule::Explicit, 2);
  interleaved.boundaries = {1, 3, 5};
  expect_contiguous_cover(partition_layers(model, interleaved), 9, 4);
}

TEST(Partition, ExplicitRejectsBadBoundaries) {
  const ModelSpec model = lopsided_model();
  ParallelPlan plan = plan_with(3, PartitionRule::Explicit);
  plan.boundaries = {4};
  std::string message = error_of(model, plan);
  EXPECT_NE(message.find("parallel.partition"), std::string::npos) << message;
  EXPECT_NE(message.find("need 2"), std::string::npos) << message;

  plan.boundaries = {5, 5};
  message = error_of(model, plan);
  EXPECT_NE(message.find("strictly increasing"), std::string::npos) << message;

  plan.boundaries = {0, 5};
  message = error_of(model, plan);
  EXPECT_NE(message.find("outside 1..8"), std::string::npos) << message;

  plan.boundaries = {3, 9};
  message = error_of(model, plan);
  EXPECT_NE(message.find("outside 1..8"), std::string::npos) << message;
}

TEST(Partition, TooManyStagesSaysHowManyLayersThereAre) {
  ModelSpec model;
  model.input = {10};
  model.layers = {linear(8), relu(), linear(8), relu(), linear(2)};
  std::string message = error_of(model, plan_with(8, PartitionRule::Balanced));
  EXPECT_NE(message.find("pp = 8 but the model has 5 splittable layers"), std::string::npos) << message;
  EXPECT_NE(message.find("pp <= 5"), std::string::npos) << message;

  message = error_of(model, plan_with(4, PartitionRule::Uniform, 2));
  EXPECT_NE(message.find("pp x chunks = 8"), std::string::npos) << message;
  EXPECT_NE(message.find("5 splittable layers"), std::string::npos) << message;

  EXPECT_EQ(error_of(model, plan_with(5, PartitionRule::Balanced)), "");
}

}  // namespace
}  // namespace pipelab
