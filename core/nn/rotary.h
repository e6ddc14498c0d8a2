// Rotary position embeddings (Su et al., "RoFormer", 2021; LLaMA): every
// query and key head of the fused QKV rows (attention.h's layout) is turned
// by its token's position t before the scores, so that q_i . k_j depends on
// i - j only. Pairs are the two halves of a head (GPT-NeoX's and
// Megatron-LM's default, "rotate half"): for c in [0, head_dim / 2),
//   angle = t theta^(-2c / head_dim)
//   x'_c            = x_c cos(angle) - x_{c + d/2} sin(angle)
//   x'_{c + d/2}    = x_{c + d/2} cos(angle) + x_c sin(angle)
// V is not turned. The backward turns the gradients of q and k by -angle
// (the rotation's transpose). Angles are worked out in double and their
// cosine and sine rounded to float once (rotary_table), so every backend
// rotates by the same floats; theta is the embedding's rope_theta (LLaMA 2's
// 10000 by default, LLaMA 3's 500000).
//
// Position t of row r is r % seq: the attention's rows are whole sequences
// (under sequence parallelism the block gathers them before QKV). Under
// context parallelism the rows are the rank's queries, row r at
// shape.position(r % queries), and its k turns before the ranks gather it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/nn/attention.h"
#include "core/nn/tensor.h"

namespace pipelab {

// cos and sin of every (position, pair): [seq * head_dim / 2] each, pair c of
// position t at t * head_dim / 2 + c.
struct RotaryTable {
  int64_t seq = 0;
  int64_t half = 0;  // head_dim / 2
  std::vector<float> cos;
  std::vector<float> sin;
};

// Throws std::invalid_argument unless head_dim is even, seq positive and
// theta (the embedding's rope_theta) positive and finite.
RotaryTable rotary_table(int64_t seq, int64_t head_dim, double theta);

// Turns q and k of every head of `qkv` ([rows, qkv_width]) in place by their
// positions' angles.
void rotary_forward(Tensor& qkv, const AttentionShape& shape, const RotaryTable& table);
// Turns the gradients of q and k in `dqkv` back (by -angle), in place.
void rotary_backward(Tensor& dqkv, const AttentionShape& shape, const RotaryTable& table);

}  // namespace pipelab
