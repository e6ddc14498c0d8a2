// A Transformer's stage profiles against the published activation-memory
// analysis (Korthikanti et al. 2022, transformer_block.h) and the 16 bytes per
// parameter of mixed-precision Adam.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/model/model_spec.h"
#include "core/model/transformer_block.h"
#include "core/plan/stage_profile.h"

namespace pipelab {
namespace {

constexpr int64_t kTokens = 128, kDim = 64, kHeads = 4, kVocab = 96, kBlocks = 4;
constexpr int64_t kMicrobatch = 2;

LayerSpec embedding() {
  LayerSpec layer;
  layer.type = LayerType::Embedding;
  layer.vocab = kVocab;
  layer.dim = kDim;
  return layer;
}

LayerSpec block(double dropout = 0.1) {
  LayerSpec layer;
  layer.type = LayerType::TransformerBlock;
  layer.heads = kHeads;
  layer.dropout = dropout;
  return layer;
}

// An embedding, then kBlocks GPT blocks; stage 1 holds exactly the blocks.
ModelSpec gpt(double dropout = 0.1) {
  ModelSpec model;
  model.input = {kTokens};
  model.layers = {embedding()};
  for (int i = 0; i < kBlocks; ++i) model.layers.push_back(block(dropout));
  return model;
}

ParallelPlan two_stages(int tp = 1) {
  ParallelPlan plan;
  plan.pp = 2;
  plan.tp = tp;
  plan.partition = PartitionRule::Explicit;
  plan.boundaries = {1};
  return plan;
}

int64_t block_stage_activations(const ParallelPlan& plan, Precision precision = Precision::Bf16Mixed,
                                double dropout = 0.1) {
  return profile_stages(gpt(dropout), plan, kMicrobatch, precision).at(1).activation_bytes;
}

// s b h (coefficient) + 5 a s^2 b / divisor, for all kBlocks blocks.
int64_t formula(int64_t sbh_numerator, int64_t sbh_denominator, int64_t scores_divisor) {
  const int64_t s = kTokens, b = kMicrobatch, h = kDim, a = kHeads;
  const int64_t scores = scores_divisor == 0 ? 0 : 5 * a * s * s * b / scores_divisor;
  return kBlocks * (s * b * h * sbh_numerator / sbh_denominator + scores);
}

TEST(TransformerProfile, ActivationsFollowKorthikantiWithoutParallelism) {
  // s b h (34 + 5 a s / h)
  EXPECT_EQ(block_stage_activations(two_stages()), formula(34, 1, 1));
}

TEST(TransformerProfile, ActivationsFollowKorthikantiWithTensorParallelism) {
  // s b h (10 + 24 / t + 5 a s / (h t))
  for (int t : {2, 4}) {
    SCOPED_TRACE("tp = " + std::to_string(t));
    EXPECT_EQ(block_stage_activations(two_stages(t)), formula(10 * t + 24, t, t));
  }
}

TEST(TransformerProfile, ActivationsFollowKorthikantiWithSequenceParallelism) {
  // s b h (34 / t + 5 a s / (h t))
  for (int t : {2, 4}) {
    ParallelPlan plan = two_stages(t);
    plan.sequence_parallel = true;
    EXPECT_EQ(block_stage_activations(plan), formula(34, t, t)) << "tp = " << t;
  }
}

TEST(TransformerProfile, SelectiveRecomputeDropsTheAttentionScores) {
  // s b h 34 / t with sequence parallelism; s b h (10 + 24/t) without.
  ParallelPlan plan = two_stages(2);
  plan.sequence_parallel = true;
  plan.selective_recompute = true;
  EXPECT_EQ(block_stage_activations(plan), formula(34, 2, 0));
  plan.sequence_parallel = false;
  EXPECT_EQ(block_stage_activations(plan), formula(10 * 2 + 24, 2, 0));
}

TEST(TransformerProfile, FullRecomputeWithBlockUnitsKeepsEachBlocksInput) {
  // Megatron-LM's full granularity, one block per checkpoint: 2 s b h per
  // block in 16 bits, the stage input plus three block checkpoints.
  ParallelPlan plan = two_stages();
  plan.recompute = true;
  plan.recompute_blocks = true;
  const StageProfile stage = profile_stages(gpt(), plan, kMicrobatch, Precision::Bf16Mixed).at(1);
  const int64_t checkpoint = 2 * kTokens * kMicrobatch * kDim;
  EXPECT_EQ(stage.recompute_kept_bytes, kBlocks * checkpoint);
  // Recomputing puts back one block's rest at a time, and the forward holds
  // the checkpoints and one block: never the stage.
  EXPECT_EQ(stage.recompute_working_bytes, formula(34, 1, 1) / kBlocks - checkpoint);
  EXPECT_EQ(stage.recompute_forward_peak_bytes,
            (kBlocks - 1) * checkpoint + formula(34, 1, 1) / kBlocks);
  EXPECT_LT(stage.recompute_forward_peak_bytes, stage.activation_bytes / 2);
}

TEST(TransformerProfile, BlocksRebuiltInGroupsKeepEachGroupsInput) {
  // --recompute-num-layers 2: the stage's four blocks in two groups, the
  // input of each kept, two blocks' rest rebuilt at a time; 4 is the stage.
  ParallelPlan plan = two_stages();
  plan.recompute = true;
  plan.recompute_blocks = true;
  plan.recompute_layers = 2;
  const StageProfile stage = profile_stages(gpt(), plan, kMicrobatch, Precision::Bf16Mixed).at(1);
  const int64_t checkpoint = 2 * kTokens * kMicrobatch * kDim;
  const int64_t block = formula(34, 1, 1) / kBlocks;
  EXPECT_EQ(stage.recompute_kept_bytes, 2 * checkpoint);
  EXPECT_EQ(stage.recompute_working_bytes, 2 * block - checkpoint);
  plan.recompute_layers = kBlocks;
  const StageProfile whole = profile_stages(gpt(), plan, kMicrobatch, Precision::Bf16Mixed).at(1);
  EXPECT_EQ(whole.recompute_kept_bytes, checkpoint);
  EXPECT_EQ(whole.recompute_working_bytes, kBlocks * block - checkpoint);
}

TEST(TransformerProfile, FullRecomputeWithTheStageAsUnitKeepsItsInput) {
  // GPipe's re-materialisation, as the executors run it: the forward holds
  // everything, keeps the stage input, and the stage is rebuilt whole.
  ParallelPlan plan = two_stages();
  plan.recompute = true;
  const StageProfile stage = profile_stages(gpt(), plan, kMicrobatch, Precision::Bf16Mixed).at(1);
  EXPECT_EQ(stage.recompute_kept_bytes, 2 * kTokens * kMicrobatch * kDim);
  EXPECT_EQ(stage.recompute_working_bytes, stage.activation_bytes - stage.recompute_kept_bytes);
  EXPECT_EQ(stage.recompute_forward_peak_bytes, stage.activation_bytes);
}

// The backward runs the layers last first (stage_stack.h): B frees each
// layer's kept activations as it goes, so when the last block's backward
// runs, the final norm's and the output layer's kept inputs are gone. The
// last stage holds each micro-batch's loss gradient from its F to its B.
TEST(TransformerProfile, TheBackwardFreesEachLayersActivationsAsItGoes) {
  ModelSpec model = gpt(0.0);
  LayerSpec norm;
  norm.type = LayerType::LayerNorm;
  LayerSpec head;
  head.type = LayerType::Linear;
  head.out = kVocab;
  model.layers.push_back(norm);
  model.layers.push_back(head);
  const std::vector<StageProfile> stages =
      profile_stages(model, two_stages(), kMicrobatch, Precision::Fp32);
  const BlockCost block = transformer_block_cost(describe_layers(model).at(1).block, BlockSplit{});
  const int64_t bytes = 4 * kMicrobatch;  // per value of a sample, for the micro-batch
  const int64_t sh = kTokens * kDim;
  // The largest layer's buffers: the block's, with its output gradient.
  EXPECT_EQ(stages[1].backward_working_bytes,
            (block.backward_working_values + block.input_values) * bytes);
  EXPECT_EQ(stages[1].backward_peak_bytes, stages[1].backward_working_bytes - 2 * sh * bytes);
  EXPECT_EQ(stages[1].loss_gradient_bytes, kTokens * kVocab * bytes);
  EXPECT_EQ(stages[0].loss_gradient_bytes, 0);
  // The loss works in float32 in every precision: under bf16-mixed too its
  // logits take 4 bytes a value, where the kept activations take 2.
  const std::vector<StageProfile> mixed =
      profile_stages(model, two_stages(), kMicrobatch, Precision::Bf16Mixed);
  EXPECT_EQ(mixed[1].loss_gradient_bytes, kTokens * kVocab * bytes);
  EXPECT_EQ(mixed[0].activation_bytes * 2, stages[0].activation_bytes);
}

TEST(TransformerProfile, Float32DoublesTheValuesButNotTheDropoutMasks) {
  const int64_t bf16 = block_stage_activations(two_stages(), Precision::Bf16Mixed);
  const int64_t fp32 = block_stage_activations(two_stages(), Precision::Fp32);
  // Masks: a s^2 + 2 s h bytes per block and sample.
  const int64_t masks = kBlocks * kMicrobatch * (kHeads * kTokens * kTokens + 2 * kTokens * kDim);
  EXPECT_EQ(fp32 - masks, 2 * (bf16 - masks));
}

TEST(TransformerProfile, WithoutDropoutNoMasksAndNoDroppedScoresAreKept) {
  // 34 s h + 5 a s^2 less the masks (2 s h + a s^2) and the dropped scores (2 a s^2).
  EXPECT_EQ(block_stage_activations(two_stages(), Precision::Bf16Mixed, 0.0),
            kBlocks * kMicrobatch * (32 * kTokens * kDim + 2 * kHeads * kTokens * kTokens));
}

TEST(TransformerProfile, MixedPrecisionAdamHoldsSixteenBytesPerParameter) {
  for (const StageProfile& stage : profile_stages(gpt(), two_stages(2), kMicrobatch, Precision::Bf16Mixed))
    EXPECT_EQ(stage.weight_bytes() + stage.gradient_bytes() + stage.optimizer_bytes(2), 16 * stage.params);
  for (const StageProfile& stage : profile_stages(gpt(), two_stages(2), kMicrobatch, Precision::Fp32))
    EXPECT_EQ(stage.weight_bytes() + stage.gradient_bytes() + stage.optimizer_bytes(2), 16 * stage.params);
  // SGD with momentum in mixed precision: 2 + 2 + 4 + 4.
  const StageProfile stage = profile_stages(gpt(), two_stages(), kMicrobatch, Precision::Bf16Mixed).at(1);
  EXPECT_EQ(stage.weight_bytes() + stage.gradient_bytes() + stage.optimizer_bytes(1), 12 * stage.params);
}

TEST(TransformerProfile, TensorParallelShardsHoldTheirShareOfTheBlock) {
  const int64_t h = kDim, f = 4 * kDim;
  const int64_t whole = profile_stages(gpt(), two_stages(), kMicrobatch).at(1).params;
  EXPECT_EQ(whole, kBlocks * (12 * h * h + 13 * h));  // GPT-2/3's block: 12 h^2 + 13 h
  const int64_t shard = profile_stages(gpt(), two_stages(2), kMicrobatch).at(1).params;
  // GEMMs and the column-parallel biases halve; norms and row-parallel biases stay.
  EXPECT_EQ(shard, kBlocks * ((4 * h * h + 2 * h * f) / 2 + (3 * h + f) / 2 + 2 * h + 4 * h));
  // The embedding is split over the vocabulary, its positions are not.
  EXPECT_EQ(profile_stages(gpt(), two_stages(2), kMicrobatch).at(0).params, (kVocab / 2 + kTokens) * kDim);
}

TEST(TransformerProfile, EachBlockAllReducesTwiceInEachDirection) {
  const auto profiles = profile_stages(gpt(), two_stages(2), kMicrobatch, Precision::Bf16Mixed);
  int forward = 0, backward = 0;
  for (const TensorParallelAllReduce& reduce : profiles.at(1).tp_allreduces) {
    EXPECT_EQ(reduce.bytes, kMicrobatch * kTokens * kDim * 2);
    (reduce.in_forward ? forward : backward) += 1;
  }
  EXPECT_EQ(forward, 2 * kBlocks);
  EXPECT_EQ(backward, 2 * kBlocks);
  // The vocabulary-parallel embedding sums its partial lookups once.
  ASSERT_EQ(profiles.at(0).tp_allreduces.size(), 1u);
  EXPECT_TRUE(profiles.at(0).tp_allreduces[0].in_forward);
}

TEST(TransformerProfile, ForwardFlopsAreTheTextbookCount) {
  // 24 s h^2 + 4 s^2 h per block for the GEMMs and attention, plus elementwise work.
  const double s = kTokens, h = kDim;
  const double gemms = kBlocks * kMicrobatch * (24 * s * h * h + 4 * s * s * h);
  const double forward = profile_stages(gpt(0.0), two_stages(), kMicrobatch).at(1).forward_flops;
  EXPECT_GT(forward, gemms);
  EXPECT_LT(forward, gemms * 1.1);
}

TEST(TransformerProfile, MemoryBoundKernelsMoveTheValuesTheirOpsReadAndWrite) {
  // Per block and sample: 10 s h (two norms, two bias-dropout-residual adds)
  // + 4 a s^2 (softmax and its dropout) + 2 s f (bias-GELU) forward;
  // 10 s h + 5 a s^2 + 3 s f backward. ffn = 4h.
  const double s = kTokens, h = kDim, a = kHeads, f = 4 * kDim;
  const StageProfile stage = profile_stages(gpt(), two_stages(), kMicrobatch).at(1);
  const double bytes = 4 * kBlocks * kMicrobatch;  // float32 values (the default precision)
  EXPECT_DOUBLE_EQ(stage.forward_memory_bytes, bytes * (10 * s * h + 4 * a * s * s + 2 * s * f));
  EXPECT_DOUBLE_EQ(stage.backward_memory_bytes, bytes * (10 * s * h + 5 * a * s * s + 3 * s * f));
  // Tensor parallelism splits the scores and the MLP, not the full-width norms.
  const StageProfile shard = profile_stages(gpt(), two_stages(2), kMicrobatch).at(1);
  EXPECT_DOUBLE_EQ(shard.forward_memory_bytes, bytes * (10 * s * h + (4 * a * s * s + 2 * s * f) / 2));
  // The embedding stage has none: only blocks are counted so far.
  EXPECT_DOUBLE_EQ(profile_stages(gpt(), two_stages(), kMicrobatch).at(0).forward_memory_bytes, 0);
}

TEST(TransformerProfile, SplitsTheBlockCannotTakeAreRefusedWithTheFix) {
  auto message = [](const ModelSpec& model, const ParallelPlan& plan) {
    try {
      profile_stages(model, plan, kMicrobatch);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(gpt(), two_stages(8)).find("tp = 8 does not divide transformer_block layer 1's heads = 4"),
            std::string::npos);
  ModelSpec odd_vocab = gpt();
  odd_vocab.layers[0].vocab = 97;
  EXPECT_NE(message(odd_vocab, two_stages(2)).find("does not divide embedding layer 0's vocab 97"),
            std::string::npos);
  ModelSpec odd_sequence = gpt();
  odd_sequence.input = {129};
  ParallelPlan sequence_parallel = two_stages(2);
  sequence_parallel.sequence_parallel = true;
  EXPECT_NE(message(odd_sequence, sequence_parallel).find("does not divide the sequence length 129"),
            std::string::npos);
}

}  // namespace
}  // namespace pipelab
