// The trainable tensors of a mixture-of-experts MLP, for either backend: one
// local expert's FFN and the lists the stage asks a MoE layer for. The CPU
// layer (moe_layer.h) and the CUDA one (gpu/layers/moe.h) share them, so the
// order of parameters, which checkpoints and the optimizer follow, is one.
#pragma once

#include <vector>

namespace pipelab {

// Local expert l's W1 [dim, ffn / tp], b1 [1, ffn / tp], W2 [ffn / tp, dim],
// b2 [1, dim] and their gradients.
template <typename TensorT>
struct BasicExpertTensors {
  TensorT w1, b1, w2, b2;
  TensorT w1_grad, b1_grad, w2_grad, b2_grad;
};

// The gate, then each expert's w1, b1, w2, b2.
template <typename TensorT>
std::vector<TensorT*> moe_parameters(TensorT& gate, std::vector<BasicExpertTensors<TensorT>>& experts) {
  std::vector<TensorT*> values = {&gate};
  for (BasicExpertTensors<TensorT>& e : experts) values.insert(values.end(), {&e.w1, &e.b1, &e.w2, &e.b2});
  return values;
}

// Each expert's gradients, in the order of moe_parameters.
template <typename TensorT>
std::vector<TensorT*> moe_expert_gradients(std::vector<BasicExpertTensors<TensorT>>& experts) {
  std::vector<TensorT*> values;
  for (BasicExpertTensors<TensorT>& e : experts)
    values.insert(values.end(), {&e.w1_grad, &e.b1_grad, &e.w2_grad, &e.b2_grad});
  return values;
}

// The gate's gradient, then the experts': moe_parameters' gradients.
template <typename TensorT>
std::vector<TensorT*> moe_gradients(TensorT& gate_grad, std::vector<BasicExpertTensors<TensorT>>& experts) {
  std::vector<TensorT*> values = {&gate_grad};
  const std::vector<TensorT*> expert = moe_expert_gradients(experts);
  values.insert(values.end(), expert.begin(), expert.end());
  return values;
}

}  // namespace pipelab
