// Context parallelism in the GPT block: cp ranks (and, with sequence
// parallelism, tp shards within each), run in lockstep threads with the
// gathers and scatters on the host, each fed its positions of x and dy (two
// chunks per rank, context_split.h), give those positions of the whole
// block's y and dx, and weight gradients that sum to the whole block's over
// the ranks (the data-parallel group, which spans them, sums them in a run).
// Causal and not, GQA with rotary, recomputed probabilities, dropout (masks
// keyed by global positions).
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/nn/context_split.h"
#include "core/nn/gpt_block.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_close;
using testing::HostSequenceCollectives;
using testing::random_tensor;

constexpr int64_t kBatch = 2;
constexpr int64_t kSeq = 8;

GptBlockConfig small_config() {
  GptBlockConfig config;
  config.dim = 8;
  config.heads = 4;
  config.ffn_hidden = 12;
  return config;
}

GptBlockConfig llama_config() {
  GptBlockConfig config = small_config();
  config.norm = NormType::RmsNorm;
  config.activation = BlockActivation::SwiGlu;
  config.bias = false;
  config.kv_heads = 2;
  config.rotary = true;
  return config;
}

// Rows at `positions` of every sample of a [batch * seq, width] tensor.
Tensor rows_at(const Tensor& whole, int64_t seq, const std::vector<int64_t>& positions) {
  const int64_t batch = whole.rows() / seq;
  const int64_t count = static_cast<int64_t>(positions.size());
  Tensor part(batch * count, whole.cols());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < count; ++t)
      std::copy(whole.row(b * seq + positions[t]), whole.row(b * seq + positions[t]) + whole.cols(),
                part.row(b * count + t));
  return part;
}

// The positions rank r and shard k hold: the rank's, then the shard's slice of them.
std::vector<int64_t> held_positions(int cp, int r, int tp, int k, bool sequence_parallel) {
  std::vector<int64_t> positions = context_positions(kSeq, cp, r);
  if (!sequence_parallel || tp == 1) return positions;
  const size_t local = positions.size() / static_cast<size_t>(tp);
  return {positions.begin() + static_cast<long>(k * local),
          positions.begin() + static_cast<long>((k + 1) * local)};
}

void expect_ranks_match_whole(const GptBlockConfig& config, int cp, int tp = 1,
                              bool sequence_parallel = false, const BlockDropout& dropout = {}) {
  const std::string label =
      "cp " + std::to_string(cp) + " tp " + std::to_string(tp) + (sequence_parallel ? " sp " : " ");
  const int64_t rows = kBatch * kSeq;
  GptBlock whole(config, {});
  whole.init(7, 3);
  const Tensor x = random_tensor(rows, config.dim, 52);
  const Tensor dy = random_tensor(rows, config.dim, 53);
  GptBlockCache cache;
  Tensor y(rows, config.dim), dx(rows, config.dim);
  whole.forward(x, kBatch, kSeq, cache, y, all_reduce_nothing, dropout);
  whole.backward(x, dy, cache, dx, all_reduce_nothing);

  const int devices = cp * tp;
  std::vector<std::unique_ptr<GptBlock>> blocks;
  std::vector<Tensor> ys, dxs;
  std::vector<std::vector<int64_t>> positions;
  for (int device = 0; device < devices; ++device) {
    const int r = device / tp, k = device % tp;
    blocks.push_back(
        std::make_unique<GptBlock>(config, BlockShard{tp, k, sequence_parallel, cp, r}));
    blocks.back()->init(7, 3);
    positions.push_back(held_positions(cp, r, tp, k, sequence_parallel));
    ys.emplace_back(kBatch * static_cast<int64_t>(positions.back().size()), config.dim);
    dxs.emplace_back(ys.back().rows(), config.dim);
  }
  // One tensor-parallel group per rank, one context-parallel group per shard.
  std::vector<std::unique_ptr<HostSequenceCollectives>> sequence_groups, context_groups;
  std::vector<std::unique_ptr<testing::HostAllReduce>> sums;
  for (int r = 0; r < cp; ++r) {
    sequence_groups.push_back(std::make_unique<HostSequenceCollectives>(tp));
    sums.push_back(std::make_unique<testing::HostAllReduce>(tp));
  }
  for (int k = 0; k < tp; ++k)
    context_groups.push_back(std::make_unique<HostSequenceCollectives>(cp));
  std::vector<std::thread> threads;
  for (int device = 0; device < devices; ++device)
    threads.emplace_back([&, device] {
      const int r = device / tp, k = device % tp;
      testing::HostAllReduce& sum = *sums[r];
      BlockCollectives mine;
      if (tp > 1 && !sequence_parallel)
        mine.all_reduce_sum = [&sum, k](float* data, int64_t count) { sum(k, data, count); };
      if (sequence_parallel) mine.sequence = sequence_groups[r]->for_shard(k);
      mine.context = context_groups[k]->for_rank(r);
      const Tensor x_part = rows_at(x, kSeq, positions[device]);
      const Tensor dy_part = rows_at(dy, kSeq, positions[device]);
      GptBlockCache rank_cache;
      blocks[device]->forward(x_part, kBatch, kSeq, rank_cache, ys[device], mine, dropout);
      blocks[device]->backward(x_part, dy_part, rank_cache, dxs[device], mine);
    });
  for (std::thread& thread : threads) thread.join();

  for (int device = 0; device < devices; ++device) {
    expect_close(ys[device], rows_at(y, kSeq, positions[device]), label + "y");
    expect_close(dxs[device], rows_at(dx, kSeq, positions[device]), label + "dx");
  }
  // Each shard's gradients summed over the ranks (and, for the norms under
  // sequence parallelism, over the shards too) are the whole block's slice.
  for (int k = 0; k < tp; ++k) {
    GptBlockTensors expected = slice_block_tensors(whole.gradients(), config, {tp, k});
    GptBlockTensors summed = slice_block_tensors(whole.gradients(), config, {tp, k});
    for (Tensor* t : summed.list()) t->set_zero();
    for (int r = 0; r < cp; ++r) {
      std::vector<Tensor*> from = blocks[r * tp + k]->gradients().list();
      std::vector<Tensor*> to = summed.list();
      for (size_t i = 0; i < to.size(); ++i) to[i]->add(*from[i]);
      if (!sequence_parallel || tp == 1) continue;
      for (int other = 0; other < tp; ++other) {  // the norms' partial gradients
        if (other == k) continue;
        GptBlockTensors& o = blocks[r * tp + other]->gradients();
        summed.norm1_gain.add(o.norm1_gain);
        summed.norm2_gain.add(o.norm2_gain);
        if (!o.norm1_bias.empty()) summed.norm1_bias.add(o.norm1_bias);
        if (!o.norm2_bias.empty()) summed.norm2_bias.add(o.norm2_bias);
      }
    }
    const std::vector<Tensor*> got = summed.list();
    const std::vector<Tensor*> want = expected.list();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      expect_close(*got[i], *want[i], label + "gradient " + std::to_string(i));
  }
}

TEST(ContextParallelBlock, RanksReproduceTheWholeBlock) {
  expect_ranks_match_whole(small_config(), 2);
  expect_ranks_match_whole(small_config(), 4);
  GptBlockConfig bidirectional = small_config();
  bidirectional.causal = false;
  expect_ranks_match_whole(bidirectional, 2);
  GptBlockConfig lean = small_config();
  lean.keep_attention_probabilities = false;
  expect_ranks_match_whole(lean, 2);
  expect_ranks_match_whole(lean, 4);
}

TEST(ContextParallelBlock, GroupedQueryRotaryAndDropoutFollowGlobalPositions) {
  expect_ranks_match_whole(llama_config(), 2);
  expect_ranks_match_whole(llama_config(), 4);
  GptBlockConfig dropped = small_config();
  dropped.dropout = 0.3f;
  expect_ranks_match_whole(dropped, 2, 1, false, {0.3f, 9, 3, 4, 10});
  dropped.keep_attention_probabilities = false;
  expect_ranks_match_whole(dropped, 4, 1, false, {0.3f, 9, 3, 4, 10});
}

TEST(ContextParallelBlock, CombinesWithTensorAndSequenceParallelism) {
  expect_ranks_match_whole(small_config(), 2, 2);
  expect_ranks_match_whole(small_config(), 2, 2, true);
  expect_ranks_match_whole(llama_config(), 2, 2, true);
  GptBlockConfig dropped = small_config();
  dropped.dropout = 0.3f;
  expect_ranks_match_whole(dropped, 2, 2, true, {0.3f, 9, 3, 4, 10});
}

TEST(ContextParallelBlock, ASequenceTheChunksDoNotDivideIsExplained) {
  GptBlock rank(small_config(), {1, 0, false, 2, 0});
  GptBlockCache cache;
  Tensor x(kBatch * 3, 8), y(kBatch * 3, 8);
  try {
    rank.forward(x, kBatch, 6, cache, y, BlockCollectives{});
    FAIL() << "cp = 2 cannot cut 6 positions into 4 chunks";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("does not divide into 4"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(GptBlock(small_config(), BlockShard{1, 0, false, 2, 2}), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
