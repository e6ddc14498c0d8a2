// Host-only checks (no GPU needed) of kernels/moe_math.h: the GPU moe layer's
// steps (gate, host routing, dispatch, experts, combine, and the backward's
// slot, weight and token gradients) replayed on the host with the formulas the
// kernels call and core's GEMMs give the CPU layer's output, input gradient
// and gate gradient bit for bit, for top-1 and top-2 with and without drops;
// without the residual they give MoeLayer::mix's (a block with experts' MLP).
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "core/nn/activations.h"
#include "core/nn/linear.h"
#include "core/nn/moe_layer.h"
#include "core/nn/moe_routing.h"
#include "gpu/kernels/moe_math.h"
#include "tests/gpu/gpu_test_support.h"

namespace pipelab::gpu {
namespace {

using testing::random_tensor;

// Rows [first, first + count) of `t` as a [count, cols] view.
Tensor rows_of(Tensor& t, int64_t first, int64_t count) {
  Tensor rows = Tensor::borrow(t.row(first), count * t.cols());
  rows.reshape(count, t.cols());
  return rows;
}

struct MoeCase {
  int64_t top_k;
  double capacity_factor;
  bool drops;
};

class MoeMath : public ::testing::TestWithParam<MoeCase> {};

TEST_P(MoeMath, TheKernelsStepsGiveTheCpuLayersValues) {
  const MoeCase c = GetParam();
  MoeShape shape;
  shape.dim = 12;
  shape.experts = 4;
  shape.top_k = c.top_k;
  shape.ffn = 10;
  shape.capacity_factor = c.capacity_factor;
  const int64_t tokens = 29;
  const int64_t h = shape.dim;
  const int64_t f = shape.ffn;
  const double aux_weight = 0.1;
  MoeLayer layer(1, shape, aux_weight, ExpertShard{}, nullptr);
  layer.init(5);
  const Tensor x = random_tensor(tokens, h, 1, 2.0);
  const Tensor dy = random_tensor(tokens, h, 2);

  // The CPU layer.
  ForwardInfo info;
  std::unique_ptr<LayerState> state;
  const Tensor y_cpu = layer.forward_keeping(x, info, state);
  const Tensor dx_cpu = layer.backward_input_with(x, dy, info, state.get());

  // The GPU layer's steps, on the host.
  Tensor probabilities(tokens, shape.experts);
  linear_forward(x, layer.gate(), nullptr, probabilities);
  softmax_rows(probabilities.data(), tokens, shape.experts);
  const int64_t capacity = expert_capacity(shape.capacity_factor, tokens, shape.top_k, shape.experts);
  const MoeRouting routing = route_tokens(probabilities.data(), tokens, shape.experts, shape.top_k, capacity);
  EXPECT_EQ(routing.dropped_total() > 0, c.drops) << routing.dropped_total() << " dropped";
  const int64_t assignments = tokens * shape.top_k;
  const int64_t slots = shape.experts * capacity;
  std::vector<int64_t> slot_assignment(static_cast<size_t>(slots));
  moe_math::fill_slot_assignments(routing.slot.data(), assignments, slot_assignment.data(), slots);
  for (int64_t s = 0; s < slots; ++s) {
    if (slot_assignment[s] >= 0) {
      EXPECT_EQ(routing.slot[slot_assignment[s]], s);
    }
  }

  Tensor expert_input(slots, h);
  for (int64_t s = 0; s < slots; ++s)
    for (int64_t col = 0; col < h; ++col)
      expert_input.row(s)[col] =
          moe_math::dispatch_value(x.data(), slot_assignment.data(), shape.top_k, h, s, col);
  Tensor hidden(slots, f), activated(slots, f), expert_output(slots, h);
  for (int64_t e = 0; e < shape.experts; ++e) {
    Tensor hidden_rows = rows_of(hidden, e * capacity, capacity);
    Tensor output_rows = rows_of(expert_output, e * capacity, capacity);
    linear_forward(rows_of(expert_input, e * capacity, capacity), layer.expert(e).w1, &layer.expert(e).b1,
                   hidden_rows);
    gelu_forward(hidden_rows.data(), rows_of(activated, e * capacity, capacity).data(), capacity * f);
    linear_forward(rows_of(activated, e * capacity, capacity), layer.expert(e).w2, &layer.expert(e).b2,
                   output_rows);
  }
  std::vector<float> y(static_cast<size_t>(tokens * h));
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t col = 0; col < h; ++col)
      y[t * h + col] = moe_math::combine_value(x.data(), expert_output.data(), routing.slot.data(),
                                               routing.weight.data(), shape.top_k, h, t, col);
  EXPECT_EQ(y, y_cpu.to_vector());

  // Backward.
  Tensor output_grad(slots, h);
  for (int64_t s = 0; s < slots; ++s)
    for (int64_t col = 0; col < h; ++col)
      output_grad.row(s)[col] = moe_math::slot_gradient(dy.data(), slot_assignment.data(),
                                                        routing.weight.data(), shape.top_k, h, s, col);
  std::vector<float> weight_grad(static_cast<size_t>(assignments));
  for (int64_t a = 0; a < assignments; ++a)
    weight_grad[a] = moe_math::weight_gradient(dy.data(), expert_output.data(), routing.slot.data(),
                                               shape.top_k, h, a);
  Tensor input_grad(slots, h), activated_grad(capacity, f), hidden_grad(capacity, f);
  for (int64_t e = 0; e < shape.experts; ++e) {
    Tensor in_grad = rows_of(input_grad, e * capacity, capacity);
    linear_backward_input(rows_of(output_grad, e * capacity, capacity), layer.expert(e).w2, activated_grad);
    gelu_backward(rows_of(hidden, e * capacity, capacity).data(), activated_grad.data(), hidden_grad.data(),
                  hidden_grad.size());
    linear_backward_input(hidden_grad, layer.expert(e).w1, in_grad);
  }
  Tensor logits_grad(tokens, shape.experts);
  routing_backward(routing, probabilities.data(), weight_grad.data(), aux_weight, logits_grad.data());
  softmax_rows_backward(probabilities.data(), logits_grad.data(), tokens, shape.experts);
  Tensor gate_grad(h, shape.experts), gate_input_grad(tokens, h);
  linear_backward_weight(x, logits_grad, gate_grad, nullptr);
  linear_backward_input(logits_grad, layer.gate(), gate_input_grad);
  EXPECT_EQ(gate_grad.to_vector(), layer.gate_grad().to_vector());
  std::vector<float> dx(static_cast<size_t>(tokens * h));
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t col = 0; col < h; ++col)
      dx[t * h + col] = moe_math::token_gradient(dy.data(), input_grad.data(), gate_input_grad.data(),
                                                 routing.slot.data(), shape.top_k, h, t, col);
  EXPECT_EQ(dx, dx_cpu.to_vector());

  // The experts' part alone (no residual), as a transformer_block with
  // experts calls it: MoeLayer::mix and mix_backward.
  std::unique_ptr<LayerState> mix_state;
  const Tensor mix_cpu = layer.mix(x, info, mix_state);
  const Tensor mix_grad_cpu = layer.mix_backward(x, dy, mix_state.get());
  std::vector<float> mix(y.size()), mix_grad(dx.size());
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t col = 0; col < h; ++col) {
      mix[t * h + col] = moe_math::combine_value(nullptr, expert_output.data(), routing.slot.data(),
                                                 routing.weight.data(), shape.top_k, h, t, col);
      mix_grad[t * h + col] = moe_math::token_gradient(nullptr, input_grad.data(), gate_input_grad.data(),
                                                       routing.slot.data(), shape.top_k, h, t, col);
    }
  EXPECT_EQ(mix, mix_cpu.to_vector());
  EXPECT_EQ(mix_grad, mix_grad_cpu.to_vector());
}

// 29 tokens over 4 experts: factor 4 gives every expert room for every token;
// 0.5 gives slots for half the assignments.
INSTANTIATE_TEST_SUITE_P(TopKAndCapacity, MoeMath,
                         ::testing::Values(MoeCase{1, 4.0, false}, MoeCase{2, 2.0, false},
                                           MoeCase{1, 0.5, true}, MoeCase{2, 0.5, true}),
                         [](const ::testing::TestParamInfo<MoeCase>& info) {
                           return "top" + std::to_string(info.param.top_k) +
                                  (info.param.drops ? "_drops" : "_keeps_all");
                         });

}  // namespace
}  // namespace pipelab::gpu
