// Sequence models in the layer stack: shapes per position, the block's
// parameters and the errors a user can cause.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/model/model_spec.h"
#include "core/model/transformer_block.h"
#include "tests/support/gpt_model.h"

namespace pipelab {
namespace {

ModelSpec tiny_gpt() { return testing::gpt_model({.seq = 16, .vocab = 50, .dim = 32, .heads = 4}); }

std::string error_of(const ModelSpec& model) {
  try {
    describe_layers(model);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "no error";
}

TEST(TransformerSpec, LayersAfterTheEmbeddingWorkPerPosition) {
  const ModelSpec model = tiny_gpt();
  ASSERT_TRUE(is_sequence_model(model));
  EXPECT_EQ(sequence_length(model), 16);
  const auto infos = describe_layers(model);
  EXPECT_EQ(infos[0].in_features, 16);            // token ids
  EXPECT_EQ(infos[0].out_features, 16 * 32);
  EXPECT_EQ(infos[0].params, (50 + 16) * 32);     // tokens and positions
  EXPECT_EQ(infos[1].params, 12 * 32 * 32 + 13 * 32);
  EXPECT_EQ(infos[3].params, 2 * 32);             // one gamma and beta for every position
  EXPECT_EQ(infos[4].params, 32 * 50 + 50);       // the output layer per position
  EXPECT_EQ(infos[4].token_in(), 32);
  EXPECT_EQ(infos[4].out_features, 16 * 50);
  EXPECT_DOUBLE_EQ(infos[4].forward_flops, 16.0 * (2 * 32 * 50 + 50));
  EXPECT_EQ(output_features(model), 16 * 50);
}

TEST(TransformerSpec, SwiGluAndRmsNormChangeTheBlocksParameters) {
  ModelSpec model = tiny_gpt();
  model.layers[1].activation = BlockActivation::SwiGlu;
  model.layers[1].norm = NormType::RmsNorm;
  model.layers[1].bias = false;
  model.layers[1].ffn = 96;
  const auto infos = describe_layers(model);
  // QKV, Proj, FFN1 (two halves), FFN2, two RMSNorm gains.
  EXPECT_EQ(infos[1].params, 4 * 32 * 32 + 3 * 32 * 96 + 2 * 32);
}

TEST(TransformerSpec, MistakesAreNamedWithTheFix) {
  ModelSpec model = tiny_gpt();
  model.layers[1].heads = 5;
  EXPECT_NE(error_of(model).find("model.layers[1]: heads = 5 does not divide the block's width 32"),
            std::string::npos);
  model = tiny_gpt();
  model.layers[1].heads = 0;
  EXPECT_NE(error_of(model).find("needs heads >= 1"), std::string::npos);
  model = tiny_gpt();
  std::swap(model.layers[0], model.layers[1]);
  EXPECT_NE(error_of(model).find("a transformer_block works on token sequences"), std::string::npos);
  model = tiny_gpt();
  model.layers.insert(model.layers.begin() + 2, model.layers[0]);
  EXPECT_NE(error_of(model).find("model.layers[2]: an embedding reads token ids, so it must be the first layer"),
            std::string::npos);
  model = tiny_gpt();
  model.input = {4, 4};
  EXPECT_NE(error_of(model).find("give the sequence length alone"), std::string::npos);
  model = tiny_gpt();
  model.layers[0].vocab = 0;
  EXPECT_NE(error_of(model).find("vocab must be >= 1"), std::string::npos);
  model = tiny_gpt();
  model.layers[1].dropout = 1.0;
  EXPECT_NE(error_of(model).find("dropout must be in [0, 1)"), std::string::npos);
  model = tiny_gpt();
  model.input = {1 << 20};
  model.layers[0].dim = 1 << 16;  // 2^36 values per sample: past kMaxSequenceValues
  EXPECT_NE(error_of(model).find("more than the"), std::string::npos);
}

}  // namespace
}  // namespace pipelab

namespace pipelab {
namespace {

TEST(TransformerSpec, GroupedQueryAttentionNarrowsKeysAndValues) {
  TransformerBlockShape shape;
  shape.tokens = 16;
  shape.dim = 64;
  shape.heads = 8;
  shape.ffn = 256;
  const BlockCost full = transformer_block_cost(shape, {});
  shape.kv_heads = 2;  // K and V 16 wide each instead of 64
  const BlockCost grouped = transformer_block_cost(shape, {});
  EXPECT_EQ(full.params - grouped.params, 2 * (64 - 16) * 64 + 2 * (64 - 16));  // weights and biases
  EXPECT_EQ(full.kept.values - grouped.kept.values, 2 * 16 * (64 - 16));        // K and V kept
  EXPECT_LT(grouped.forward_flops, full.forward_flops);
  EXPECT_EQ(transformer_block_params(shape), grouped.params);
  // Rotary positions add a pass over Q and K, no parameters.
  shape.rotary = true;
  const BlockCost rotated = transformer_block_cost(shape, {});
  EXPECT_EQ(rotated.params, grouped.params);
  EXPECT_GT(rotated.forward_memory_values, grouped.forward_memory_values);
}

TEST(TransformerSpec, KvHeadsMustDivideTheHeads) {
  ModelSpec model = tiny_gpt();  // 4 heads
  model.layers[1].kv_heads = 3;
  EXPECT_NE(error_of(model).find("kv_heads = 3 must divide heads = 4"), std::string::npos) << error_of(model);
  model.layers[1].kv_heads = 8;
  EXPECT_NE(error_of(model).find("kv_heads = 8 must divide heads = 4"), std::string::npos);
  model.layers[1].kv_heads = 2;
  EXPECT_EQ(error_of(model), "no error");
  // Rotary positions drop the embedding's position table.
  model.layers[0].position = PositionEncoding::Rope;
  EXPECT_EQ(describe_layers(model)[0].params, 50 * 32);
}

}  // namespace
}  // namespace pipelab

namespace pipelab {
namespace {

double per_sample_flops(const std::vector<SampleGemm>& gemms) {
  double flops = 0;
  for (const SampleGemm& gemm : gemms) flops += gemm.shape.flops();
  return flops;
}

// The GEMMs a block lists by shape are exactly its matrix products: the
// linears' 2 s h (qkv + h + 2 ffn) / t per pass and the attention core's
// 4 s^2 h / t forward, twice that backward; under grouped-query attention,
// tensor and context parallelism, SwiGLU and selective recomputation.
TEST(TransformerSpec, TheBlocksGemmsByShapeAreItsMatrixProducts) {
  for (const bool swiglu : {false, true})
    for (const int64_t kv_heads : {int64_t{0}, int64_t{2}})
      for (const BlockSplit split :
           {BlockSplit{}, BlockSplit{.tp = 2}, BlockSplit{.tp = 4, .cp = 2},
            BlockSplit{.tp = 2, .selective_recompute = true}}) {
        TransformerBlockShape shape;
        shape.tokens = 64;
        shape.dim = 256;
        shape.heads = 8;
        shape.ffn = 512;
        shape.kv_heads = kv_heads;
        shape.activation = swiglu ? BlockActivation::SwiGlu : BlockActivation::Gelu;
        const BlockCost cost = transformer_block_cost(shape, split);
        const double s = 64, h = 256, t = split.tp, keys = s * split.cp;
        const double ffn1 = swiglu ? 1024 : 512;
        const double linears =
            2 * s * h * (static_cast<double>(shape.qkv_width()) + h + ffn1 + 512) / t;
        const double attention = 4 * s * keys * h / t;
        SCOPED_TRACE(::testing::Message() << "swiglu " << swiglu << " kv_heads " << kv_heads
                                          << " tp " << split.tp << " cp " << split.cp);
        EXPECT_DOUBLE_EQ(per_sample_flops(cost.gemms.forward), linears + attention);
        EXPECT_DOUBLE_EQ(
            per_sample_flops(cost.gemms.backward_input),
            // Selective recomputation, and context parallelism's
            // blockwise attention, compute the scores again.
            linears + 2 * attention + (split.selective_recompute || split.cp > 1 ? attention : 0));
        EXPECT_DOUBLE_EQ(per_sample_flops(cost.gemms.backward_weight), linears);
        // And they are part of the FLOPs the block reports, not beside them.
        EXPECT_LT(per_sample_flops(cost.gemms.forward), cost.forward_flops);
        EXPECT_LT(per_sample_flops(cost.gemms.backward_input), cost.backward_input_flops);
        EXPECT_LT(per_sample_flops(cost.gemms.backward_weight), cost.backward_weight_flops);
      }
}

// A micro-batch stacks a linear's rows, lengthens its weight gradient's inner
// dimension and multiplies attention's batch.
TEST(TransformerSpec, AMicroBatchGrowsEachGemmAlongItsAxis) {
  EXPECT_EQ((SampleGemm{{16, 32, 64}, SampleAxis::Rows}.for_samples(4)), (GemmShape{64, 32, 64}));
  EXPECT_EQ((SampleGemm{{32, 64, 16}, SampleAxis::Inner}.for_samples(4)), (GemmShape{32, 64, 64}));
  EXPECT_EQ((SampleGemm{{16, 16, 8, 2}, SampleAxis::Batch}.for_samples(4)),
            (GemmShape{16, 16, 8, 8}));
  std::vector<GemmCount> pass;
  add_gemm(pass, {64, 32, 64}, 1);
  add_gemm(pass, {64, 32, 64}, 2);
  add_gemm(pass, {32, 64, 64}, 1);
  ASSERT_EQ(pass.size(), 2u);
  EXPECT_EQ(pass[0].count, 3);
  EXPECT_DOUBLE_EQ(gemm_flops(pass), 4 * 2.0 * 64 * 32 * 64);
}

}  // namespace
}  // namespace pipelab
