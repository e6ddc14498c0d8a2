// The Mixture-of-Experts layer: routing and its dropped assignments against a
// count by hand, the auxiliary loss against its formula, and every gradient
// (input, gate, experts; top-1 and top-2; with and without drops) against
// central differences.
#include "core/nn/moe_layer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/nn/moe_routing.h"
#include "nn_test_helpers.h"

namespace pipelab {
namespace {

using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

// Random softmax rows [tokens, experts].
std::vector<float> random_probabilities(int64_t tokens, int64_t experts, uint32_t seed) {
  std::vector<float> p(static_cast<size_t>(tokens * experts));
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  for (float& v : p) v = normal(engine);
  softmax_rows(p.data(), tokens, experts);
  return p;
}

// The experts of a token in order of probability (most probable first).
std::vector<int> ranked(const float* p, int experts) {
  std::vector<int> order(static_cast<size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [p](int a, int b) { return p[a] > p[b]; });
  return order;
}

TEST(MoeRouting, CapacityIsTheCeilingOfFactorTimesTokensTimesTopKOverExperts) {
  EXPECT_EQ(expert_capacity(1.25, 64, 1, 4), 20);  // 1.25 x 64 / 4
  EXPECT_EQ(expert_capacity(1.0, 10, 2, 4), 5);
  EXPECT_EQ(expert_capacity(1.0, 10, 1, 4), 3);   // ceil(2.5)
  EXPECT_EQ(expert_capacity(0.01, 10, 1, 4), 1);  // at least one slot
}

TEST(MoeRouting, DroppedCountsMatchCountingChoicesByRank) {
  for (const int top_k : {1, 2}) {
    for (const double factor : {0.5, 1.0, 2.0}) {
      const int tokens = 37;
      const int experts = 4;
      const std::vector<float> p = random_probabilities(tokens, experts, 11 + top_k);
      const int64_t capacity = expert_capacity(factor, tokens, top_k, experts);
      const MoeRouting routing = route_tokens(p.data(), tokens, experts, top_k, capacity);
      // By hand: count the first choices per expert, then the second choices,
      // which get what the first left.
      std::vector<int64_t> left(experts, capacity), routed(experts, 0), dropped(experts, 0);
      for (int rank = 0; rank < top_k; ++rank) {
        std::vector<int64_t> wanted(experts, 0);
        for (int t = 0; t < tokens; ++t) ++wanted[ranked(&p[t * experts], experts)[rank]];
        for (int e = 0; e < experts; ++e) {
          routed[e] += wanted[e];
          const int64_t kept = std::min(wanted[e], left[e]);
          dropped[e] += wanted[e] - kept;
          left[e] -= kept;
        }
      }
      EXPECT_EQ(routing.routed, routed) << "top_k " << top_k << ", factor " << factor;
      EXPECT_EQ(routing.dropped, dropped) << "top_k " << top_k << ", factor " << factor;
      if (factor == 0.5) {
        EXPECT_GT(routing.dropped_total(), 0);
      }
      // Every kept slot is inside its expert's capacity and used once.
      std::vector<int> used(static_cast<size_t>(experts * capacity), 0);
      for (size_t a = 0; a < routing.slot.size(); ++a) {
        if (routing.slot[a] < 0) continue;
        EXPECT_EQ(routing.slot[a] / capacity, routing.expert[a]);
        ++used[static_cast<size_t>(routing.slot[a])];
      }
      for (int u : used) EXPECT_LE(u, 1);
    }
  }
}

TEST(MoeRouting, TopTwoRenormalisesItsTwoGateValues) {
  const std::vector<float> p = random_probabilities(9, 5, 3);
  const MoeRouting routing = route_tokens(p.data(), 9, 5, 2, 100);
  for (int t = 0; t < 9; ++t) {
    const std::vector<int> order = ranked(&p[t * 5], 5);
    EXPECT_EQ(routing.expert[2 * t], order[0]);
    EXPECT_EQ(routing.expert[2 * t + 1], order[1]);
    const float sum = p[t * 5 + order[0]] + p[t * 5 + order[1]];
    EXPECT_NEAR(routing.weight[2 * t], p[t * 5 + order[0]] / sum, 1e-6);
    EXPECT_NEAR(routing.weight[2 * t] + routing.weight[2 * t + 1], 1.0, 1e-6);
  }
  // Top-1 keeps the gate probability itself (Switch).
  const MoeRouting switch_routing = route_tokens(p.data(), 9, 5, 1, 100);
  for (int t = 0; t < 9; ++t)
    EXPECT_EQ(switch_routing.weight[t], p[t * 5 + ranked(&p[t * 5], 5)[0]]);
}

TEST(MoeRouting, AuxiliaryLossIsExpertsTimesSumOfFractionTimesMeanProbability) {
  const int tokens = 20;
  const int experts = 4;
  const std::vector<float> p = random_probabilities(tokens, experts, 5);
  const MoeRouting routing = route_tokens(p.data(), tokens, experts, 2, 3);
  double expected = 0;
  for (int e = 0; e < experts; ++e) {
    double first = 0, mean = 0;
    for (int t = 0; t < tokens; ++t) {
      first += ranked(&p[t * experts], experts)[0] == e ? 1 : 0;
      mean += p[t * experts + e];
    }
    expected += (first / tokens) * (mean / tokens);
  }
  EXPECT_NEAR(routing.aux_loss, experts * expected, 1e-9);
  // A uniform gate sends every token to expert 0 (ties go to the lower index):
  // f = (1, 0, ...), P = 1/E, so aux = 1; a perfectly balanced router also gives 1.
  const std::vector<float> uniform(static_cast<size_t>(tokens * experts), 1.0f / experts);
  EXPECT_NEAR(route_tokens(uniform.data(), tokens, experts, 1, 100).aux_loss, 1.0, 1e-6);
}

// A moe layer of `tokens` positions of width 3 with 4 experts of ffn 5,
// initialised from a seed, and its input.
struct MoeCase {
  MoeShape shape;
  MoeLayer layer;
  Tensor x;
  Tensor w;  // the loss is sum(y * w) + the auxiliary loss
  double aux = 0;

  MoeCase(int64_t top_k, double capacity_factor, int64_t tokens = 2, int64_t batch = 4)
      : shape{tokens, 3, 4, top_k, 5, capacity_factor},
        layer(0, shape, 0.1, ExpertShard{}, nullptr),
        x(random_tensor(batch, tokens * 3, 21)),
        w(random_tensor(batch, tokens * 3, 22)) {
    layer.init(7);
    // Larger gate weights so choices are clear and finite differences do not flip them.
    for (int64_t i = 0; i < layer.gate().size(); ++i) layer.gate().data()[i] *= 6.0f;
    BasicLayer<Tensor, DeviceAllocator*>::ExpertConnection connection;
    connection.report = [this](const ForwardInfo&, const MoeRouting&, double aux_loss) {
      aux = aux_loss;
    };
    layer.connect_experts(connection);
  }
  double loss() {
    const Tensor y = layer.forward(x, ForwardInfo{});
    return weighted_sum(y, w) + aux;
  }
  int64_t dropped() {
    int64_t total = 0;
    BasicLayer<Tensor, DeviceAllocator*>::ExpertConnection connection;
    connection.report = [&](const ForwardInfo&, const MoeRouting& routing, double) {
      total = routing.dropped_total();
    };
    layer.connect_experts(connection);
    layer.forward(x, ForwardInfo{});
    return total;
  }
};

void check_gradients(int64_t top_k, double capacity_factor, bool expect_drops) {
  MoeCase c(top_k, capacity_factor);
  SCOPED_TRACE("top_k " + std::to_string(top_k) + ", capacity_factor " +
               std::to_string(capacity_factor));
  if (expect_drops) {
    EXPECT_GT(c.dropped(), 0);
  } else {
    EXPECT_EQ(c.dropped(), 0);
  }
  MoeCase fresh(top_k, capacity_factor);
  std::unique_ptr<LayerState> state;
  fresh.layer.forward_keeping(fresh.x, ForwardInfo{}, state);
  fresh.layer.zero_grad();
  const Tensor dx = fresh.layer.backward_input_with(fresh.x, fresh.w, ForwardInfo{}, state.get());
  fresh.layer.backward_weight_with(fresh.x, fresh.w, state.get());
  const auto loss = [&fresh] { return fresh.loss(); };
  const double step = 1e-3;
  expect_gradient_matches(fresh.x, loss, dx, "dx", step);
  expect_gradient_matches(fresh.layer.gate(), loss, fresh.layer.gate_grad(), "gate", step);
  for (int64_t e = 0; e < fresh.layer.local_experts(); ++e) {
    MoeLayer::Expert& expert = fresh.layer.expert(e);
    const std::string name = "expert " + std::to_string(e);
    expect_gradient_matches(expert.w1, loss, expert.w1_grad, name + " W1", step);
    expect_gradient_matches(expert.b1, loss, expert.b1_grad, name + " b1", step);
    expect_gradient_matches(expert.w2, loss, expert.w2_grad, name + " W2", step);
    expect_gradient_matches(expert.b2, loss, expert.b2_grad, name + " b2", step);
  }
}

TEST(MoeLayer, SwitchTopOneGradientsMatchFiniteDifferences) { check_gradients(1, 4.0, false); }
TEST(MoeLayer, GShardTopTwoGradientsMatchFiniteDifferences) { check_gradients(2, 4.0, false); }
TEST(MoeLayer, GradientsWithDroppedTokensMatchFiniteDifferences) {
  check_gradients(1, 0.5, true);
  check_gradients(2, 0.5, true);
}

TEST(MoeLayer, ADroppedTokenPassesThroughUnchanged) {
  // Capacity 1 per expert for 8 tokens, top-1: at least 4 tokens are dropped,
  // and their output rows are their input rows.
  MoeCase c(1, 0.01, 1, 8);
  MoeRouting seen;
  BasicLayer<Tensor, DeviceAllocator*>::ExpertConnection connection;
  connection.report = [&](const ForwardInfo&, const MoeRouting& routing, double) {
    seen = routing;
  };
  c.layer.connect_experts(connection);
  const Tensor y = c.layer.forward(c.x, ForwardInfo{});
  ASSERT_GE(seen.dropped_total(), 4);
  for (int64_t t = 0; t < 8; ++t) {
    const bool dropped = seen.slot[static_cast<size_t>(t)] < 0;
    for (int64_t i = 0; i < 3; ++i) {
      if (dropped) {
        EXPECT_EQ(y.at(t, i), c.x.at(t, i));
      } else {
        EXPECT_NE(y.at(t, i), c.x.at(t, i));
      }
    }
  }
}

TEST(MoeLayer, InitialWeightsDependOnTheGlobalExpertOnly) {
  const MoeShape shape{1, 3, 4, 1, 5, 1.0};
  MoeLayer whole(2, shape, 0.0, ExpertShard{}, nullptr);
  MoeLayer second_half(2, shape, 0.0, ExpertShard{2, 1}, nullptr);
  whole.init(9);
  second_half.init(9);
  ASSERT_EQ(second_half.local_experts(), 2);
  EXPECT_TRUE(testing::bitwise_equal(whole.gate(), second_half.gate()));
  EXPECT_TRUE(testing::bitwise_equal(whole.expert(2).w1, second_half.expert(0).w1));
  EXPECT_TRUE(testing::bitwise_equal(whole.expert(3).b2, second_half.expert(1).b2));
  EXPECT_FALSE(testing::bitwise_equal(whole.expert(0).w1, whole.expert(1).w1));
  EXPECT_THROW(MoeLayer(2, shape, 0.0, ExpertShard{3, 0}, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace pipelab
