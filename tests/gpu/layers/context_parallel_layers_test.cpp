// Context parallelism's layers on the CUDA backend (cp = 2) against the CPU's
// whole layer. A Transformer block: each rank, fed its two chunks of x and dy
// (context_split.h), gives those positions of the whole block's output and
// input gradient, and the ranks' weight gradients sum to the whole block's;
// with dropout (masks keyed by global positions), recomputed probabilities,
// and LLaMA's grouped-query attention with rotary positions. An embedding
// with learned positions: each rank's lookup at its positions, and the
// ranks' table gradients summing to the whole's. The ranks run on one GPU in
// lockstep threads whose gathers and scatters go through host copies
// (lockstep_shards.h). Skipped without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/nn/context_split.h"
#include "core/nn/embedding_layer.h"
#include "core/nn/transformer_block_layer.h"
#include "gpu/layers/embedding.h"
#include "gpu/layers/transformer_block.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/layers/lockstep_shards.h"

namespace pipelab::gpu {
namespace {

using testing::expect_close_to_scale;
using testing::random_tensor;
using testing::run_shards;

constexpr int kCp = 2;
constexpr int64_t kSeq = 8, kBatch = 3;

// The values at `held` positions of every sample of a [batch, seq * width] tensor.
std::vector<float> at_positions(const std::vector<float>& values, int64_t width,
                                const std::vector<int64_t>& held) {
  std::vector<float> part;
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t position : held) {
      const auto begin = values.begin() + (b * kSeq + position) * width;
      part.insert(part.end(), begin, begin + width);
    }
  return part;
}

DeviceTensor rank_tensor(const Tensor& whole, int64_t width, const std::vector<int64_t>& held,
                         DeviceContext& context) {
  return DeviceTensor::from_values(kBatch, static_cast<int64_t>(held.size()) * width,
                                   at_positions(whole.to_vector(), width, held),
                                   &context.allocator(), MemoryCategory::Activations);
}

// Sums `parts` element by element.
std::vector<float> summed(const std::vector<std::vector<float>>& parts) {
  std::vector<float> sum(parts.front().size(), 0.0f);
  for (const std::vector<float>& part : parts)
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += part[i];
  return sum;
}

void expect_ranks_give_the_cpu_block(const GptBlockConfig& config, const std::string& what) {
  SCOPED_TRACE(what);
  const int index = 1;
  const uint64_t seed = 7;
  ForwardInfo info;
  info.training = true;
  info.step = 3;
  info.first_sample = 5;
  TransformerBlockLayer cpu(index, config, BlockShard{}, kSeq, nullptr);
  cpu.init(seed);
  const Tensor x = random_tensor(kBatch, kSeq * config.dim, 1);
  const Tensor dy = random_tensor(kBatch, kSeq * config.dim, 2);
  std::unique_ptr<LayerState> state;
  const std::vector<float> y = cpu.forward_keeping(x, info, state).to_vector();
  const std::vector<float> dx = cpu.backward_input_with(x, dy, info, state.get()).to_vector();
  cpu.backward_weight_with(x, dy, state.get());

  struct Rank {
    std::vector<float> y, dx;
    std::vector<std::vector<float>> grads;
  };
  std::vector<Rank> ranks(kCp);
  run_shards(kCp, [&](int r, DeviceContext& context, GpuLayer::InnerSequenceCollectives group) {
    GpuTransformerBlock block(index, config, BlockShard{1, 0, false, kCp, r}, kSeq, seed, context);
    block.connect_context_parallel(testing::as_context(std::move(group), r, kCp));
    const std::vector<int64_t> held = context_positions(kSeq, kCp, r);
    const DeviceTensor x_rank = rank_tensor(x, config.dim, held, context);
    const DeviceTensor dy_rank = rank_tensor(dy, config.dim, held, context);
    std::unique_ptr<LayerState> kept;
    ranks[r].y = block.forward_keeping(x_rank, info, kept).to_vector();
    ranks[r].dx = block.backward_input_with(x_rank, dy_rank, info, kept.get()).to_vector();
    block.backward_weight_with(x_rank, dy_rank, kept.get());
    for (DeviceTensor* grad : block.grads()) ranks[r].grads.push_back(grad->to_vector());
  });

  for (int r = 0; r < kCp; ++r) {
    const std::vector<int64_t> held = context_positions(kSeq, kCp, r);
    const std::string rank = "rank " + std::to_string(r);
    expect_close_to_scale(ranks[r].y, at_positions(y, config.dim, held), 1e-4, rank + " forward");
    expect_close_to_scale(ranks[r].dx, at_positions(dx, config.dim, held), 1e-3,
                          rank + " input gradient");
  }
  const std::vector<Tensor*> whole = cpu.block().gradients().list();
  ASSERT_EQ(ranks[0].grads.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i)
    expect_close_to_scale(summed({ranks[0].grads[i], ranks[1].grads[i]}), whole[i]->to_vector(),
                          1e-3, "gradient " + std::to_string(i) + " summed over the ranks");
}

GptBlockConfig gpt_config() {
  GptBlockConfig config;
  config.dim = 32;
  config.heads = 4;
  config.ffn_hidden = 48;
  return config;
}

TEST(ContextParallelLayers, BlockRanksGiveTheCpuBlocksPositions) {
  PIPELAB_REQUIRE_GPU();
  expect_ranks_give_the_cpu_block(gpt_config(), "gpt causal");
  GptBlockConfig dropped = gpt_config();
  dropped.dropout = 0.2f;
  expect_ranks_give_the_cpu_block(dropped, "gpt causal with dropout");
  dropped.keep_attention_probabilities = false;
  expect_ranks_give_the_cpu_block(dropped, "gpt with dropout, probabilities recomputed");
  GptBlockConfig whole_sequence = gpt_config();
  whole_sequence.causal = false;
  expect_ranks_give_the_cpu_block(whole_sequence, "gpt not causal");
}

TEST(ContextParallelLayers, LlamaBlockRanksGiveTheCpuBlocksPositions) {
  PIPELAB_REQUIRE_GPU();
  GptBlockConfig llama = gpt_config();
  llama.norm = NormType::RmsNorm;
  llama.activation = BlockActivation::SwiGlu;
  llama.bias = false;
  llama.kv_heads = 2;
  llama.rotary = true;
  expect_ranks_give_the_cpu_block(llama, "llama: grouped-query attention, rotary");
  llama.dropout = 0.2f;
  llama.keep_attention_probabilities = false;
  expect_ranks_give_the_cpu_block(llama, "llama with dropout, probabilities recomputed");
}

TEST(ContextParallelLayers, EmbeddingRanksLookUpTheirPositions) {
  PIPELAB_REQUIRE_GPU();
  const int64_t vocab = 50, dim = 16;
  const int index = 0;
  const uint64_t seed = 4;
  EmbeddingLayer cpu(index, whole_vocab(vocab), dim, kSeq, nullptr);
  cpu.init(seed);
  Tensor ids(kBatch, kSeq);
  for (int64_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<float>((i * 7 + 3) % vocab);
  const Tensor dy = random_tensor(kBatch, kSeq * dim, 2);
  const std::vector<float> y = cpu.forward(ids, ForwardInfo{}).to_vector();
  cpu.backward_weight(ids, dy);

  std::vector<std::vector<float>> lookups(kCp), token_grads(kCp), position_grads(kCp);
  run_shards(kCp, [&](int r, DeviceContext& context, GpuLayer::InnerSequenceCollectives) {
    const std::vector<int64_t> held = context_positions(kSeq, kCp, r);
    GpuEmbedding embedding(index, whole_vocab(vocab), dim, kSeq, seed, context, 1, 0, true, held);
    const DeviceTensor x = rank_tensor(ids, 1, held, context);
    lookups[r] = embedding.forward(x, ForwardInfo{}).to_vector();
    embedding.backward_weight(x, rank_tensor(dy, dim, held, context));
    token_grads[r] = embedding.grads()[0]->to_vector();
    position_grads[r] = embedding.grads()[1]->to_vector();
  });
  for (int r = 0; r < kCp; ++r)
    expect_close_to_scale(lookups[r], at_positions(y, dim, context_positions(kSeq, kCp, r)), 1e-6,
                          "rank " + std::to_string(r) + " lookup");
  expect_close_to_scale(summed(token_grads), cpu.grads()[0]->to_vector(), 1e-6,
                        "token rows' gradient summed over the ranks");
  expect_close_to_scale(summed(position_grads), cpu.grads()[1]->to_vector(), 1e-6,
                        "position table's gradient summed over the ranks");
}

}  // namespace
}  // namespace pipelab::gpu
