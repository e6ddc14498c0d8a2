// A Transformer block with experts split over tensor-parallel shards (each
// expert's FFN as the dense MLP, moe_layer.h) run in lockstep threads, the
// all-reduce summing on the host: the output, the input gradient, the routing
// and every gradient (the shard's slice of the whole block's) match tp = 1.
// Under sequence parallelism too (the shards' gathers and scatters on the
// host): each shard's positions of y and dx, and the gate's and norms'
// gradients summed over the shards.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "core/nn/tensor_parallel.h"
#include "core/nn/transformer_block_layer.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_close;
using testing::HostAllReduce;
using testing::random_tensor;
using testing::shard_positions;

constexpr int64_t kSeq = 4;
constexpr int64_t kDim = 4;
constexpr int64_t kFfn = 6;
constexpr int64_t kExperts = 4;
constexpr int64_t kBatch = 3;

GptBlockConfig experts_config(float dropout = 0.0f) {
  GptBlockConfig config;
  config.dropout = dropout;
  config.dim = kDim;
  config.heads = 2;
  config.ffn_hidden = kFfn;
  config.dense_mlp = false;
  return config;
}

// One shard's (or the whole block's) run: forward, BI and BW on x and dy.
struct BlockRun {
  BlockExperts experts;
  TransformerBlockLayer layer;
  MoeRouting routing;
  Tensor y, dx;

  BlockRun(int tp, int shard, double capacity_factor, bool sequence_parallel = false, float dropout = 0.0f)
      : experts{{kSeq, kDim, kExperts, 2, kFfn, capacity_factor},
                0.1,
                ExpertShard{1, 0, tp, shard, sequence_parallel}},
        layer(1, experts_config(dropout), BlockShard{tp, shard, sequence_parallel}, kSeq, nullptr, &experts) {
    layer.init(5);
    BasicLayer<Tensor, DeviceAllocator*>::ExpertConnection connection;
    connection.report = [this](const ForwardInfo&, const MoeRouting& r, double) { routing = r; };
    layer.connect_experts(connection);
  }
  void run(const Tensor& x, const Tensor& dy) {
    testing::run_forward_backward(layer, x, dy, y, dx);
  }
};

void expect_shards_match_whole(int tp, double capacity_factor, bool expect_drops) {
  SCOPED_TRACE("tp " + std::to_string(tp) + ", capacity_factor " + std::to_string(capacity_factor));
  const Tensor x = random_tensor(kBatch, kSeq * kDim, 41);
  const Tensor dy = random_tensor(kBatch, kSeq * kDim, 42);
  BlockRun whole(1, 0, capacity_factor);
  whole.run(x, dy);
  EXPECT_EQ(whole.routing.dropped_total() > 0, expect_drops);

  std::vector<std::unique_ptr<BlockRun>> shards;
  for (int k = 0; k < tp; ++k) shards.push_back(std::make_unique<BlockRun>(tp, k, capacity_factor));
  HostAllReduce reduce(tp);
  std::vector<std::thread> threads;
  for (int k = 0; k < tp; ++k) {
    shards[k]->layer.connect_all_reduce(
        [&reduce, k](Tensor& values, bool) { reduce(k, values.data(), values.size()); });
    threads.emplace_back([&, k] { shards[k]->run(x, dy); });
  }
  for (std::thread& thread : threads) thread.join();

  MoeLayer& full = *whole.layer.experts();
  const int64_t width = kFfn / tp;
  for (int k = 0; k < tp; ++k) {
    SCOPED_TRACE("shard " + std::to_string(k));
    BlockRun& shard = *shards[k];
    expect_close(shard.y, whole.y, "y");
    expect_close(shard.dx, whole.dx, "dx");
    EXPECT_EQ(shard.routing.routed, whole.routing.routed);
    EXPECT_EQ(shard.routing.dropped, whole.routing.dropped);
    MoeLayer& part = *shard.layer.experts();
    expect_close(part.gate_grad(), full.gate_grad(), "gate gradient");
    for (int64_t e = 0; e < kExperts; ++e) {
      MoeLayer::Expert& mine = part.expert(e);
      MoeLayer::Expert& all = full.expert(e);
      const int64_t first = k * width;
      expect_close(mine.w1, copy_slice(all.w1, {0, kDim, first, width}), "W1");
      expect_close(mine.w1_grad, copy_slice(all.w1_grad, {0, kDim, first, width}), "W1 gradient");
      expect_close(mine.b1_grad, copy_slice(all.b1_grad, {0, 1, first, width}), "b1 gradient");
      expect_close(mine.w2_grad, copy_slice(all.w2_grad, {first, width, 0, kDim}), "W2 gradient");
      expect_close(mine.b2_grad, all.b2_grad, "b2 gradient");
    }
  }
  // The attention half's gradients, sliced as the dense block's.
  GptBlockTensors& whole_grads = whole.layer.block().gradients();
  for (int k = 0; k < tp; ++k) {
    GptBlock& part = shards[k]->layer.block();
    GptBlockTensors expected =
        slice_block_tensors(whole_grads, whole.layer.block().config(), part.shard());
    const std::vector<Tensor*> got = part.gradients().list();
    const std::vector<Tensor*> want = expected.list();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_close(*got[i], *want[i], "block tensor " + std::to_string(i));
  }
}

// With dropout the shards draw their positions' part of the whole block's masks.
void expect_sequence_parallel_shards_match_whole(int tp, double capacity_factor, bool expect_drops,
                                                 float dropout = 0.0f) {
  SCOPED_TRACE("sequence parallel tp " + std::to_string(tp) + ", capacity_factor " +
               std::to_string(capacity_factor) + ", dropout " + std::to_string(dropout));
  const Tensor x = random_tensor(kBatch, kSeq * kDim, 43);
  const Tensor dy = random_tensor(kBatch, kSeq * kDim, 44);
  BlockRun whole(1, 0, capacity_factor, false, dropout);
  whole.run(x, dy);
  EXPECT_EQ(whole.routing.dropped_total() > 0, expect_drops);

  std::vector<std::unique_ptr<BlockRun>> shards;
  for (int k = 0; k < tp; ++k)
    shards.push_back(std::make_unique<BlockRun>(tp, k, capacity_factor, true, dropout));
  std::vector<Layer*> layers;
  for (auto& shard : shards) layers.push_back(&shard->layer);
  testing::run_sequence_shards(layers, [&](int k) {
    shards[k]->run(shard_positions(x, kSeq, kDim, tp, k), shard_positions(dy, kSeq, kDim, tp, k));
  });

  MoeLayer& full = *whole.layer.experts();
  const int64_t width = kFfn / tp;
  Tensor gate_sum(kDim, kExperts);
  for (int k = 0; k < tp; ++k) {
    SCOPED_TRACE("shard " + std::to_string(k));
    BlockRun& shard = *shards[k];
    expect_close(shard.y, shard_positions(whole.y, kSeq, kDim, tp, k), "y");
    expect_close(shard.dx, shard_positions(whole.dx, kSeq, kDim, tp, k), "dx");
    EXPECT_EQ(shard.routing.routed, whole.routing.routed);
    EXPECT_EQ(shard.routing.dropped, whole.routing.dropped);
    MoeLayer& part = *shard.layer.experts();
    gate_sum.add(part.gate_grad());
    for (int64_t e = 0; e < kExperts; ++e) {
      MoeLayer::Expert& mine = part.expert(e);
      MoeLayer::Expert& all = full.expert(e);
      const int64_t first = k * width;
      expect_close(mine.w1_grad, copy_slice(all.w1_grad, {0, kDim, first, width}), "W1 gradient");
      expect_close(mine.b1_grad, copy_slice(all.b1_grad, {0, 1, first, width}), "b1 gradient");
      expect_close(mine.w2_grad, copy_slice(all.w2_grad, {first, width, 0, kDim}), "W2 gradient");
      expect_close(mine.b2_grad, all.b2_grad, "b2 gradient");
    }
  }
  // The gate's and the norms' gradients are partial on each shard: the
  // step's tensor-parallel all-reduce of sequence_partial_grads sums them.
  expect_close(gate_sum, full.gate_grad(), "gate gradient summed over the shards");
  GptBlockTensors& whole_grads = whole.layer.block().gradients();
  const GptBlockConfig& config = whole.layer.block().config();
  GptBlockTensors norms = slice_block_tensors(whole_grads, config, {});
  for (Tensor* t : {&norms.norm1_gain, &norms.norm1_bias, &norms.norm2_gain, &norms.norm2_bias}) t->set_zero();
  for (int k = 0; k < tp; ++k) {
    EXPECT_EQ(shards[k]->layer.sequence_partial_grads().size(), 5u) << "the two norms' gains and biases, the gate";
    GptBlockTensors& grads = shards[k]->layer.block().gradients();
    GptBlockTensors expected = slice_block_tensors(whole_grads, config, {tp, k});
    for (auto member : {&GptBlockTensors::qkv_weight, &GptBlockTensors::qkv_bias, &GptBlockTensors::proj_weight,
                        &GptBlockTensors::proj_bias})
      expect_close(grads.*member, expected.*member, "attention gradient");
    for (auto member : {&GptBlockTensors::norm1_gain, &GptBlockTensors::norm1_bias, &GptBlockTensors::norm2_gain,
                        &GptBlockTensors::norm2_bias})
      (norms.*member).add(grads.*member);
  }
  for (auto member : {&GptBlockTensors::norm1_gain, &GptBlockTensors::norm1_bias, &GptBlockTensors::norm2_gain,
                      &GptBlockTensors::norm2_bias})
    expect_close(norms.*member, whole_grads.*member, "norm gradient summed over the shards");
}

TEST(MoeBlockTensorParallel, ShardsReproduceTheWholeBlockWithoutDrops) {
  expect_shards_match_whole(2, 4.0, false);
}

TEST(MoeBlockTensorParallel, ShardsReproduceTheWholeBlockWithDroppedTokens) {
  expect_shards_match_whole(2, 0.5, true);
}

TEST(MoeBlockTensorParallel, SequenceParallelShardsReproduceTheWholeBlockWithoutDrops) {
  expect_sequence_parallel_shards_match_whole(2, 4.0, false);
}

TEST(MoeBlockTensorParallel, SequenceParallelShardsReproduceTheWholeBlockWithDroppedTokens) {
  expect_sequence_parallel_shards_match_whole(2, 0.5, true);
}

TEST(MoeBlockTensorParallel, SequenceParallelShardsReproduceTheWholeBlockWithDropout) {
  expect_sequence_parallel_shards_match_whole(2, 4.0, false, 0.3f);
}

TEST(MoeBlockTensorParallel, RefusesExpertsSplitOtherwiseThanTheBlock) {
  const BlockExperts experts{{kSeq, kDim, kExperts, 1, kFfn, 1.0}, 0.1, ExpertShard{1, 0, 2, 0}};
  EXPECT_THROW(TransformerBlockLayer(0, experts_config(), BlockShard{2, 0, true}, kSeq, nullptr, &experts),
               std::invalid_argument);
  const BlockExperts along_sequence{{kSeq, kDim, kExperts, 1, kFfn, 1.0}, 0.1, ExpertShard{1, 0, 2, 0, true}};
  EXPECT_THROW(TransformerBlockLayer(0, experts_config(), BlockShard{2, 0, false}, kSeq, nullptr, &along_sequence),
               std::invalid_argument);
  EXPECT_THROW(TransformerBlockLayer(0, experts_config(), BlockShard{2, 1, false}, kSeq, nullptr, &experts),
               std::invalid_argument);
  const BlockExperts odd{{kSeq, kDim, kExperts, 1, 5, 1.0}, 0.1, ExpertShard{1, 0, 2, 0}};
  GptBlockConfig config = experts_config();
  config.ffn_hidden = 5;
  EXPECT_THROW(TransformerBlockLayer(0, config, BlockShard{2, 0, false}, kSeq, nullptr, &odd),
               std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
