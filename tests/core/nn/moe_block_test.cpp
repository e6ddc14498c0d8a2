// A Transformer block whose MLP is a mixture of experts (Switch, GShard):
// every gradient (input, attention, norms, gate, experts; top-1 and top-2;
// with dropped tokens and with dropout) against central differences, the
// auxiliary loss and dropped counts as the moe layer's on the same tokens,
// and the refusals.
#include <gtest/gtest.h>

#include "core/nn/transformer_block_layer.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

constexpr int64_t kSeq = 3;
constexpr int64_t kDim = 4;
constexpr int64_t kFfn = 5;
constexpr int64_t kExperts = 4;

GptBlockConfig experts_config(float dropout) {
  GptBlockConfig config;
  config.dim = kDim;
  config.heads = 2;
  config.ffn_hidden = kFfn;
  config.dense_mlp = false;
  config.dropout = dropout;
  return config;
}

// A block with experts over `batch` sequences and a loss sum(y * w) + aux.
struct MoeBlockCase {
  BlockExperts experts;
  TransformerBlockLayer layer;
  Tensor x;
  Tensor w;
  ForwardInfo info;  // training: dropout and the routing report are on
  double aux = 0;
  MoeRouting routing;

  MoeBlockCase(int64_t top_k, double capacity_factor, float dropout = 0.0f, int64_t batch = 3)
      : experts{{kSeq, kDim, kExperts, top_k, kFfn, capacity_factor}, 0.1, {}},
        layer(1, experts_config(dropout), BlockShard{}, kSeq, nullptr, &experts),
        x(random_tensor(batch, kSeq * kDim, 31)),
        w(random_tensor(batch, kSeq * kDim, 32)) {
    layer.init(5);
    // Larger gate weights so choices are clear and finite differences do not flip them.
    Tensor& gate = layer.experts()->gate();
    for (int64_t i = 0; i < gate.size(); ++i) gate.data()[i] *= 6.0f;
    BasicLayer<Tensor, DeviceAllocator*>::ExpertConnection connection;
    connection.report = [this](const ForwardInfo&, const MoeRouting& r, double aux_loss) {
      aux = aux_loss;
      routing = r;
    };
    layer.connect_experts(connection);
  }
  double loss() {
    const Tensor y = layer.forward(x, info);
    return weighted_sum(y, w) + aux;
  }
};

void check_gradients(int64_t top_k, double capacity_factor, float dropout, bool expect_drops) {
  SCOPED_TRACE("top_k " + std::to_string(top_k) + ", capacity_factor " +
               std::to_string(capacity_factor) + ", dropout " + std::to_string(dropout));
  MoeBlockCase c(top_k, capacity_factor, dropout);
  std::unique_ptr<LayerState> state;
  c.layer.forward_keeping(c.x, c.info, state);
  if (expect_drops) {
    EXPECT_GT(c.routing.dropped_total(), 0);
  } else {
    EXPECT_EQ(c.routing.dropped_total(), 0);
  }
  c.layer.zero_grad();
  const Tensor dx = c.layer.backward_input_with(c.x, c.w, c.info, state.get());
  c.layer.backward_weight_with(c.x, c.w, state.get());
  const auto loss = [&c] { return c.loss(); };
  const double step = 1e-3;
  expect_gradient_matches(c.x, loss, dx, "dx", step);
  const std::vector<Tensor*> params = c.layer.params();
  const std::vector<Tensor*> grads = c.layer.grads();
  ASSERT_EQ(params.size(), grads.size());
  for (size_t i = 0; i < params.size(); ++i)
    expect_gradient_matches(*params[i], loss, *grads[i], "parameter " + std::to_string(i), step);
}

TEST(MoeBlock, SwitchTopOneGradientsMatchFiniteDifferences) {
  check_gradients(1, 4.0, 0.0f, false);
}
TEST(MoeBlock, GShardTopTwoGradientsMatchFiniteDifferences) {
  check_gradients(2, 4.0, 0.0f, false);
}
TEST(MoeBlock, GradientsWithDroppedTokensMatchFiniteDifferences) {
  check_gradients(1, 0.5, 0.0f, true);
  check_gradients(2, 0.5, 0.0f, true);
}
TEST(MoeBlock, GradientsWithDropoutMatchFiniteDifferences) { check_gradients(2, 4.0, 0.3f, false); }

TEST(MoeBlock, HoldsTheAttentionHalfAndTheExpertsButNoDenseMlp) {
  MoeBlockCase c(1, 1.0);
  EXPECT_TRUE(c.layer.block().weights().ffn1_weight.empty());
  EXPECT_TRUE(c.layer.block().weights().ffn2_weight.empty());
  EXPECT_EQ(c.layer.experts()->local_experts(), kExperts);
  // Only the experts' gradients are the expert-parallel ones; the gate's is not.
  EXPECT_EQ(c.layer.expert_grads().size(), static_cast<size_t>(4 * kExperts));
  EXPECT_EQ(c.layer.grads().size(), c.layer.block().gradients().list().size() + 1 + 4 * kExperts);
}

TEST(MoeBlock, AuxLossAndDropsAreTheMoeLayersOnNorm2sOutput) {
  // The block's MLP routes norm2(h): a moe layer given that output (with the
  // same seed and layer index, so the same gate) routes the same way.
  for (const int64_t top_k : {1, 2}) {
    MoeBlockCase c(top_k, 0.5);
    std::unique_ptr<LayerState> state;
    c.layer.forward_keeping(c.x, c.info, state);
    const GptBlockCache& cache = static_cast<GptBlockState&>(*state).cache;
    MoeLayer alone(1, c.experts.shape, 0.1, ExpertShard{}, nullptr);
    alone.init(5);
    alone.gate().copy_from(c.layer.experts()->gate());
    MoeRouting seen;
    double aux = -1;
    BasicLayer<Tensor, DeviceAllocator*>::ExpertConnection connection;
    connection.report = [&](const ForwardInfo&, const MoeRouting& r, double aux_loss) {
      seen = r;
      aux = aux_loss;
    };
    alone.connect_experts(connection);
    const Tensor tokens = Tensor::view(cache.norm2_out, c.x.rows(), kSeq * kDim);
    alone.forward(tokens, c.info);
    EXPECT_EQ(seen.routed, c.routing.routed) << "top_k " << top_k;
    EXPECT_EQ(seen.dropped, c.routing.dropped) << "top_k " << top_k;
    EXPECT_GT(c.routing.dropped_total(), 0);
    EXPECT_DOUBLE_EQ(aux, c.aux);
    EXPECT_GT(c.aux, 0.0);
  }
}

TEST(MoeBlock, RefusesExpertsUnsplitInASplitBlockAndADenseConfig) {
  const BlockExperts experts{{kSeq, kDim, kExperts, 1, kFfn, 1.0}, 0.1, {}};
  GptBlockConfig split = experts_config(0.0f);
  split.ffn_hidden = 6;  // tp divides it; the experts' shard (tp 1) does not match the block's
  EXPECT_THROW(TransformerBlockLayer(0, split, BlockShard{2, 0, false}, kSeq, nullptr, &experts),
               std::invalid_argument);
  GptBlockConfig dense = experts_config(0.0f);
  dense.dense_mlp = true;
  EXPECT_THROW(TransformerBlockLayer(0, dense, BlockShard{}, kSeq, nullptr, &experts),
               std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
