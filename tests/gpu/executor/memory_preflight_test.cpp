// The CUDA backend's pre-flight memory check: the estimate per virtual device
// and the per-GPU comparison are host arithmetic, checked without a GPU.
#include "gpu/executor/memory_preflight.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>

#include "core/io/hardware_catalogue.h"
#include "core/sim/experiment_prediction.h"
#include "core/plan/stage_profile.h"
#include "core/schedule/lowering.h"
#include "core/sim/cost_model.h"
#include "gpu/comm/comm_world.h"
#include "gpu/executor/device_mapping.h"
#include "gpu/memory/out_of_memory.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

constexpr int64_t kWorkspace = 32ll << 20;

DeviceProfile h200() { return *find_device_profile("h200"); }

TEST(MemoryPreflightTest, SumsTheVirtualDevicesOfEachGpu) {
  // Devices 0 and 1 on GPU 0, 2 and 3 on GPU 1.
  const std::vector<int> gpu_of_device = {0, 0, 1, 1};
  const std::vector<int64_t> needed = {10, 20, 30, 40};
  EXPECT_TRUE(find_memory_shortfalls(needed, gpu_of_device, {30, 70}).empty());  // exactly fits

  const std::vector<GpuShortfall> short_first =
      find_memory_shortfalls(needed, gpu_of_device, {29, 100});
  ASSERT_EQ(short_first.size(), 1u);
  EXPECT_EQ(short_first[0].gpu, 0);
  EXPECT_EQ(short_first[0].devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(short_first[0].needed_bytes, 30);
  EXPECT_EQ(short_first[0].free_bytes, 29);

  const std::vector<GpuShortfall> both = find_memory_shortfalls(needed, gpu_of_device, {1, 1});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].gpu, 1);
  EXPECT_EQ(both[1].needed_bytes, 70);

  // A GPU with no virtual device on it needs nothing.
  EXPECT_TRUE(find_memory_shortfalls({5}, {0}, {5, 0}).empty());
  EXPECT_THROW(find_memory_shortfalls({1, 2}, {0}, {10}), std::invalid_argument);
}

TEST(MemoryPreflightTest, MessageNamesGpuDevicesBytesAndFixes) {
  const int64_t gib = 1ll << 30;
  const std::vector<int64_t> needed = {40 * gib, 50 * gib, 45 * gib, 30 * gib};
  const std::vector<GpuShortfall> shortfalls =
      find_memory_shortfalls(needed, {0, 0, 0, 0}, {139 * gib});
  ASSERT_EQ(shortfalls.size(), 1u);
  const std::string message = memory_shortfall_message(shortfalls, needed);
  EXPECT_NE(message.find("does not fit in GPU memory"), std::string::npos) << message;
  EXPECT_NE(message.find("GPU 0 (virtual devices 0-3)"), std::string::npos) << message;
  EXPECT_NE(message.find("needs " + format_bytes(165 * gib)), std::string::npos) << message;
  EXPECT_NE(message.find("device 1, " + format_bytes(50 * gib)), std::string::npos) << message;
  EXPECT_NE(message.find(format_bytes(139 * gib) + " free"), std::string::npos) << message;
  EXPECT_NE(message.find("parallel.pp"), std::string::npos) << message;
  EXPECT_NE(message.find("backend.type = cpu"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);  // one line
}

// The conv net's micro-batch of 32: conv2d 2 -> 4 channels on 3 x 3 (18 taps,
// 9 positions), then a residual block 4 -> 6 channels halving to 2 x 2 (its
// second convolution the largest: 54 taps, 4 positions).
TEST(MemoryPreflightTest, CountsTheLargestIm2colMatrixOfAStage) {
  const Experiment conv = pipelab::testing::small_conv_experiment(false);
  const int64_t bytes = sizeof(float);
  EXPECT_EQ(largest_im2col_bytes(conv, {0, 1}), 32 * 18 * 9 * bytes);
  EXPECT_EQ(largest_im2col_bytes(conv, {0, 6}), 32 * 54 * 4 * bytes);
  EXPECT_EQ(largest_im2col_bytes(conv, {4, 6}), 0);  // pool and linear
  EXPECT_EQ(largest_im2col_bytes(testing::small_experiment(), {0, 7}), 0);
  // Micro-batches of 8 hold a quarter of it.
  const Experiment four = testing::with_plan(conv, ScheduleKind::GPipe, 1, 4);
  EXPECT_EQ(largest_im2col_bytes(four, {0, 6}), 8 * 54 * 4 * bytes);
}

// The attention core's score-sized Workspace (gpu/layers/attention.cpp) over
// one micro-batch of the tiny GPT (4 samples, 2 heads, 8 positions): dP in
// every backward, P again under selective recompute, P with dropout applied;
// the heads split over tp. The simulator has none of it, so the estimate
// adds it: under selective recompute nothing else it counts depends on the
// heads, and twice the heads add exactly twice the workspace.
TEST(MemoryPreflightTest, CountsTheAttentionWorkspaceOfAMicroBatch) {
  Experiment gpt =
      testing::with_plan(testing::on_backend(pipelab::testing::tiny_gpt_experiment(), "cuda"),
                         ScheduleKind::OneFOneB, 1, 4);
  const int64_t scores = 4 * 2 * 8 * 8 * 4;  // one buffer's bytes
  const LayerRange all{0, static_cast<int>(gpt.model.layers.size())};
  EXPECT_EQ(largest_attention_workspace_bytes(gpt, all), scores);
  EXPECT_EQ(largest_attention_workspace_bytes(gpt, {0, 1}), 0) << "the embedding alone";
  gpt.parallel.selective_recompute = true;
  EXPECT_EQ(largest_attention_workspace_bytes(gpt, all), 2 * scores);
  const auto each_block = [](Experiment& experiment,
                             const std::function<void(LayerSpec&)>& change) {
    for (LayerSpec& layer : experiment.model.layers)
      if (layer.type == LayerType::TransformerBlock) change(layer);
  };
  each_block(gpt, [](LayerSpec& block) { block.dropout = 0.1; });
  EXPECT_EQ(largest_attention_workspace_bytes(gpt, all), 3 * scores);
  const Experiment tp2 = testing::with_plan(gpt, ScheduleKind::OneFOneB, 1, 4, 1, 2);
  EXPECT_EQ(largest_attention_workspace_bytes(tp2, all), 3 * scores / 2);

  Experiment more_heads = gpt;
  each_block(more_heads, [](LayerSpec& block) { block.heads = 4; });
  EXPECT_EQ(largest_attention_workspace_bytes(more_heads, all), 2 * 3 * scores);
  Experiment bf16 = gpt;
  bf16.training.precision = Precision::Bf16Mixed;
  EXPECT_EQ(largest_attention_workspace_bytes(bf16, all), 3 * scores + scores / 2)
      << "P or dS rounded to bf16 for a product";
  // One head 16 wide: the fused kernels take it (by default, under bf16-mixed
  // and selective recompute) and hold no score-sized buffer, one float per
  // row for the backward's D_i and one for the lse the block keeps.
  Experiment one_head = bf16;
  each_block(one_head, [](LayerSpec& block) { block.heads = 1; });
  {
    const testing::FusedAttentionSwitch tensor_cores(FusedAttention::TensorCores);
    EXPECT_EQ(largest_attention_workspace_bytes(one_head, all), 2 * (4 * 1 * 8) * 4);
  }
  {
    const testing::FusedAttentionSwitch off(false);
    EXPECT_EQ(largest_attention_workspace_bytes(one_head, all), 3 * (scores / 2) + scores / 4);
  }
  EXPECT_EQ(estimate_device_bytes(more_heads, h200(), kWorkspace)[0] -
                estimate_device_bytes(gpt, h200(), kWorkspace)[0],
            3 * scores);
}

// A sequence model's linears and layer norms copy their input, and in the
// backward their output gradient, into per-token shaped Workspace
// (gpu/layers/per_token.h). The tiny GPT (4 samples, 8 positions, width 16,
// vocabulary 16): its final layer norm and its output layer each copy 16 + 16
// values a position; at tp 2 the output layer holds half the vocabulary, and
// under sequence parallelism the layer norm sees its shard's 4 positions
// while the output layer gathers all 8. An MLP has no per-token layers.
TEST(MemoryPreflightTest, CountsThePerTokenCopiesOfAMicroBatch) {
  const Experiment gpt =
      testing::with_plan(testing::on_backend(pipelab::testing::tiny_gpt_experiment(), "cuda"),
                         ScheduleKind::OneFOneB, 1, 4);
  const int layers = static_cast<int>(gpt.model.layers.size());
  const int64_t floats = 4 * sizeof(float);  // 4 samples
  EXPECT_EQ(largest_per_token_copy_bytes(gpt, {0, layers}), (16 + 16) * 8 * floats);
  EXPECT_EQ(largest_per_token_copy_bytes(gpt, {0, layers - 2}), 0) << "embedding and blocks";
  Experiment tp2 = testing::with_plan(gpt, ScheduleKind::OneFOneB, 1, 4, 1, 2);
  EXPECT_EQ(largest_per_token_copy_bytes(tp2, {layers - 1, layers}), (16 + 8) * 8 * floats);
  tp2.parallel.sequence_parallel = true;
  EXPECT_EQ(largest_per_token_copy_bytes(tp2, {layers - 2, layers - 1}), (16 + 16) * 4 * floats);
  EXPECT_EQ(largest_per_token_copy_bytes(tp2, {0, layers}), (16 + 8) * 8 * floats);
  const Experiment mlp = testing::small_experiment();
  EXPECT_EQ(largest_per_token_copy_bytes(mlp, {0, static_cast<int>(mlp.model.layers.size())}), 0);
}

TEST(MemoryPreflightTest, EstimateHoldsWeightsGradientsStateAndWorkspace) {
  const Experiment single = testing::small_experiment();
  const int64_t params = testing::stage_parameter_bytes(single)[0];
  const std::vector<int64_t> estimate = estimate_device_bytes(single, h200(), kWorkspace);
  ASSERT_EQ(estimate.size(), 1u);
  // SGD with momentum: weights, gradients and one state slot, plus activations,
  // the workspace and the cuBLAS handle.
  EXPECT_GT(estimate[0], 3 * params + kWorkspace + kCublasHandleBytes);
  // And not wildly more: activations of one 32-sample batch of 16-wide layers.
  EXPECT_LT(estimate[0], 3 * params + kWorkspace + kCublasHandleBytes + (1 << 20));

  // Adam keeps two state slots.
  Experiment adam = single;
  adam.training.optimizer.type = "adam";
  EXPECT_GE(estimate_device_bytes(adam, h200(), kWorkspace)[0], estimate[0] + params);

  // Synchronous data parallelism stages one copy of the gradients on top.
  const Experiment dp2 = testing::with_plan(single, ScheduleKind::OneFOneB, 1, 1, 2);
  for (int64_t bytes : estimate_device_bytes(dp2, h200(), kWorkspace))
    EXPECT_GT(bytes, 4 * params + kWorkspace);
}

TEST(MemoryPreflightTest, EstimateFollowsTheSplitAndTheSchedule) {
  const Experiment single = testing::small_experiment();
  const int64_t whole = estimate_device_bytes(single, h200(), 0)[0];
  const Experiment pp2 = testing::with_plan(single, ScheduleKind::OneFOneB, 2, 8);
  const std::vector<int64_t> split = estimate_device_bytes(pp2, h200(), 0);
  ASSERT_EQ(split.size(), 2u);
  for (int64_t bytes : split) EXPECT_LT(bytes, whole);

  // GPipe keeps every micro-batch's activations on stage 0; 1F1B at most pp.
  const Experiment gpipe = testing::with_plan(single, ScheduleKind::GPipe, 2, 8);
  EXPECT_GT(estimate_device_bytes(gpipe, h200(), 0)[0], split[0]);
}

TEST(MemoryPreflightTest, CachedBlocksAreAllowedForOnTopOfThePeak) {
  // The same model with twice the batch: the simulated peak grows, and the
  // estimate by the peak's growth plus the margin and the cache allowance.
  Experiment small = testing::small_experiment();
  small.model.layers[0].out = 4096;  // activations dominate
  Experiment large = small;
  large.training.batch_size *= 2;
  const int64_t grown = estimate_device_bytes(large, h200(), 0)[0] -
                        estimate_device_bytes(small, h200(), 0)[0];
  EXPECT_GT(grown, 0);
  // Activations of the first layer alone grow by 32 rows x 4096 floats.
  const int64_t activation_growth = 32 * 4096 * 4;
  EXPECT_GE(grown, activation_growth * (100 + kEstimateMarginPercent + kCacheOverheadPercent) / 100);
}

TEST(MemoryPreflightTest, Bf16MixedAddsWeightCopiesAndRoundedGemmInputs) {
  StageProfile stage;
  stage.params = 1000;
  stage.activation_bytes = 4000;
  stage.backward_working_bytes = 800;
  EXPECT_EQ(bf16_weight_copy_bytes(stage), 2000);
  EXPECT_EQ(bf16_rounding_bytes(stage, 0, 0), 2400);
  EXPECT_EQ(bf16_rounding_bytes(stage, 0, 1200), 3000);  // a convolution's im2col matrix too
  // 2000 float32 bytes of the kept activations are kept as 1000 bf16 bytes,
  // rounded in the forward: the backward rounds none of them.
  EXPECT_EQ(bf16_rounding_bytes(stage, 1000, 0), 1400);
}

// The bf16-kept activations of one micro-batch (kept_bf16.h): per block and
// sample Norm1's and Norm2's outputs (s h each), q, k, v (3 s h), the
// attention output (s h) and FFN2's input (s f), per moe layer its
// dispatched slot rows, and the inputs of linears and convolutions but the
// stage's first layer's, at 2 bytes.
TEST(MemoryPreflightTest, Bf16MixedKeepsTheBlocksGemmInputsInBf16) {
  const Experiment gpt = testing::with_plan(
      testing::on_backend(pipelab::testing::tiny_gpt_experiment(), "cuda"),
      ScheduleKind::OneFOneB, 1, 4);
  const int64_t s = 8, h = 16, f = 4 * 16, blocks = 2, samples = 16 / 4;
  const LayerRange all{0, static_cast<int>(gpt.model.layers.size())};
  // The blocks', and the output layer's input (s h).
  EXPECT_EQ(bf16_kept_activation_bytes(gpt, all),
            samples * 2 * (blocks * (6 * s * h + s * f) + s * h));
  EXPECT_EQ(bf16_kept_activation_bytes(gpt, {0, 1}), 0) << "the embedding alone";
  const LayerRange head{all.end - 1, all.end};
  EXPECT_EQ(bf16_kept_activation_bytes(gpt, head), 0) << "the output layer's input as stage input";
  // What the backend holds now sits between the simulator's bf16 prediction
  // (2 bytes a value) and the float32 profile it held before.
  const StageProfile float32 =
      profile_stages(gpt.model, gpt.parallel, microbatch_size(gpt), Precision::Fp32).front();
  const StageProfile predicted =
      profile_stages(gpt.model, gpt.parallel, microbatch_size(gpt), Precision::Bf16Mixed).front();
  const int64_t held = float32.activation_bytes - bf16_kept_activation_bytes(gpt, all);
  EXPECT_GT(held, predicted.activation_bytes);
  EXPECT_LT(held, float32.activation_bytes);
  // An MLP keeps the inputs of its 2nd, 3rd and 4th linears (16 values a
  // sample each); the first one's is the stage input.
  const Experiment mlp = testing::small_experiment();
  const int mlp_layers = static_cast<int>(mlp.model.layers.size());
  EXPECT_EQ(bf16_kept_activation_bytes(mlp, {0, mlp_layers}), 3 * 16 * 2 * microbatch_size(mlp));
  EXPECT_EQ(bf16_kept_activation_bytes(mlp, {1, mlp_layers}), 3 * 16 * 2 * microbatch_size(mlp))
      << "from the relu on, the 2nd linear's input is no stage input";
  EXPECT_EQ(bf16_kept_activation_bytes(mlp, {2, mlp_layers}), 2 * 16 * 2 * microbatch_size(mlp));
  // The conv net: the second convolution's input (4 channels of 3 x 3) and
  // the classifier's (4 pooled channels).
  const Experiment conv =
      testing::on_backend(pipelab::testing::two_convolution_experiment(), "cuda");
  EXPECT_EQ(bf16_kept_activation_bytes(conv, {0, 5}), (4 * 3 * 3 + 4) * 2 * microbatch_size(conv));
  // A moe layer of width 16 with top 2 at capacity factor 1: 2 slot rows of
  // 16 values per sample; and the last linear's input (16 values).
  const Experiment moe = pipelab::testing::small_moe_experiment(2, 1.0);
  EXPECT_EQ(bf16_kept_activation_bytes(moe, {0, static_cast<int>(moe.model.layers.size())}),
            (2 * 16 + 16) * 2 * microbatch_size(moe));
}

// Under bf16-mixed the CUDA backend keeps float32 gradients and masters and
// float32 activations except the GEMM-only ones (kept_bf16.h), so the estimate is
// the fp32 one plus the bf16 copies and roundings of each device's stage,
// less the bytes those activations save in each micro-batch in flight at the
// peak (1F1B: pp - d on device d, in a B), with the margins on them; the
// running B's peak, net of the activations it has freed, adds back one
// micro-batch's (memory_preflight.cpp: the netting counts freed bf16 values
// at 4 bytes).
void expect_estimate_counts_the_kept_bytes(const Experiment& experiment, const std::string& what,
                                           const std::vector<int>& pps) {
  for (const int pp : pps) {
    SCOPED_TRACE(what + ", pp " + std::to_string(pp));
    const Experiment fp32 = testing::with_plan(experiment, ScheduleKind::OneFOneB, pp, 4);
    Experiment bf16 = fp32;
    bf16.training.precision = Precision::Bf16Mixed;
    const std::vector<StageProfile> stages = profile_stages(
        fp32.model, fp32.parallel, microbatch_size(fp32), Precision::Fp32);
    const std::vector<StageProfile> predicted = profile_stages(
        bf16.model, bf16.parallel, microbatch_size(bf16), Precision::Bf16Mixed);
    const std::vector<int64_t> fp32_bytes = estimate_device_bytes(fp32, h200(), kWorkspace);
    const std::vector<int64_t> bf16_bytes = estimate_device_bytes(bf16, h200(), kWorkspace);
    ASSERT_EQ(bf16_bytes.size(), static_cast<size_t>(pp));
    for (int d = 0; d < pp; ++d) {
      const StageProfile& stage = stages[static_cast<size_t>(d)];
      const int64_t kept = bf16_kept_activation_bytes(bf16, stage.layers);
      EXPECT_GT(kept, 0);
      const int64_t peak_drop = (pp - d - 1) * kept;
      const int64_t im2col = largest_im2col_bytes(bf16, stage.layers);
      // The margins are whole bytes of each peak: 1 byte apart at most.
      EXPECT_NEAR(static_cast<double>(bf16_bytes[d] - fp32_bytes[d]),
                  static_cast<double>(
                      bf16_weight_copy_bytes(stage) + bf16_rounding_bytes(stage, kept, im2col) +
                      largest_attention_workspace_bytes(bf16, stage.layers) -
                      largest_attention_workspace_bytes(fp32, stage.layers) -
                      peak_drop * (100 + kEstimateMarginPercent + kCacheOverheadPercent) / 100),
                  1.0)
          << "pp " << pp << ", device " << d;
      EXPECT_GT(bf16_bytes[d], fp32_bytes[d]);
      EXPECT_LT(predicted[static_cast<size_t>(d)].gradient_bytes(), stage.gradient_bytes());
      // A GPU that holds the fp32 estimate exactly is short under bf16-mixed.
      EXPECT_FALSE(find_memory_shortfalls({bf16_bytes[d]}, {0}, {fp32_bytes[d]}).empty());
    }
  }
}

TEST(MemoryPreflightTest, Bf16MixedCountsWhatTheBackendKeeps) {
  expect_estimate_counts_the_kept_bytes(
      testing::on_backend(pipelab::testing::tiny_gpt_experiment(), "cuda"), "tiny gpt", {1, 2});
  expect_estimate_counts_the_kept_bytes(testing::small_experiment(), "mlp", {1, 2});
  // (Over pp 2 one of its stages keeps no such input but its stage input.)
  expect_estimate_counts_the_kept_bytes(
      testing::on_backend(pipelab::testing::two_convolution_experiment(), "cuda"), "conv net", {1});
}

// Under full recompute the activations recomputed for the backward are kept
// in bf16 again: the executors rebuild the whole stage, so both blocks' and
// the output layer's input for the tiny GPT, every kept linear input for an
// MLP. With 1F1B on one device the peak holds one
// micro-batch recomputed, so the estimate drops by those bytes (with the
// margins on them) against keeping them in float32, less the kept bytes the
// running B's netted peak adds back (memory_preflight.cpp).
TEST(MemoryPreflightTest, Bf16MixedRecomputesInBf16) {
  const Experiment gpt =
      testing::with_plan(testing::on_backend(pipelab::testing::tiny_gpt_experiment(), "cuda"),
                         ScheduleKind::OneFOneB, 1, 4);
  const int64_t s = 8, h = 16, f = 4 * 16, samples = 16 / 4;
  const LayerRange all{0, static_cast<int>(gpt.model.layers.size())};
  EXPECT_EQ(bf16_recomputed_activation_bytes(gpt, all),
            samples * 2 * (2 * (6 * s * h + s * f) + s * h));
  const Experiment mlp =
      testing::with_plan(testing::small_experiment(), ScheduleKind::OneFOneB, 1, 4);
  const LayerRange mlp_all{0, static_cast<int>(mlp.model.layers.size())};
  EXPECT_EQ(bf16_recomputed_activation_bytes(mlp, mlp_all),
            bf16_kept_activation_bytes(mlp, mlp_all));
  for (const Experiment& experiment : {gpt, mlp}) {
    Experiment fp32 = experiment;
    fp32.parallel.recompute = true;
    Experiment bf16 = fp32;
    bf16.training.precision = Precision::Bf16Mixed;
    const StageProfile stage =
        profile_stages(fp32.model, fp32.parallel, microbatch_size(fp32), Precision::Fp32).front();
    const int64_t kept = bf16_kept_activation_bytes(bf16, stage.layers);
    const int64_t recomputed = bf16_recomputed_activation_bytes(bf16, stage.layers);
    EXPECT_GT(recomputed, 0);
    const int64_t fp32_bytes = estimate_device_bytes(fp32, h200(), kWorkspace).front();
    const int64_t bf16_bytes = estimate_device_bytes(bf16, h200(), kWorkspace).front();
    EXPECT_NEAR(static_cast<double>(bf16_bytes - fp32_bytes),
                static_cast<double>(
                    bf16_weight_copy_bytes(stage) + bf16_rounding_bytes(stage, kept, 0) +
                    largest_attention_workspace_bytes(bf16, stage.layers) -
                    largest_attention_workspace_bytes(fp32, stage.layers) -
                    (recomputed - kept) * (100 + kEstimateMarginPercent + kCacheOverheadPercent) / 100),
                1.0)
        << experiment.name;
  }
}

// Under sequence parallelism each of the tiny GPT's 2 blocks keeps Norm1's
// and Norm2's outputs, gathered again over the whole sequence (s h each), in
// bf16 from BI to BW; without it, none.
TEST(MemoryPreflightTest, Bf16MixedCountsTheGatheredNormsInBf16) {
  Experiment gpt = testing::with_plan(
      testing::on_backend(pipelab::testing::tiny_gpt_experiment(), "cuda"),
      ScheduleKind::ZeroBubbleH1, 1, 4, 1, 2);
  const int64_t s = 8, h = 16, blocks = 2, samples = 16 / 4;
  const LayerRange all{0, static_cast<int>(gpt.model.layers.size())};
  EXPECT_EQ(bf16_gathered_norm_bytes(gpt, all), 0);
  gpt.parallel.sequence_parallel = true;
  EXPECT_EQ(bf16_gathered_norm_bytes(gpt, all), samples * 2 * blocks * 2 * s * h);
}

TEST(MemoryPreflightTest, CountsNcclBuffersPerCommunicatorOfEachGpu) {
  const Experiment single = testing::small_experiment();
  // One device: no communicator.
  EXPECT_EQ(estimate_nccl_bytes_per_gpu(single, {0}, 1), (std::vector<int64_t>{0}));
  // A 4-stage pipeline on 4 GPUs: the pairs 0-1, 1-2, 2-3 and the world.
  const Experiment pp4 = testing::with_plan(single, ScheduleKind::OneFOneB, 4, 8);
  const int64_t c = kNcclCommunicatorBytes;
  const std::vector<int64_t> expected = {2 * c, 3 * c, 3 * c, 2 * c};
  EXPECT_EQ(estimate_nccl_bytes_per_gpu(pp4, {0, 1, 2, 3}, 4), kHaveNccl
                                                                  ? expected
                                                                  : std::vector<int64_t>(4, 0));
  // The same pipeline on one GPU: device-to-device copies, no NCCL.
  EXPECT_EQ(estimate_nccl_bytes_per_gpu(pp4, {0, 0, 0, 0}, 1), (std::vector<int64_t>{0}));
}

TEST(MemoryPreflightTest, CountsTheExpertGroupsCommunicators) {
  // dp 4 over 4 GPUs: the data-parallel world; with ep 2 also the expert-parallel
  // pairs {0, 1}, {2, 3} and the pairs holding the same experts {0, 2}, {1, 3}.
  Experiment moe = testing::with_plan(pipelab::testing::small_moe_experiment(1, 1.25),
                                      ScheduleKind::OneFOneB, 1, 2, 4);
  const int64_t c = kNcclCommunicatorBytes;
  const auto nccl = [](const std::vector<int64_t>& bytes) {
    return kHaveNccl ? bytes : std::vector<int64_t>(bytes.size(), 0);
  };
  EXPECT_EQ(estimate_nccl_bytes_per_gpu(moe, {0, 1, 2, 3}, 4), nccl({c, c, c, c}));
  moe.parallel.ep = 2;
  EXPECT_EQ(estimate_nccl_bytes_per_gpu(moe, {0, 1, 2, 3}, 4), nccl({3 * c, 3 * c, 3 * c, 3 * c}));
}

TEST(MemoryPreflightTest, NcclBytesCountTowardsTheGpuAndShowInTheMessage) {
  const int64_t gib = 1ll << 30;
  const std::vector<int64_t> needed = {10 * gib, 10 * gib};
  EXPECT_TRUE(find_memory_shortfalls(needed, {0, 1}, {11 * gib, 11 * gib}, {gib, gib}).empty());
  const std::vector<GpuShortfall> shortfalls =
      find_memory_shortfalls(needed, {0, 1}, {11 * gib, 11 * gib}, {gib, 2 * gib});
  ASSERT_EQ(shortfalls.size(), 1u);
  EXPECT_EQ(shortfalls[0].gpu, 1);
  EXPECT_EQ(shortfalls[0].needed_bytes, 12 * gib);
  EXPECT_EQ(shortfalls[0].nccl_bytes, 2 * gib);
  const std::string message = memory_shortfall_message(shortfalls, needed);
  EXPECT_NE(message.find("GPU 1 (virtual device 1) needs 12.0 GiB (NCCL 2.0 GiB) but has 11.0 GiB "
                         "free"),
            std::string::npos)
      << message;
  EXPECT_THROW(find_memory_shortfalls(needed, {0, 1}, {gib, gib}, {gib}), std::invalid_argument);
}

// The plan of NCCL between ranks for `plan` with `devices_per_rank` devices
// per rank, each rank on a GPU of its own or (`shared_gpu`) all on one, as
// CudaExecutor makes it.
RankCommPlan rank_plan(const ParallelPlan& plan, int devices_per_rank, bool shared_gpu = false) {
  const int ranks = plan.devices() / devices_per_rank;
  std::vector<int> rank_of_device;
  for (int d = 0; d < plan.devices(); ++d) rank_of_device.push_back(d / devices_per_rank);
  std::vector<std::string> gpu_of_rank;
  for (int rank = 0; rank < ranks; ++rank)
    gpu_of_rank.push_back(shared_gpu ? "host/0" : "host/" + std::to_string(rank));
  return plan_rank_communicators(build_schedule(plan),
                                 collective_groups(plan, false).with_collectives(false),
                                 rank_of_device, gpu_of_rank, true);
}

TEST(MemoryPreflightTest, ARankCountsItsCommunicatorsBetweenRanks) {
  const int64_t c = kNcclCommunicatorBytes;
  // pp 2 x dp 2 on 4 ranks: each rank holds the world, its data-parallel
  // group and one link each way with its pipeline neighbour.
  ParallelPlan pp2_dp2;
  pp2_dp2.pp = 2;
  pp2_dp2.dp = 2;
  pp2_dp2.microbatches = 4;
  const RankCommPlan four = rank_plan(pp2_dp2, 1);
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(estimate_rank_nccl_bytes(four, rank), 4 * c);
  // dp 2 x tp 2 x pp 2, 2 devices per rank (a stage's two shards): tensor
  // parallelism stays in each process; a rank holds the world, the
  // data-parallel groups of its two shards, and each shard's link each way
  // with the other stage.
  ParallelPlan grid = pp2_dp2;
  grid.tp = 2;
  const RankCommPlan two_each = rank_plan(grid, 2);
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(estimate_rank_nccl_bytes(two_each, rank), (1 + 2 + 4) * c) << "rank " << rank;
  // Every rank on one GPU: everything between ranks is staged through host
  // memory, no NCCL.
  const RankCommPlan staged = rank_plan(grid, 2, true);
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(estimate_rank_nccl_bytes(staged, rank), 0);
}

TEST(MemoryPreflightTest, AHugeModelDoesNotFitAnH200) {
  Experiment huge = testing::small_experiment();
  const auto linear = [](int64_t out) { return LayerSpec{LayerType::Linear, out, true, 0.0}; };
  huge.model.layers = {linear(200000), linear(200000), linear(3)};  // 4e10 weights in the middle
  const std::vector<int64_t> estimate = estimate_device_bytes(huge, h200(), kWorkspace);
  EXPECT_GT(estimate[0], h200().memory_bytes);
  EXPECT_EQ(find_memory_shortfalls(estimate, {0}, {h200().memory_bytes}).size(), 1u);
}

TEST(MemoryPreflightTest, PicksTheProfileOfTheGpu) {
  EXPECT_EQ(device_profile_name_for_gpu("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(device_profile_name_for_gpu("NVIDIA H200"), "h200");
  EXPECT_EQ(device_profile_name_for_gpu("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(device_profile_name_for_gpu("NVIDIA A100-SXM4-40GB"), "a100-40gb");
  EXPECT_EQ(device_profile_name_for_gpu("NVIDIA B200"), "b200");
  EXPECT_EQ(device_profile_name_for_gpu("NVIDIA GeForce RTX 4090"), "rtx-4090");
  EXPECT_EQ(device_profile_name_for_gpu("NVIDIA L40S"), "h200");
  for (const char* name : {"NVIDIA A100-SXM4-40GB", "NVIDIA B200", "NVIDIA GeForce RTX 4090"})
    EXPECT_TRUE(find_device_profile(device_profile_name_for_gpu(name)).has_value()) << name;
}

}  // namespace
}  // namespace pipelab::gpu
