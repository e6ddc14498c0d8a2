// A context rank's attention one key/value block at a time: ring attention's
// per-step work (Liu et al. 2023) over a Transformer block's layouts, with
// cblas GEMMs per (sample, head). ring_attention.h holds the same math for
// one head in plain loops, the reference this is tested beside; attention.h's
// context-parallel form attends to the whole gathered sequence at once.
//
// The rank's queries are its QKV rows, [batch * queries, qkv_width] at
// shape.query_positions (attention.h's layout); a block is one rank's packed
// keys and values, [batch * tokens, key_width] at its own positions, as the
// ring hands them round (only K and V travel). Blocks may arrive in any order.
//
// Forward: each (sample, head) keeps, per query, the running maximum m of its
// scores, the sum l of exp(score - m) over the keys it sees, and the
// unnormalised output acc = sum exp(score - m) mask v (mask: the dropout
// mask times its scale, or 1); a block raises m where it holds a larger
// score and rescales l and acc by exp(m_old - m_new) first. finish gives
// O = acc / l and the log-sum-exp L = m + log l, what the backward reads
// instead of P (so the ring keeps no [queries, seq] matrix).
//
// Backward, per block, with D_i = dO_i . O_i, P_ij = exp(scale q_i k_j - L_i)
// and M the dropout mask (1 without): dV_j += (P M)_ij dO_i,
// dS_ij = P_ij ((dO_i . v_j) M_ij - D_i), dQ_i += scale dS_ij k_j and
// dK_j += scale dS_ij q_i. The rank adds dQ over every block; each block's dK
// and dV belong to the rank that holds those keys, which sums them over
// every rank's queries (the ring's reduce-scatter).
//
// Dropout keys each probability by (head, query position, key position), as
// block_dropout.h does for whole attention, so any order of blocks draws one
// device's masks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/nn/attention.h"
#include "core/nn/block_dropout.h"
#include "core/nn/tensor.h"

namespace pipelab {

// One rank's keys and values as the ring passes them: `keys` [batch * tokens,
// key_width] packed (attention.h), at `positions` (tokens of them, increasing).
struct KeyValueBlock {
  const Tensor* keys = nullptr;
  const int64_t* positions = nullptr;
  int64_t tokens = 0;
};

class BlockwiseAttentionForward {
 public:
  // `shape`: the rank's (queries, query_positions and packed_keys set);
  // `query_qkv` [rows, qkv_width] outlives this object, as does `dropout`
  // (null or inactive: none).
  BlockwiseAttentionForward(const Tensor& query_qkv, const AttentionShape& shape,
                            const BlockDropout* dropout);

  // Merges one block into every (sample, head)'s running result.
  void add(const KeyValueBlock& block);

  // out [rows, width] and lse [probability_rows, 1]: a query that saw no key
  // (possible only before its own block arrived) gets 0 and -infinity.
  void finish(Tensor& out, Tensor& lse) const;

 private:
  const Tensor& queries_;
  const AttentionShape shape_;
  const BlockDropout* dropout_;
  std::vector<float> max_;  // per probability row: the largest score so far
  std::vector<float> sum_;  // per probability row
  Tensor acc_;              // [rows, width]
};

// The backward's inputs that do not change from block to block.
struct BlockwiseAttentionGradient {
  const Tensor* query_qkv = nullptr;  // [rows, qkv_width]
  const Tensor* out = nullptr;        // the forward's O, [rows, width]
  const Tensor* lse = nullptr;        // the forward's L, [probability_rows, 1]
  const Tensor* dout = nullptr;       // dL/dO, [rows, width]
  AttentionShape shape;               // the rank's, as the forward's
  const BlockDropout* dropout = nullptr;
};

// One block's part of the backward: adds this rank's dq into `query_dqkv`'s q
// columns ([rows, qkv_width]; its k and v columns untouched) and writes the
// block's dk and dv into `block_grads` ([batch * block.tokens, key_width],
// overwritten).
void blockwise_attention_backward(const BlockwiseAttentionGradient& input,
                                  const KeyValueBlock& block, Tensor& query_dqkv,
                                  Tensor& block_grads);

}  // namespace pipelab
