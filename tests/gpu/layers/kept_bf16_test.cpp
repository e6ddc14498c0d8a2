// Which values Transformer blocks, experts and stages keep in bf16 under bf16-mixed
// on the CUDA backend (gpu/layers/kept_bf16.h), and how many: host
// arithmetic, checked here without a GPU. (bf16_mixed_test.cpp checks on a
// GPU that they keep what this says, at the bytes this counts, and that
// their results are the same bits either way.)
#include "gpu/layers/kept_bf16.h"

#include <gtest/gtest.h>

namespace pipelab::gpu {
namespace {

TEST(KeptBf16Test, Fp32KeepsEverythingInFloat32) {
  for (const bool sequence_parallel : {false, true})
    for (const bool experts : {false, true}) {
      const BlockKeptBf16 kept = block_kept_bf16(false, sequence_parallel, experts);
      EXPECT_FALSE(kept.norm1_out || kept.qkv || kept.attention_out || kept.norm2_out ||
                   kept.activation_out || kept.gathered_norms);
    }
}

TEST(KeptBf16Test, Bf16MixedKeepsTheGemmOnlyInputsInBf16) {
  const BlockKeptBf16 kept = block_kept_bf16(true, false, false);
  EXPECT_TRUE(kept.norm1_out);
  EXPECT_TRUE(kept.qkv);
  EXPECT_TRUE(kept.attention_out);
  EXPECT_TRUE(kept.norm2_out);
  EXPECT_TRUE(kept.activation_out);
  EXPECT_FALSE(kept.gathered_norms) << "nothing is gathered without sequence parallelism";
}

// Under sequence parallelism the backward gathers the norm outputs again from
// the kept float32 slices; the gathered copies (BI to BW) are bf16.
TEST(KeptBf16Test, SequenceParallelKeepsTheNormSlicesInFloat32) {
  const BlockKeptBf16 kept = block_kept_bf16(true, true, false);
  EXPECT_FALSE(kept.norm1_out);
  EXPECT_FALSE(kept.norm2_out);
  EXPECT_TRUE(kept.gathered_norms);
  EXPECT_TRUE(kept.qkv && kept.attention_out && kept.activation_out);
}

// With experts the gate reads Norm2's output in float32, and the block has no
// dense activation output of its own.
TEST(KeptBf16Test, ExpertsKeepNorm2sOutputInFloat32) {
  const BlockKeptBf16 kept = block_kept_bf16(true, false, true);
  EXPECT_FALSE(kept.norm2_out);
  EXPECT_FALSE(kept.activation_out);
  EXPECT_TRUE(kept.norm1_out && kept.qkv && kept.attention_out);
}

// Under context parallelism the backward packs k and v from the kept q, k
// and v again for the context-parallel gather, which moves float32.
TEST(KeptBf16Test, ContextParallelKeepsQkvInFloat32) {
  const BlockKeptBf16 kept = block_kept_bf16(true, false, false, true);
  EXPECT_FALSE(kept.qkv);
  EXPECT_TRUE(kept.norm1_out && kept.attention_out && kept.norm2_out && kept.activation_out);
}

TransformerBlockShape gpt2_like_block() {
  TransformerBlockShape shape;
  shape.tokens = 128;
  shape.dim = 64;
  shape.heads = 4;
  shape.ffn = 256;
  return shape;
}

TEST(KeptBf16Test, CountsTheBf16ValuesOfAShard) {
  const TransformerBlockShape shape = gpt2_like_block();
  const int64_t sh = 128 * 64, sf = 128 * 256;
  // Norm1's output, q k v, the attention output, Norm2's output, FFN2's input.
  EXPECT_EQ(block_kept_bf16_values(shape, {1, false, false}), sh + 3 * sh + sh + sh + sf);
  EXPECT_EQ(block_kept_bf16_values(shape, {2, false, false}), sh + 3 * sh / 2 + sh / 2 + sh + sf / 2);
  // Sequence parallel: the norm outputs stay float32.
  EXPECT_EQ(block_kept_bf16_values(shape, {2, true, false}), 3 * sh / 2 + sh / 2 + sf / 2);
  // Selective recompute changes none of them (it drops only P).
  EXPECT_EQ(block_kept_bf16_values(shape, {1, false, true}), block_kept_bf16_values(shape, {1, false, false}));
  // With experts: Norm1's output, q k v, the attention output, and the
  // experts' dispatched slot rows (128 tokens x 1.25 slots x 64 values).
  TransformerBlockShape with_experts = shape;
  with_experts.experts = 4;
  EXPECT_EQ(block_kept_bf16_values(with_experts, {1, false, false}),
            sh + 3 * sh + sh + 128 * 5 / 4 * 64);
  // Context parallelism: a rank's half of the positions, and q k v in float32.
  EXPECT_EQ(block_kept_bf16_values(shape, {1, false, false, 2}), (sh + sh + sh + sf) / 2);
}

// Under sequence parallelism a block gathers Norm1's and Norm2's outputs
// again for its weight gradients (in bf16, whole sequence); with experts only
// Norm1's (no dense FFN1 reads Norm2's).
TEST(KeptBf16Test, CountsTheNormOutputsGatheredAgain) {
  const TransformerBlockShape shape = gpt2_like_block();
  const int64_t sh = 128 * 64;
  EXPECT_EQ(block_gathered_bf16_values(shape, {2, true, false}), 2 * sh);
  EXPECT_EQ(block_gathered_bf16_values(shape, {2, false, false}), 0);
  EXPECT_EQ(block_gathered_bf16_values(shape, {1, false, false}), 0);
  TransformerBlockShape with_experts = shape;
  with_experts.experts = 4;
  EXPECT_EQ(block_gathered_bf16_values(with_experts, {2, true, false}), sh);
}

// A moe layer keeps its dispatched slot rows (W1's input) in bf16: tokens x
// capacity_factor x top_k rows of dim values, rounded up as moe_cost's.
TEST(KeptBf16Test, CountsTheExpertsDispatchedRows) {
  MoeShape shape;
  shape.tokens = 8;
  shape.dim = 16;
  shape.experts = 4;
  shape.top_k = 2;
  shape.ffn = 32;
  shape.capacity_factor = 1.25;
  EXPECT_EQ(moe_kept_bf16_values(shape), 8 * 2 * 5 / 4 * 16);
  shape.capacity_factor = 1.1;  // 8 x 2 x 1.1 x 16 = 281.6 values
  EXPECT_EQ(moe_kept_bf16_values(shape), 282);
}

// Against Korthikanti et al.'s count (core/model/transformer_block.h, in
// 16 bits: 2 bytes per kept value), the block kept 4 bytes per value before;
// now it keeps 2 bytes for the GEMM-only values, so it exceeds the
// prediction by exactly 2 bytes for each value it keeps in float32: the
// block input, P, h and FFN1's output (no dropout, so no masks).
TEST(KeptBf16Test, TheBlockExceedsThe16BitPredictionOnlyByItsFloat32Values) {
  const TransformerBlockShape shape = gpt2_like_block();
  for (const int tp : {1, 2}) {
    const BlockSplit split{tp, false, false};
    const int64_t predicted = transformer_block_cost(shape, split).kept.bytes(2);
    const int64_t fp32_kept = transformer_block_cost(shape, split).kept.bytes(4);
    const int64_t bf16_kept = fp32_kept - 2 * block_kept_bf16_values(shape, split);
    const int64_t sh = 128 * 64, scores = 4 * 128 * 128, sf = 128 * 256;
    const int64_t float32_values = sh + scores / tp + sh + sf / tp;
    EXPECT_EQ(bf16_kept - predicted, 2 * float32_values) << "tp " << tp;
    EXPECT_LT(bf16_kept - predicted, fp32_kept - predicted) << "tp " << tp;
  }
}

// A stage keeps a linear's or a conv2d's input in bf16 (only their weight
// gradient's GEMM reads it), but not the stage input nor a gathered one, and
// every other layer's input in float32.
TEST(KeptBf16Test, StagesKeepLinearAndConvolutionInputsInBf16) {
  EXPECT_TRUE(layer_input_kept_bf16(true, LayerType::Linear, false, false));
  EXPECT_TRUE(layer_input_kept_bf16(true, LayerType::Conv2d, false, false));
  EXPECT_FALSE(layer_input_kept_bf16(false, LayerType::Linear, false, false)) << "fp32";
  EXPECT_FALSE(layer_input_kept_bf16(true, LayerType::Linear, true, false)) << "the stage input";
  EXPECT_FALSE(layer_input_kept_bf16(true, LayerType::Conv2d, true, false)) << "the stage input";
  EXPECT_FALSE(layer_input_kept_bf16(true, LayerType::Linear, false, true)) << "gathered";
  for (const LayerType type : {LayerType::Relu, LayerType::Gelu, LayerType::LayerNorm,
                               LayerType::BatchNorm, LayerType::Dropout, LayerType::MaxPool,
                               LayerType::ResidualBlock, LayerType::TransformerBlock})
    EXPECT_FALSE(layer_input_kept_bf16(true, type, false, false)) << layer_type_name(type);
}

// The values counted: a layer's whole input per sample, a row-parallel
// linear's slice of it, none for a sequence-parallel output layer (gathered).
TEST(KeptBf16Test, CountsTheValuesOfAKeptLayerInput) {
  LayerInfo linear;
  linear.type = LayerType::Linear;
  linear.in_features = 8 * 64;  // 8 positions of 64 values
  const BlockSplit one{1, false, false};
  const BlockSplit two{2, false, false};
  const BlockSplit sequence_parallel{2, true, false};
  const TensorParallelRole replicated = TensorParallelRole::Replicated;
  EXPECT_EQ(layer_input_kept_bf16_values(linear, replicated, one, false, false), 8 * 64);
  EXPECT_EQ(layer_input_kept_bf16_values(linear, replicated, one, true, false), 0);
  EXPECT_EQ(
      layer_input_kept_bf16_values(linear, TensorParallelRole::ColumnParallel, two, false, true),
      8 * 64);
  EXPECT_EQ(
      layer_input_kept_bf16_values(linear, TensorParallelRole::RowParallel, two, false, false),
      8 * 64 / 2);
  EXPECT_EQ(layer_input_kept_bf16_values(linear, TensorParallelRole::ColumnParallel,
                                         sequence_parallel, false, true),
            0);
  // Outside a sequence model, sequence parallelism changes nothing.
  EXPECT_EQ(layer_input_kept_bf16_values(linear, TensorParallelRole::ColumnParallel,
                                         sequence_parallel, false, false),
            8 * 64);
  LayerInfo relu = linear;
  relu.type = LayerType::Relu;
  EXPECT_EQ(layer_input_kept_bf16_values(relu, replicated, one, false, false), 0);
  LayerInfo conv = linear;
  conv.type = LayerType::Conv2d;
  conv.in_features = 4 * 6 * 6;
  EXPECT_EQ(layer_input_kept_bf16_values(conv, replicated, one, false, false), 4 * 6 * 6);
}

}  // namespace
}  // namespace pipelab::gpu
