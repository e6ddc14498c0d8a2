// The layers that split the sequence on the CUDA backend (tp = 2, sequence
// parallelism) against the CPU's whole layer. A Transformer block: each
// shard's slice of the output and of the input gradient, each shard's weight
// gradients (the norms' partial ones summed over the shards), with dropout
// inside the block so the masks' positions are checked too. An embedding
// split by vocabulary and sequence: each shard's slice of the lookup, its
// token rows' gradients and the position table's. The two shards run on one
// GPU in lockstep threads whose gathers and scatters go through host copies,
// so the layers' own sequence handling is tested apart from the backend's
// collectives. A block with experts likewise, and a standalone moe layer
// (which gathers the whole sequence and takes whole gradients). Skipped
// without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/nn/embedding_layer.h"
#include "core/nn/moe_layer.h"
#include "core/nn/tensor_parallel.h"
#include "core/nn/transformer_block_layer.h"
#include "gpu/device/device_guard.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/embedding.h"
#include "gpu/layers/moe.h"
#include "gpu/layers/transformer_block.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/layers/lockstep_shards.h"

namespace pipelab::gpu {
namespace {

using testing::expect_close_to_scale;
using testing::random_tensor;
using testing::run_shards;

// Positions [first, first + count) of every sample of a [batch, seq * dim] tensor.
std::vector<float> positions(const std::vector<float>& values, int64_t batch, int64_t seq,
                             int64_t dim, int64_t first, int64_t count) {
  std::vector<float> part;
  for (int64_t b = 0; b < batch; ++b) {
    const auto begin = values.begin() + (b * seq + first) * dim;
    part.insert(part.end(), begin, begin + count * dim);
  }
  return part;
}

std::vector<float> values_of(const Tensor& t) { return t.to_vector(); }

// The CPU's whole layer on x and dy: its output and input gradient (the
// weight gradients stay in the layer).
struct WholeLayerRun {
  std::vector<float> y, dx;
};
WholeLayerRun run_whole_layer(Layer& cpu, const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  std::unique_ptr<LayerState> state;
  WholeLayerRun run;
  run.y = values_of(cpu.forward_keeping(x, info, state));
  run.dx = values_of(cpu.backward_input_with(x, dy, info, state.get()));
  cpu.backward_weight_with(x, dy, state.get());
  return run;
}

// One layer shard's run on its positions of x and dy: its output, input
// gradient, gradients, and which gradients are partial (summed over the
// shards by the step's all-reduce).
struct BlockShardRun {
  std::vector<float> y, dx;
  std::vector<std::vector<float>> grads;
  std::vector<bool> partial;
};
BlockShardRun run_block_shard(GpuLayer& block, DeviceContext& context, const Tensor& x,
                              const Tensor& dy, int64_t seq, int tp, int k, const ForwardInfo& info) {
  const int64_t batch = x.rows(), dim = x.cols() / seq, local = seq / tp;
  const auto local_tensor = [&](const Tensor& whole) {
    return DeviceTensor::from_values(batch, local * dim, positions(whole.to_vector(), batch, seq, dim, k * local, local),
                                     &context.allocator(), MemoryCategory::Activations);
  };
  const DeviceTensor x_local = local_tensor(x);
  const DeviceTensor dy_local = local_tensor(dy);
  BlockShardRun run;
  std::unique_ptr<LayerState> state;
  run.y = block.forward_keeping(x_local, info, state).to_vector();
  run.dx = block.backward_input_with(x_local, dy_local, info, state.get()).to_vector();
  block.backward_weight_with(x_local, dy_local, state.get());
  const std::vector<DeviceTensor*> partial = block.sequence_partial_grads();
  for (DeviceTensor* grad : block.grads()) {
    run.grads.push_back(grad->to_vector());
    run.partial.push_back(std::find(partial.begin(), partial.end(), grad) != partial.end());
  }
  return run;
}

TEST(SequenceParallelLayers, BlockShardsGiveTheCpuBlocksSlices) {
  PIPELAB_REQUIRE_GPU();
  GptBlockConfig config;
  config.dim = 32;
  config.heads = 4;
  config.ffn_hidden = 48;
  config.dropout = 0.2f;
  const int tp = 2;
  const int64_t seq = 8, batch = 3, local = seq / tp;
  const int index = 1;
  const uint64_t seed = 7;
  ForwardInfo info;
  info.step = 3;
  info.first_sample = 5;

  TransformerBlockLayer cpu(index, config, BlockShard{}, seq, nullptr);
  cpu.init(seed);
  const Tensor x = random_tensor(batch, seq * config.dim, 1);
  const Tensor dy = random_tensor(batch, seq * config.dim, 2);
  const auto [y_cpu, dx_cpu] = run_whole_layer(cpu, x, dy, info);

  std::vector<BlockShardRun> shards(tp);
  run_shards(tp, [&](int k, DeviceContext& context, GpuLayer::InnerSequenceCollectives sequence) {
    GpuTransformerBlock block(index, config, BlockShard{tp, k, true}, seq, seed, context);
    block.connect_sequence_parallel(std::move(sequence));
    shards[k] = run_block_shard(block, context, x, dy, seq, tp, k, info);
  });

  GptBlockTensors& full = cpu.block().gradients();
  std::vector<float> partial_sum, partial_expected;
  for (int k = 0; k < tp; ++k) {
    const std::string shard = "shard " + std::to_string(k);
    expect_close_to_scale(shards[k].y, positions(y_cpu, batch, seq, config.dim, k * local, local),
                          1e-4, shard + " forward");
    expect_close_to_scale(shards[k].dx, positions(dx_cpu, batch, seq, config.dim, k * local, local),
                          1e-3, shard + " input gradient");
    GptBlockTensors expected = slice_block_tensors(full, config, BlockShard{tp, k, true});
    const std::vector<Tensor*> expected_list = expected.list();
    ASSERT_EQ(shards[k].grads.size(), expected_list.size()) << shard;
    for (size_t i = 0; i < expected_list.size(); ++i) {
      if (shards[k].partial[i]) continue;  // summed below
      expect_close_to_scale(shards[k].grads[i], expected_list[i]->to_vector(), 1e-3,
                            shard + " gradient " + std::to_string(i));
    }
  }
  // The norms' gradients: each shard took its slice's part; together the whole's.
  for (size_t i = 0; i < shards[0].grads.size(); ++i) {
    if (!shards[0].partial[i]) continue;
    std::vector<float> sum(shards[0].grads[i].size(), 0.0f);
    for (int k = 0; k < tp; ++k)
      for (size_t e = 0; e < sum.size(); ++e) sum[e] += shards[k].grads[i][e];
    partial_sum.insert(partial_sum.end(), sum.begin(), sum.end());
    GptBlockTensors expected = slice_block_tensors(full, config, BlockShard{tp, 0, true});
    const std::vector<float> whole = expected.list()[i]->to_vector();
    partial_expected.insert(partial_expected.end(), whole.begin(), whole.end());
  }
  EXPECT_EQ(partial_sum.size(), 4u * config.dim) << "the two norms' gains and biases";
  expect_close_to_scale(partial_sum, partial_expected, 1e-3, "norm gradients summed");
}

// A block with experts under sequence parallelism (gather before the gate,
// reduce-scatter after the combine, core/nn/transformer_block_layer.h): each
// shard's slice of the output and input gradient, its slices of the attention
// and experts' gradients, and the norms' and gate's partial gradients summed.
void expect_expert_block_shards_match_the_cpu(double capacity_factor) {
  SCOPED_TRACE("capacity_factor " + std::to_string(capacity_factor));
  GptBlockConfig config;
  config.dim = 16;
  config.heads = 4;
  config.ffn_hidden = 32;
  config.dropout = 0.2f;
  config.dense_mlp = false;
  const int tp = 2;
  const int64_t seq = 8, batch = 3, local = seq / tp, experts = 4;
  const int index = 1;
  const uint64_t seed = 7;
  ForwardInfo info;
  info.training = true;
  info.step = 3;
  info.first_sample = 5;
  const MoeShape shape{seq, config.dim, experts, 2, config.ffn_hidden, capacity_factor};

  const BlockExperts whole_experts{shape, 0.1, {}};
  TransformerBlockLayer cpu(index, config, BlockShard{}, seq, nullptr, &whole_experts);
  cpu.init(seed);
  const Tensor x = random_tensor(batch, seq * config.dim, 3);
  const Tensor dy = random_tensor(batch, seq * config.dim, 4);
  const auto [y_cpu, dx_cpu] = run_whole_layer(cpu, x, dy, info);

  std::vector<BlockShardRun> shards(tp);
  run_shards(tp, [&](int k, DeviceContext& context, GpuLayer::InnerSequenceCollectives sequence) {
    const BlockExperts mine{shape, 0.1, ExpertShard{1, 0, tp, k, true}};
    GpuTransformerBlock block(index, config, BlockShard{tp, k, true}, seq, seed, context, &mine);
    block.connect_sequence_parallel(std::move(sequence));
    shards[k] = run_block_shard(block, context, x, dy, seq, tp, k, info);
  });

  // The whole block's gradients as shard k holds them, in grads()'s order
  // (partial ones whole, as their sum over the shards).
  const auto expected_of = [&](int k) {
    std::vector<std::vector<float>> expected;
    GptBlockTensors block = slice_block_tensors(cpu.block().gradients(), config, BlockShard{tp, k, true});
    for (Tensor* t : block.list()) expected.push_back(t->to_vector());
    MoeLayer& moe = *cpu.experts();
    expected.push_back(moe.gate_grad().to_vector());
    const int64_t width = config.ffn_hidden / tp, first = k * width;
    for (int64_t e = 0; e < experts; ++e) {
      MoeLayer::Expert& all = moe.expert(e);
      expected.push_back(copy_slice(all.w1_grad, {0, config.dim, first, width}).to_vector());
      expected.push_back(copy_slice(all.b1_grad, {0, 1, first, width}).to_vector());
      expected.push_back(copy_slice(all.w2_grad, {first, width, 0, config.dim}).to_vector());
      expected.push_back(all.b2_grad.to_vector());
    }
    return expected;
  };
  int partial_count = 0;
  for (int k = 0; k < tp; ++k) {
    const std::string shard = "shard " + std::to_string(k);
    expect_close_to_scale(shards[k].y, positions(y_cpu, batch, seq, config.dim, k * local, local), 1e-4,
                          shard + " forward");
    expect_close_to_scale(shards[k].dx, positions(dx_cpu, batch, seq, config.dim, k * local, local), 1e-3,
                          shard + " input gradient");
    const std::vector<std::vector<float>> expected = expected_of(k);
    ASSERT_EQ(shards[k].grads.size(), expected.size()) << shard;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (shards[k].partial[i]) continue;  // summed below
      expect_close_to_scale(shards[k].grads[i], expected[i], 1e-3, shard + " gradient " + std::to_string(i));
    }
  }
  const std::vector<std::vector<float>> whole = expected_of(0);
  for (size_t i = 0; i < whole.size(); ++i) {
    if (!shards[0].partial[i]) continue;
    ++partial_count;
    std::vector<float> sum(whole[i].size(), 0.0f);
    for (int k = 0; k < tp; ++k)
      for (size_t e = 0; e < sum.size(); ++e) sum[e] += shards[k].grads[i][e];
    expect_close_to_scale(sum, whole[i], 1e-3, "partial gradient " + std::to_string(i) + " summed");
  }
  EXPECT_EQ(partial_count, 5) << "the two norms' gains and biases, and the gate";
}

TEST(SequenceParallelLayers, ExpertBlockShardsGiveTheCpuBlocksSlices) {
  PIPELAB_REQUIRE_GPU();
  expect_expert_block_shards_match_the_cpu(4.0);
  expect_expert_block_shards_match_the_cpu(0.5);
}

// A standalone moe layer on each shard's slice (gpu/layers/moe.h): each
// shard's slice of the whole layer's output and input gradient, and every
// gradient whole on every shard (none partial).
void expect_moe_layer_shards_match_the_cpu(double capacity_factor) {
  SCOPED_TRACE("capacity_factor " + std::to_string(capacity_factor));
  const int tp = 2;
  const int64_t seq = 8, batch = 3, local = seq / tp, dim = 16, experts = 4;
  const int index = 2;
  const uint64_t seed = 9;
  ForwardInfo info;
  info.training = true;
  info.step = 1;
  const MoeShape shape{seq, dim, experts, 2, 32, capacity_factor};

  MoeLayer cpu(index, shape, 0.1, ExpertShard{}, nullptr);
  cpu.init(seed);
  const Tensor x = random_tensor(batch, seq * dim, 5);
  const Tensor dy = random_tensor(batch, seq * dim, 6);
  const auto [y_cpu, dx_cpu] = run_whole_layer(cpu, x, dy, info);

  std::vector<BlockShardRun> shards(tp);
  run_shards(tp, [&](int k, DeviceContext& context, GpuLayer::InnerSequenceCollectives sequence) {
    GpuMoe moe(index, shape, 0.1, ExpertShard{}, seed, context, MoeSequenceSlice{tp, k});
    moe.connect_sequence_parallel(std::move(sequence));
    shards[k] = run_block_shard(moe, context, x, dy, seq, tp, k, info);
  });

  const std::vector<Tensor*> expected = cpu.grads();
  for (int k = 0; k < tp; ++k) {
    const std::string shard = "shard " + std::to_string(k);
    expect_close_to_scale(shards[k].y, positions(y_cpu, batch, seq, dim, k * local, local), 1e-4,
                          shard + " forward");
    expect_close_to_scale(shards[k].dx, positions(dx_cpu, batch, seq, dim, k * local, local), 1e-3,
                          shard + " input gradient");
    ASSERT_EQ(shards[k].grads.size(), expected.size()) << shard;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_FALSE(shards[k].partial[i]) << shard << " gradient " << i;
      expect_close_to_scale(shards[k].grads[i], expected[i]->to_vector(), 1e-3,
                            shard + " gradient " + std::to_string(i));
    }
  }
}

TEST(SequenceParallelLayers, MoeLayerShardsGiveTheCpuLayersSlices) {
  PIPELAB_REQUIRE_GPU();
  expect_moe_layer_shards_match_the_cpu(4.0);
  expect_moe_layer_shards_match_the_cpu(0.5);  // with dropped tokens
}

TEST(SequenceParallelLayers, EmbeddingShardsGiveTheCpuLookupsSlices) {
  PIPELAB_REQUIRE_GPU();
  const int tp = 2;
  const int64_t vocab = 50, dim = 16, seq = 8, batch = 3, local = seq / tp;
  const int index = 0;
  const uint64_t seed = 4;
  EmbeddingLayer cpu(index, whole_vocab(vocab), dim, seq, nullptr);
  cpu.init(seed);
  Tensor ids(batch, seq);
  for (int64_t i = 0; i < ids.size(); ++i) ids.data()[i] = static_cast<float>((i * 7 + 3) % vocab);
  const Tensor dy = random_tensor(batch, seq * dim, 2);
  const std::vector<float> y_cpu = values_of(cpu.forward(ids, ForwardInfo{}));
  cpu.backward_weight(ids, dy);
  const std::vector<float> token_grad = values_of(*cpu.grads()[0]);
  const std::vector<float> position_grad = values_of(*cpu.grads()[1]);

  struct Shard {
    std::vector<float> y, token_grad, position_grad;
  };
  std::vector<Shard> shards(tp);
  run_shards(tp, [&](int k, DeviceContext& context, GpuLayer::InnerSequenceCollectives sequence) {
    GpuEmbedding embedding(index, vocab_shard(vocab, tp, k), dim, seq, seed, context, tp, k);
    embedding.connect_sequence_parallel(std::move(sequence));
    const DeviceTensor x =
        DeviceTensor::from_host(ids, &context.allocator(), MemoryCategory::Activations);
    shards[k].y = embedding.forward(x, ForwardInfo{}).to_vector();
    const DeviceTensor dy_local = DeviceTensor::from_values(
        batch, local * dim, positions(dy.to_vector(), batch, seq, dim, k * local, local),
        &context.allocator(), MemoryCategory::Activations);
    embedding.backward_weight(x, dy_local);
    shards[k].token_grad = embedding.grads()[0]->to_vector();
    shards[k].position_grad = embedding.grads()[1]->to_vector();
  });
  for (int k = 0; k < tp; ++k) {
    const std::string shard = "shard " + std::to_string(k);
    const VocabRange range = vocab_shard(vocab, tp, k);
    expect_close_to_scale(shards[k].y, positions(y_cpu, batch, seq, dim, k * local, local), 1e-6,
                          shard + " lookup");
    const std::vector<float> rows(token_grad.begin() + range.begin * dim,
                                  token_grad.begin() + (range.begin + range.rows) * dim);
    expect_close_to_scale(shards[k].token_grad, rows, 1e-6, shard + " token rows' gradient");
    expect_close_to_scale(shards[k].position_grad, position_grad, 1e-6,
                          shard + " position gradient");
  }
}

}  // namespace
}  // namespace pipelab::gpu
