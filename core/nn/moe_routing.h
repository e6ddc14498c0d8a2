// Mixture-of-Experts routing: from each token's gate probabilities, its top_k
// experts, their combine weights, the token slots inside each expert's
// capacity, the dropped assignments and the load-balancing loss. Plain host
// math over float arrays, shared by every backend (the CPU layer, and the CUDA
// layer routing on the host).
//
// Capacity is filled as GShard does: first every token's first choice, in
// token order, then every token's second choice, and so on; an assignment that
// finds its expert full is dropped (the token's output keeps its residual).
// Top-1 weighs the expert's output by its gate probability (Switch); top-k > 1
// renormalises the k chosen probabilities to sum to 1 (GShard's top-2).
//
// The auxiliary loss is Switch Transformer's: aux = E x sum_e f_e P_e, with
// f_e the fraction of tokens whose first choice is e and P_e the mean gate
// probability of e; f_e has no gradient, so d aux / d p[t][e] = E f_e / T.
#pragma once

#include <cstdint>
#include <vector>

namespace pipelab {

struct MoeRouting {
  int64_t tokens = 0;
  int64_t experts = 0;
  int64_t top_k = 1;
  int64_t capacity = 0;  // token slots per expert
  // Per assignment a = token * top_k + choice (choice 0 = the most probable):
  std::vector<int32_t> expert;  // the chosen expert
  std::vector<int64_t>
      slot;  // row expert * capacity + position in the dispatch buffer; -1: dropped
  std::vector<float> weight;  // combine weight (gate value)
  // Per expert:
  std::vector<int64_t> routed;                // assignments that chose it
  std::vector<int64_t> dropped;               // of which over its capacity
  std::vector<double> first_choice_fraction;  // f_e
  std::vector<double> mean_probability;       // P_e
  double aux_loss = 0;                        // E x sum_e f_e P_e (before aux_loss_weight)

  int64_t dropped_total() const;
};

// `probabilities` is [tokens, experts], each row a softmax.
MoeRouting route_tokens(const float* probabilities, int64_t tokens, int64_t experts, int64_t top_k,
                        int64_t capacity);

// d loss / d probabilities [tokens, experts] (overwritten) from the gradient of
// each assignment's combine weight (weight_grad, per assignment; dropped ones
// 0) and aux_scale x d aux / d p (aux_scale: aux_loss_weight times the weight
// of this micro-batch's loss in the step's).
void routing_backward(const MoeRouting& routing, const float* probabilities,
                      const float* weight_grad, double aux_scale, float* probability_grad);

// Softmax of each row of [rows, cols] logits, in place; and its backward:
// dlogits = p (dp - sum_j p_j dp_j), in place over dp.
void softmax_rows(float* values, int64_t rows, int64_t cols);
void softmax_rows_backward(const float* probabilities, float* grad, int64_t rows, int64_t cols);

}  // namespace pipelab
