// Context parallelism's attention in its ring form, one head of one sequence
// at a time: the math a context rank runs as the key and value blocks of the
// other ranks travel around the ring (ring attention, Liu et al. 2023), with
// the causal load balancing Megatron-LM uses for --context-parallel-size. It
// is the plain-loop reference for one head: blockwise_attention.h does the
// same per-step work over a block's layouts (every sample and head, packed
// keys, dropout) with cblas GEMMs, and the cpu backend's blocks run it as
// the ring brings each block (gpt_block.h); the CUDA executor gathers every
// block first and attends in one pass (the same result).
//
// Positions. The sequence of `seq` tokens is cut into 2 cp equal chunks and
// rank r holds chunks r and 2 cp - 1 - r, so that under the causal mask every
// rank has the same work (context_positions). A rank's queries, keys and
// values are its tokens in that order; every block carries its tokens' global
// positions, which the causal mask compares (key j is seen by query i when
// position(j) <= position(i)).
//
// Forward: RingAttentionForward takes the rank's queries, then each block of
// keys and values as it arrives, in any order, and merges it into a running
// row max m, row sum l of exp(s - m) and unnormalised output (the online
// softmax of FlashAttention): after the last block, O = acc / l and the
// log-sum-exp L = m + log l, what the backward needs instead of P.
//
// Backward, per block: with D_i = dO_i . O_i, P_ij = exp(s_ij - L_i),
// dV_j += sum_i P_ij dO_i, dS_ij = P_ij (dO_i . v_j - D_i),
// dQ_i += scale sum_j dS_ij k_j and dK_j += scale sum_i dS_ij q_i. A rank
// adds dQ for its own queries over every block, and each block's dK and dV
// go back around the ring to the rank that holds those keys, which sums
// them over every rank's queries.
//
// Plain loops (tests/core/nn/ring_attention_test.cpp checks them against
// attention over the whole sequence on one device).
#pragma once

#include <cstdint>
#include <vector>

#include "core/nn/context_split.h"  // context_positions

namespace pipelab {

// One head's keys and values as a block of the ring: [tokens, head_dim]
// each, row-major, with their global positions.
struct AttentionBlock {
  const float* keys = nullptr;
  const float* values = nullptr;
  const int64_t* positions = nullptr;
  int64_t tokens = 0;
};

class RingAttentionForward {
 public:
  // `queries` [tokens, head_dim] at `positions`; scores are scaled by `scale`
  // (1 / sqrt(head_dim) in a Transformer).
  RingAttentionForward(const float* queries, const int64_t* positions, int64_t tokens,
                       int64_t head_dim, float scale, bool causal);

  // Merges one block into the running result.
  void add(const AttentionBlock& block);

  // O [tokens, head_dim] and L [tokens] (the log-sum-exp of each query's
  // scores). Every causal query sees at least its own key once the block
  // holding it was added; a query that saw no key gets O = 0 and L = -inf.
  void finish(float* output, float* log_sum_exp) const;

 private:
  const float* queries_;
  const int64_t* positions_;
  int64_t tokens_;
  int64_t head_dim_;
  float scale_;
  bool causal_;
  std::vector<float> max_;  // per query: the largest score so far
  std::vector<float> sum_;  // per query: sum of exp(score - max)
  std::vector<float> acc_;  // [tokens, head_dim]: sum of exp(score - max) v
};

// What one rank's queries need for their backward through every block.
struct RingAttentionGradientInput {
  const float* queries = nullptr;  // [tokens, head_dim]
  const int64_t* positions = nullptr;
  const float* output = nullptr;       // O
  const float* log_sum_exp = nullptr;  // L
  const float* output_grad = nullptr;  // dL/dO
  int64_t tokens = 0;
  int64_t head_dim = 0;
  float scale = 1;
  bool causal = true;
};

// Adds one block's part of the backward: into `query_grad` [tokens,
// head_dim] (this rank's dQ) and into `key_grad` and `value_grad`
// [block.tokens, head_dim] (the block's dK and dV, which its owner sums).
void ring_attention_block_backward(const RingAttentionGradientInput& input,
                                   const AttentionBlock& block, float* query_grad, float* key_grad,
                                   float* value_grad);

}  // namespace pipelab
