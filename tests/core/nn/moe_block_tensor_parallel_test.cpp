// A Transformer block with experts split over tensor-parallel shards (each
// expert's FFN as the dense MLP, moe_layer.h) run in lockstep threads, the
// all-reduce summing on the host: the output, the input gradient, the routing
// and every gradient (the shard's slice of the whole block's) match tp = 1.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "core/nn/tensor_parallel.h"
#include "core/nn/transformer_block_layer.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::HostAllReduce;
using testing::random_tensor;

constexpr int64_t kSeq = 4;
constexpr int64_t kDim = 4;
constexpr int64_t kFfn = 6;
constexpr int64_t kExperts = 4;
constexpr int64_t kBatch = 3;

GptBlockConfig experts_config() {
  GptBlockConfig config;
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

  BlockRun(int tp, int shard, double capacity_factor)
      : experts{{kSeq, kDim, kExperts, 2, kFfn, capacity_factor}, 0.1, ExpertShard{1, 0, tp, shard}},
        layer(1, experts_config(), BlockShard{tp, shard, false}, kSeq, nullptr, &experts) {
    layer.init(5);
    BasicLayer<Tensor, DeviceAllocator*>::ExpertConnection connection;
    connection.report = [this](const ForwardInfo&, const MoeRouting& r, double) { routing = r; };
    layer.connect_experts(connection);
  }
  void run(const Tensor& x, const Tensor& dy) {
    layer.zero_grad();
    std::unique_ptr<LayerState> state;
    y = layer.forward_keeping(x, ForwardInfo{}, state);
    dx = layer.backward_input_with(x, dy, ForwardInfo{}, state.get());
    layer.backward_weight_with(x, dy, state.get());
  }
};

void expect_close(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_TRUE(actual.same_shape(expected)) << what;
  for (int64_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual.data()[i], expected.data()[i], 1e-5 * (1 + std::fabs(expected.data()[i])))
        << what << " element " << i;
}

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

TEST(MoeBlockTensorParallel, ShardsReproduceTheWholeBlockWithoutDrops) {
  expect_shards_match_whole(2, 4.0, false);
}

TEST(MoeBlockTensorParallel, ShardsReproduceTheWholeBlockWithDroppedTokens) {
  expect_shards_match_whole(2, 0.5, true);
}

TEST(MoeBlockTensorParallel, RefusesSequenceParallelismAndAMismatchedExpertShard) {
  const BlockExperts experts{{kSeq, kDim, kExperts, 1, kFfn, 1.0}, 0.1, ExpertShard{1, 0, 2, 0}};
  EXPECT_THROW(TransformerBlockLayer(0, experts_config(), BlockShard{2, 0, true}, kSeq, nullptr, &experts),
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
