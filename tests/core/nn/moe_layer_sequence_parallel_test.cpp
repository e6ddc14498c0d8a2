// A standalone moe layer under sequence parallelism (moe_layer.h): tp shards
// run in lockstep threads, each given its positions of x and dy, the gathers
// on the host. Each shard's y and dx are its positions of the whole layer's,
// every shard routes and drops as the whole layer and reports its aux loss,
// and every gradient is the whole layer's on every shard (none is summed).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "core/nn/moe_layer.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_close;
using testing::random_tensor;
using testing::shard_positions;

constexpr int64_t kSeq = 4;
constexpr int64_t kDim = 4;
constexpr int64_t kFfn = 6;
constexpr int64_t kExperts = 4;
constexpr int64_t kBatch = 3;

// One shard's (or the whole layer's) run: forward, BI and BW on x and dy.
struct LayerRun {
  MoeLayer layer;
  MoeRouting routing;
  double aux_loss = 0;
  Tensor y, dx;

  LayerRun(double capacity_factor, MoeSequenceSlice sequence)
      : layer(1, {kSeq, kDim, kExperts, 2, kFfn, capacity_factor}, 0.1, ExpertShard{}, nullptr,
              sequence) {
    layer.init(5);
    BasicLayer<Tensor, DeviceAllocator*>::ExpertConnection connection;
    connection.report = [this](const ForwardInfo&, const MoeRouting& r, double aux) {
      routing = r;
      aux_loss = aux;
    };
    layer.connect_experts(connection);
  }
  void run(const Tensor& x, const Tensor& dy) {
    testing::run_forward_backward(layer, x, dy, y, dx);
  }
};

void expect_shards_match_whole(int tp, double capacity_factor, bool expect_drops) {
  SCOPED_TRACE("tp " + std::to_string(tp) + ", capacity_factor " + std::to_string(capacity_factor));
  const Tensor x = random_tensor(kBatch, kSeq * kDim, 51);
  const Tensor dy = random_tensor(kBatch, kSeq * kDim, 52);
  LayerRun whole(capacity_factor, {});
  whole.run(x, dy);
  EXPECT_EQ(whole.routing.dropped_total() > 0, expect_drops);

  std::vector<std::unique_ptr<LayerRun>> shards;
  for (int k = 0; k < tp; ++k)
    shards.push_back(std::make_unique<LayerRun>(capacity_factor, MoeSequenceSlice{tp, k}));
  std::vector<Layer*> layers;
  for (auto& shard : shards) layers.push_back(&shard->layer);
  testing::run_sequence_shards(layers, [&](int k) {
    shards[k]->run(shard_positions(x, kSeq, kDim, tp, k), shard_positions(dy, kSeq, kDim, tp, k));
  });

  const std::vector<Tensor*> whole_grads = whole.layer.grads();
  for (int k = 0; k < tp; ++k) {
    SCOPED_TRACE("shard " + std::to_string(k));
    LayerRun& shard = *shards[k];
    EXPECT_EQ(shard.layer.in_features(), kSeq / tp * kDim);
    expect_close(shard.y, shard_positions(whole.y, kSeq, kDim, tp, k), "y");
    expect_close(shard.dx, shard_positions(whole.dx, kSeq, kDim, tp, k), "dx");
    EXPECT_EQ(shard.routing.routed, whole.routing.routed);
    EXPECT_EQ(shard.routing.dropped, whole.routing.dropped);
    EXPECT_EQ(shard.routing.slot, whole.routing.slot);
    EXPECT_DOUBLE_EQ(shard.aux_loss, whole.aux_loss);
    EXPECT_TRUE(shard.layer.sequence_partial_grads().empty());
    const std::vector<Tensor*> grads = shard.layer.grads();
    ASSERT_EQ(grads.size(), whole_grads.size());
    for (size_t i = 0; i < grads.size(); ++i)
      expect_close(*grads[i], *whole_grads[i], "gradient " + std::to_string(i));
  }
}

TEST(MoeLayerSequenceParallel, ShardsGiveTheWholeLayersPositionsAndGradients) {
  expect_shards_match_whole(2, 4.0, false);
  expect_shards_match_whole(4, 4.0, false);
}

TEST(MoeLayerSequenceParallel, ShardsDropTheWholeLayersTokens) {
  expect_shards_match_whole(2, 0.5, true);
  expect_shards_match_whole(4, 0.5, true);
}

TEST(MoeLayerSequenceParallel, RefusesASequenceTpDoesNotDivide) {
  try {
    MoeLayer layer(1, {kSeq, kDim, kExperts, 2, kFfn, 1.0}, 0.1, ExpertShard{}, nullptr, {3, 0});
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tp = 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pipelab
