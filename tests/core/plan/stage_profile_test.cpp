#include "core/plan/stage_profile.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

LayerSpec linear(int64_t out, bool bias = true) { return LayerSpec{LayerType::Linear, out, bias, 0.0}; }
LayerSpec layer(LayerType type) { return LayerSpec{type, 0, true, 0.0}; }

ModelSpec mlp() {
  ModelSpec model;
  model.input = {6};
  model.layers = {linear(8), layer(LayerType::Relu), linear(8), layer(LayerType::Relu), linear(4)};
  return model;
}

TEST(StageProfile, StagesAddUpToTheModelWithoutTensorParallelism) {
  ModelSpec model;
  model.input = {12};
  model.layers = {linear(32), layer(LayerType::Gelu), layer(LayerType::LayerNorm), linear(16),
                  layer(LayerType::Dropout), linear(16, false), layer(LayerType::Tanh), linear(3)};
  const int64_t microbatch = 5;
  for (int pp : {1, 2, 3, 8}) {
    ParallelPlan plan;
    plan.pp = pp;
    const auto profiles = profile_stages(model, plan, microbatch);
    ASSERT_EQ(static_cast<int>(profiles.size()), pp);

    double forward = 0, backward_input = 0, backward_weight = 0;
    int64_t params = 0, activations = 0;
    for (const LayerInfo& info : describe_layers(model)) {
      forward += info.forward_flops * microbatch;
      backward_input += info.backward_input_flops * microbatch;
      backward_weight += info.backward_weight_flops * microbatch;
      params += info.params;
      activations += info.activation_bytes * microbatch;
    }
    double stage_forward = 0, stage_backward_input = 0, stage_backward_weight = 0;
    int64_t stage_params = 0, stage_activations = 0;
    for (size_t s = 0; s < profiles.size(); ++s) {
      stage_forward += profiles[s].forward_flops;
      stage_backward_input += profiles[s].backward_input_flops;
      stage_backward_weight += profiles[s].backward_weight_flops;
      stage_params += profiles[s].params;
      stage_activations += profiles[s].activation_bytes;
      EXPECT_TRUE(profiles[s].tp_allreduces.empty());
      if (s > 0) {
        EXPECT_EQ(profiles[s].input_bytes, profiles[s - 1].output_bytes);
      }
    }
    EXPECT_DOUBLE_EQ(stage_forward, forward);
    EXPECT_DOUBLE_EQ(stage_backward_input, backward_input);
    EXPECT_DOUBLE_EQ(stage_backward_weight, backward_weight);
    EXPECT_EQ(stage_params, params);
    EXPECT_EQ(stage_activations, activations);
    EXPECT_EQ(profiles.front().input_bytes, microbatch * 12 * 4);
    EXPECT_EQ(profiles.back().output_bytes, microbatch * 3 * 4);
  }
}

TEST(StageProfile, MegatronRolesPairLinearsWithinAStage) {
  // linear, relu, linear, relu, linear: a column/row pair, then an unpaired linear.
  ParallelPlan one_stage;
  const auto roles = tensor_parallel_roles(mlp(), partition_layers(mlp(), one_stage));
  ASSERT_EQ(roles.size(), 5u);
  EXPECT_EQ(roles[0], TensorParallelRole::ColumnParallel);
  EXPECT_EQ(roles[1], TensorParallelRole::Sharded);
  EXPECT_EQ(roles[2], TensorParallelRole::RowParallel);
  EXPECT_EQ(roles[3], TensorParallelRole::Replicated);
  EXPECT_EQ(roles[4], TensorParallelRole::Replicated);

  // A layernorm needs the full width, so the linear before it stays unpaired.
  ModelSpec with_norm;
  with_norm.input = {4};
  with_norm.layers = {linear(8), layer(LayerType::LayerNorm), linear(8), layer(LayerType::Gelu), linear(4)};
  const auto norm_roles = tensor_parallel_roles(with_norm, {{0, 5}});
  EXPECT_EQ(norm_roles[0], TensorParallelRole::Replicated);
  EXPECT_EQ(norm_roles[1], TensorParallelRole::Replicated);
  EXPECT_EQ(norm_roles[2], TensorParallelRole::ColumnParallel);
  EXPECT_EQ(norm_roles[3], TensorParallelRole::Sharded);
  EXPECT_EQ(norm_roles[4], TensorParallelRole::RowParallel);

  // Pairs never cross a stage boundary.
  const auto split_roles = tensor_parallel_roles(mlp(), {{0, 2}, {2, 5}});
  EXPECT_EQ(split_roles[0], TensorParallelRole::Replicated);
  EXPECT_EQ(split_roles[1], TensorParallelRole::Replicated);
  EXPECT_EQ(split_roles[2], TensorParallelRole::ColumnParallel);
  EXPECT_EQ(split_roles[3], TensorParallelRole::Sharded);
  EXPECT_EQ(split_roles[4], TensorParallelRole::RowParallel);
}

TEST(StageProfile, TensorParallelShardsSplitTheLinearPairs) {
  const ModelSpec model = mlp();  // 6 -> 8 -> relu -> 8 -> relu -> 4
  const int64_t microbatch = 3;
  ParallelPlan plan;
  plan.tp = 2;
  const auto profiles = profile_stages(model, plan, microbatch);
  ASSERT_EQ(profiles.size(), 1u);
  const StageProfile& shard = profiles[0];

  // Every shard holds half of the pair's weights; the row-parallel bias (8) and
  // the unpaired last linear (8 * 4 + 4) are replicated on both shards.
  int64_t total_params = 0;
  for (const LayerInfo& info : describe_layers(model)) total_params += info.params;
  const int64_t replicated = 8 + (8 * 4 + 4);
  EXPECT_EQ(plan.tp * shard.params, total_params + (plan.tp - 1) * replicated);

  // Per shard and sample: column 6 x 4 (+4 bias), relu on 4, row 4 x 8 (+8 bias),
  // relu on 8, replicated 8 x 4 (+4 bias).
  const double forward = (2 * 6 * 4 + 4) + 4 + (2 * 4 * 8 + 8) + 8 + (2 * 8 * 4 + 4);
  EXPECT_DOUBLE_EQ(shard.forward_flops, forward * microbatch);
  const double backward_input = (2 * 6 * 4) + 4 + (2 * 4 * 8) + 8 + (2 * 8 * 4);
  EXPECT_DOUBLE_EQ(shard.backward_input_flops, backward_input * microbatch);
  // Activations kept: column input 6, relu 4 (split), row input 4 (split), relu 8, last input 8.
  EXPECT_EQ(shard.activation_bytes, (6 + 4 + 4 + 8 + 8) * 4 * microbatch);
  EXPECT_EQ(shard.input_bytes, microbatch * 6 * 4);
  EXPECT_EQ(shard.output_bytes, microbatch * 4 * 4);

  // One forward all-reduce (row output) and one backward (column input gradient).
  ASSERT_EQ(shard.tp_allreduces.size(), 2u);
  EXPECT_EQ(shard.tp_allreduces[0].layer, 0);
  EXPECT_FALSE(shard.tp_allreduces[0].in_forward);
  EXPECT_EQ(shard.tp_allreduces[0].bytes, microbatch * 6 * 4);
  EXPECT_EQ(shard.tp_allreduces[1].layer, 2);
  EXPECT_TRUE(shard.tp_allreduces[1].in_forward);
  EXPECT_EQ(shard.tp_allreduces[1].bytes, microbatch * 8 * 4);
}

TEST(StageProfile, RejectsATensorParallelWidthThatDoesNotDivide) {
  ParallelPlan plan;
  plan.tp = 3;
  try {
    profile_stages(mlp(), plan, 4);
    FAIL() << "tp = 3 cannot split width 8";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("tp = 3 does not divide linear layer 0's width 8"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(profile_stages(mlp(), ParallelPlan{}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
