// What a Mixture-of-Experts layer (`moe`) holds and costs, per sample, and the
// capacity rule its routing and the simulator share.
//
// Each token (a position of a sequence model, or a whole sample after a
// linear) goes through a learned gate (linear width -> experts, softmax) that
// picks its top_k experts (1 = Switch Transformer, 2 = GShard); each expert is
// an MLP width -> ffn -> width with GELU, and the output is the input plus the
// gate-weighted sum of the chosen experts' outputs, so a token dropped for
// lack of capacity passes through unchanged (as in Switch).
#pragma once

#include <cstdint>

namespace pipelab {

struct MoeShape {
  int64_t tokens = 1;   // positions per sample
  int64_t dim = 0;      // the width of one token
  int64_t experts = 1;  // E
  int64_t top_k = 1;    // experts per token, in [1, E]
  int64_t ffn = 0;      // each expert's hidden width
  double capacity_factor = 1.25;
};

// Expert parallelism: which of a moe layer's experts a device holds. A group
// of `ep` data-parallel replicas shares the experts; member `rank` holds
// experts [rank E / ep, (rank + 1) E / ep).
// Expert tensor parallelism (a transformer_block's experts under parallel.tp,
// as Megatron-Core's with expert tp = tp): tensor-parallel shard `tp_shard`
// of `tp` holds hidden columns [tp_shard f / tp, (tp_shard + 1) f / tp) of
// each of its experts, W1 column-parallel and W2 row-parallel like a dense
// MLP; the gate and W2's bias are whole on every shard.
// With sequence parallelism too (sequence_parallel, tp > 1) the block
// gathers the whole sequence before the gate and reduce-scatters the
// combined outputs onto the shards' slices (Megatron-Core's): the experts'
// outputs and the gate's gradient stay partial sums over the shards.
struct ExpertShard {
  int ep = 1;
  int rank = 0;
  int tp = 1;
  int tp_shard = 0;
  bool sequence_parallel = false;

  bool partial_outputs() const { return sequence_parallel && tp > 1; }
};

// Under expert parallelism the dispatch buffer's slot rows move in blocks of
// `capacity` rows. They travel member-major, [member][local expert] (block j
// of the all-to-all goes to member j), and the experts read them
// expert-major, [local expert][member] (each expert's rows from every member
// together). The expert-major position of member-major block `block`, of
// members x local_experts blocks; under ep = 1 the order is the same.
int64_t expert_major_block(int64_t block, int64_t members, int64_t local_experts);

// Token slots per expert for `tokens` tokens routed together (one micro-batch
// on one replica): ceil(capacity_factor x tokens x top_k / experts), at least 1.
int64_t expert_capacity(double capacity_factor, int64_t tokens, int64_t top_k, int64_t experts);

struct MoeCost {
  int64_t params = 0;                // the gate and every expert
  int64_t expert_params = 0;         // of which the experts' (split over ep devices)
  double forward_flops = 0;          // per sample: the gate plus top_k experts per token
  double backward_input_flops = 0;   // per sample
  double backward_weight_flops = 0;  // per sample
  int64_t kept_values = 0;           // per sample, kept from forward for backward
  // Per sample, the gradient buffers its backward holds at once beyond the
  // kept values (moe_layer.cpp): three of the dispatch buffer's size (the
  // slots' output gradient in expert order, their input gradient and its
  // reorder for the return exchange).
  int64_t backward_working_values = 0;
};
// One tensor-parallel shard's cost when `tp` splits each expert's hidden
// width (ExpertShard); tp = 1 is the whole layer.
MoeCost moe_cost(const MoeShape& shape, int tp = 1);

}  // namespace pipelab
