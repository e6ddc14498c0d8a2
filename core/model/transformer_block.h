// What one GPT-style Transformer block holds and costs, per sample (one
// sequence of `tokens` positions), whole or as one tensor-parallel shard.
//
// The block is pre-norm:  h = x + Proj(Attention(Norm1(x)));  y = h + FFN2(Act(FFN1(Norm2(h)))).
// Under tensor parallelism (Megatron-LM) QKV is column-parallel split by
// heads, Proj row-parallel, FFN1 column-parallel and FFN2 row-parallel: one
// all-reduce after Proj and one after FFN2 in the forward, one after each
// column-parallel input gradient in the backward. Sequence parallelism splits
// the norms, dropouts and residuals along the sequence instead of repeating
// them on every shard.
//
// Activation memory follows Korthikanti et al., "Reducing Activation
// Recomputation in Large Transformer Models" (2022), item by item, so that in
// 16 bits with dropout and a GELU MLP of 4 x dim it is exactly their
//   s h (34 + 5 a s / h)                   no parallelism
//   s h (10 + 24/t + 5 a s / (h t))        tensor parallel
//   s h (34/t + 5 a s / (h t))             tensor + sequence parallel
//   s h 34/t                               ... + selective recompute
// bytes per sample (s tokens, h = dim, a = heads, t = tp). See kept_values in
// transformer_block.cpp for the items; without dropout the masks and the
// dropped-out scores are not kept, and SwiGLU keeps both halves of FFN1.
//
// With experts > 0 the MLP is a Mixture of Experts (Switch, GShard): the
// moe layer's gate and experts (mixture_of_experts.h) take Norm2's output,
// y = h + MoE(Norm2(h)), and the MLP's costs are moe_cost's: under tensor
// parallelism each expert's FFN is split as the dense MLP is (ExpertShard),
// the experts' outputs summed by the forward's second all-reduce and their
// inputs' gradients by the backward's first.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/gemm_shape.h"
#include "core/model/mixture_of_experts.h"

namespace pipelab {

enum class NormType { LayerNorm, RmsNorm };
enum class BlockActivation { Gelu, SwiGlu };

struct TransformerBlockShape {
  int64_t tokens = 1;  // sequence length s
  int64_t dim = 0;     // model width h
  int64_t heads = 1;   // a; dim % heads == 0
  int64_t ffn = 0;     // hidden width of the MLP (each half of SwiGLU's FFN1)
  NormType norm = NormType::LayerNorm;
  BlockActivation activation = BlockActivation::Gelu;
  bool bias = true;    // QKV, Proj, FFN1, FFN2 biases
  bool dropout = false;  // dropout after attention scores, Proj and FFN2
  // Mixture-of-Experts MLP: experts of width ffn (GELU), 0 = the dense MLP.
  int64_t experts = 0;
  int64_t top_k = 1;
  double capacity_factor = 1.25;
  // Key and value heads (grouped-query attention, Ainslie et al. 2023: each
  // serves heads / kv_heads query heads; 1 is multi-query attention); 0 means
  // heads. Q stays dim wide, K and V are kv_heads x head_dim each.
  int64_t kv_heads = 0;
  // Rotary position embeddings (Su et al., RoFormer; LLaMA): Q and K rotated
  // by position in every block, an elementwise pass over each.
  bool rotary = false;

  bool has_experts() const { return experts > 0; }
  bool operator==(const TransformerBlockShape&) const = default;
  // The K (or V) width: kv_heads x head_dim, dim without grouping.
  int64_t kv_width() const { return kv_heads > 0 && heads > 0 ? kv_heads * (dim / heads) : dim; }
  // QKV's output width: dim + 2 kv_width (3 dim without grouping).
  int64_t qkv_width() const { return dim + 2 * kv_width(); }
  // The MLP's shape as a moe layer's (with experts only).
  MoeShape moe() const { return {tokens, dim, experts, top_k, ffn, capacity_factor}; }
};

// Under context parallelism (cp > 1) the shape's `tokens` are one rank's
// share of the sequence (s / cp positions), whose queries attend to all s =
// tokens x cp keys as ring attention brings them (parallel_plan.h): every cost
// but the attention core's scales with the share; the core's scores are
// tokens x s per head.
struct BlockSplit {
  int tp = 1;
  bool sequence_parallel = false;
  bool selective_recompute = false;  // the attention core (scores, softmax, dropout) is recomputed
  int cp = 1;
};

// Whether the backward computes the attention scores again instead of
// reading a kept P: under selective recomputation, and under context
// parallelism, whose attention takes the sequence's keys block by block and
// keeps each query's log-sum-exp instead (core/nn/blockwise_attention.h).
bool recomputes_attention(const BlockSplit& split);

// What a block keeps for its backward: values (in the activation precision)
// plus one-byte dropout masks.
struct BlockActivations {
  int64_t values = 0;
  int64_t mask_bytes = 0;
  int64_t bytes(int64_t bytes_per_value) const { return values * bytes_per_value + mask_bytes; }
};

struct BlockCost {
  int64_t params = 0;                // trainable scalars of this shard
  double forward_flops = 0;          // per sample
  double backward_input_flops = 0;   // per sample; the attention core's backward is all here
  double backward_weight_flops = 0;  // per sample
  BlockActivations kept;             // per sample, from forward to backward
  int64_t input_values = 0;          // per sample: the block's input as this shard holds it
  int64_t allreduce_values = 0;      // per sample, each of the 2 forward and 2 backward collectives
                                     // (with experts the MLP's two sum the experts' slots instead)
  // Per sample, the gradient buffers PipeLab's block (core/nn/gpt_block.h)
  // holds in its backward beyond the kept activations, and of those the ones
  // a split backward (BI then BW) keeps until BW. Not in Korthikanti et
  // al.'s count, which is the forward's. backward_kept_values is net of the
  // kept values BI frees (Q, K, V, the softmax output, FFN1's output or the
  // experts' kept values, and under sequence parallelism the norms'
  // outputs); it may be negative.
  int64_t backward_working_values = 0;
  int64_t backward_kept_values = 0;
  // Per sample, the values the memory-bound kernels read and write (the
  // norms, softmax, dropouts, bias-activation and bias-dropout-residual, as
  // Megatron-LM fuses them): forward, and the backward's input-gradient half
  // (with selective recomputation, the attention core's forward again). They
  // run at the memory bandwidth, not the GEMM rate (core/sim/cost_model.h).
  double forward_memory_values = 0;
  double backward_memory_values = 0;
  // Per sample, the forward's attention GEMMs (Q K^T and P V; their
  // backward is twice this): the work a context-parallel ring hides behind.
  double attention_flops = 0;
  // Per sample, the GEMMs behind the FLOPs above, by shape: the linears'
  // and the attention core's (a mixture of experts' are not listed; the cost
  // model prices unlisted FLOPs at the large-GEMM rate).
  SampleGemms gemms;
};

// The block's total parameters (no split).
int64_t transformer_block_params(const TransformerBlockShape& shape);

// One shard's cost under `split`. The caller checks that tp divides heads,
// ffn and (with sequence parallelism) tokens.
BlockCost transformer_block_cost(const TransformerBlockShape& shape, const BlockSplit& split);

}  // namespace pipelab
