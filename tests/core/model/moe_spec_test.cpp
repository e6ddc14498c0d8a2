// The moe layer's description: its shape, parameters and FLOPs by the
// formulas, and the messages for fields out of range.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/mixture_of_experts.h"
#include "core/model/model_spec.h"
#include "model_test_support.h"

namespace pipelab {
namespace {

LayerSpec moe(int64_t experts, int64_t top_k, int64_t ffn = 0) {
  LayerSpec spec;
  spec.type = LayerType::Moe;
  spec.experts = experts;
  spec.top_k = top_k;
  spec.ffn = ffn;
  return spec;
}

ModelSpec mlp_with(const LayerSpec& layer) {
  ModelSpec model;
  model.input = {8};
  LayerSpec linear;
  linear.out = 6;
  model.layers = {linear, layer};
  return model;
}

using testing::expect_error_mentions;

// A sequence model of 10 positions: an embedding of width 8, then `layer`.
ModelSpec gpt_with(const LayerSpec& layer) {
  ModelSpec model;
  model.input = {10};
  LayerSpec embedding;
  embedding.type = LayerType::Embedding;
  embedding.vocab = 16;
  embedding.dim = 8;
  model.layers = {embedding, layer};
  return model;
}

TEST(MoeSpec, AfterALinearEachSampleIsOneTokenAndFfnDefaultsToFourTimesTheWidth) {
  const LayerInfo info = describe_layers(mlp_with(moe(4, 2)))[1];
  EXPECT_EQ(info.in_features, 6);
  EXPECT_EQ(info.out_features, 6);
  EXPECT_EQ(info.moe.ffn, 24);
  EXPECT_EQ(info.moe.experts, 4);
  // The gate (6 x 4, no bias) and four experts of W1 6 x 24, b1, W2 24 x 6, b2.
  EXPECT_EQ(info.params, 6 * 4 + 4 * (6 * 24 + 24 + 24 * 6 + 6));
  // Forward: the gate's GEMM and softmax, and two experts' GEMMs, GELU and biases.
  EXPECT_DOUBLE_EQ(info.forward_flops, 2.0 * 6 * 4 + 5 * 4 + 2 * (4.0 * 6 * 24 + 8 * 24 + 24 + 6));
}

TEST(MoeSpec, InASequenceModelEachPositionIsAToken) {
  const LayerInfo info = describe_layers(gpt_with(moe(4, 1, 16)))[1];
  EXPECT_EQ(info.tokens, 10);
  EXPECT_EQ(info.moe.dim, 8);
  EXPECT_EQ(info.in_features, 80);
  EXPECT_DOUBLE_EQ(info.forward_flops,
                   10 * (2.0 * 8 * 4 + 5 * 4 + (4.0 * 8 * 16 + 8 * 16 + 16 + 8)));
  EXPECT_GT(info.activation_bytes, info.in_features * 4);
}

TEST(MoeSpec, ABlockWithExpertsCostsItsAttentionHalfAndAMoeLayersExperts) {
  // The same GPT twice: its block dense, then its MLP 4 experts (top-2) of
  // the same ffn; the difference is the dense MLP's and the moe layer's share.
  LayerSpec block;
  block.type = LayerType::TransformerBlock;
  block.heads = 2;
  block.ffn = 16;
  ModelSpec model = gpt_with(block);
  const LayerInfo dense = describe_layers(model)[1];
  model.layers[1].experts = 4;
  model.layers[1].top_k = 2;
  const LayerInfo experts = describe_layers(model)[1];
  EXPECT_FALSE(dense.has_experts());
  ASSERT_TRUE(experts.has_experts());
  EXPECT_EQ(experts.moe.experts, 4);
  EXPECT_EQ(experts.moe.top_k, 2);
  EXPECT_EQ(experts.moe.ffn, 16);
  EXPECT_EQ(experts.moe.tokens, 10);
  const MoeCost moe = moe_cost(experts.moe);
  const int64_t h = 8, f = 16, s = 10;
  EXPECT_EQ(experts.params - dense.params, moe.params - (h * f + f + f * h + h));
  // FFN1 and FFN2 (GEMMs, biases, GELU) against the gate and two experts per token.
  EXPECT_DOUBLE_EQ(experts.forward_flops - dense.forward_flops,
                   moe.forward_flops - (4.0 * s * h * f + s * (f + h) + 8.0 * s * f));
  // FFN1's and GELU's outputs against what the routing keeps.
  EXPECT_EQ(experts.activation_bytes - dense.activation_bytes, (moe.kept_values - 2 * s * f) * 4);
  model.layers[1].activation = BlockActivation::SwiGlu;
  expect_error_mentions(model,
                        "model.layers[1]: a transformer_block with experts has GELU experts");
}

// Expert tensor parallelism splits W1, b1 and W2 and the hidden values (the
// GEMM and GELU work) over tp, and keeps the gate, b2, the dispatched
// inputs and the outputs whole on every shard.
TEST(MoeSpec, TensorParallelSplitsEachExpertsHiddenWidth) {
  const MoeShape shape{10, 8, 4, 2, 16, 1.25};
  const int64_t h = 8, e = 4, f = 16;
  const MoeCost whole = moe_cost(shape);
  const MoeCost half = moe_cost(shape, 2);
  EXPECT_EQ(whole.expert_params - half.expert_params, e * (h * f + f + f * h) / 2);
  EXPECT_EQ(whole.params - half.params, whole.expert_params - half.expert_params);  // the gate is whole
  // Two experts per token, each GEMM pair and GELU over half the hidden width.
  EXPECT_DOUBLE_EQ(whole.forward_flops - half.forward_flops, 10 * 2 * (4.0 * h * f + 8.0 * f + f) / 2);
  // Only the hidden pre-activations shrink: slots x f / 2.
  EXPECT_EQ(whole.kept_values - half.kept_values, static_cast<int64_t>(std::ceil(10 * 1.25 * 2 * f)) -
                                                      static_cast<int64_t>(std::ceil(10 * 1.25 * 2 * f / 2)));
  EXPECT_EQ(whole.backward_working_values, half.backward_working_values);
}

TEST(MoeSpec, MistakesNameTheLayerAndTheFix) {
  expect_error_mentions(mlp_with(moe(0, 1)), "model.layers[1]: moe needs experts >= 1");
  expect_error_mentions(mlp_with(moe(2, 3)),
                        "model.layers[1]: moe top_k = 3 must be in [1, experts = 2]");
  expect_error_mentions(mlp_with(moe(2, 0)), "top_k = 0");
  LayerSpec no_capacity = moe(4, 1);
  no_capacity.capacity_factor = 0;
  expect_error_mentions(mlp_with(no_capacity), "capacity_factor must be > 0");
  LayerSpec negative = moe(4, 1);
  negative.aux_loss_weight = -0.5;
  expect_error_mentions(mlp_with(negative), "aux_loss_weight must be >= 0");
  ModelSpec images;
  images.input = {1, 4, 4};
  images.layers = {moe(2, 1)};
  expect_error_mentions(images, "put a flatten");
}

// ep 2 members of 3 local experts: blocks [m0 e0, m0 e1, m0 e2, m1 e0, m1 e1,
// m1 e2] go to [e0 m0, e0 m1, e1 m0, e1 m1, e2 m0, e2 m1].
TEST(MoeSpec, ExpertParallelSlotBlocksGoExpertMajor) {
  std::vector<int64_t> to;
  for (int64_t block = 0; block < 6; ++block) to.push_back(expert_major_block(block, 2, 3));
  EXPECT_EQ(to, (std::vector<int64_t>{0, 2, 4, 1, 3, 5}));
  for (int64_t block = 0; block < 4; ++block) EXPECT_EQ(expert_major_block(block, 1, 4), block);
}

}  // namespace
}  // namespace pipelab
