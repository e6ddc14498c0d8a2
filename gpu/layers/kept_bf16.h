// Which values the CUDA backend's layers keep in bf16 under
// training.precision = bf16-mixed: exactly those a layer keeps only to feed
// GEMMs that read bf16 (KeptGemmInput), each rounded once in the forward.
// Host arithmetic: the layers and the memory pre-flight read it, host tests
// check it.
//
// A Transformer block (gpu/layers/transformer_block.h):
//   kept in bf16 (2 bytes)                  read in the backward only by
//   Norm1's output (QKV's input)            the QKV weight gradient
//   q, k and v (the QKV output)             the attention core's GEMMs (and,
//                                           under selective recompute, the
//                                           scores recomputed from q and k)
//   the attention output (Proj's input)     the Proj weight gradient
//   Norm2's output (FFN1's input)           the FFN1 weight gradient
//   the activation's output (FFN2's input)  the FFN2 weight gradient
//
//   kept in float32                         because
//   the block input x, h (Norm2's input)    the norms' backward reads them
//   the softmax output P                    the softmax gradient reads it elementwise
//   FFN1's output (the activation's input)  GELU's or SwiGLU's gradient reads it
// The exceptions: under sequence parallelism the norm outputs stay float32
// on the shard's slice, since the backward gathers them again over the shards
// (the gathered copies that BI keeps for BW are bf16 instead); with experts
// Norm2's output stays float32 (the gate reads it in float32) and the
// experts keep what a moe layer keeps; under context parallelism q, k and v
// stay float32, since the backward packs k and v from them again for the
// context-parallel gather, which moves float32.
//
// A moe layer's experts (gpu/layers/moe.h), a moe layer's or a block's:
//   kept in bf16: the dispatched slot rows (W1's input), read again only by
//   W1's weight gradient; kept in float32: the hidden pre-activation (GELU's
//   gradient), the experts' outputs and the gate probabilities (the gate's
//   gradient, in float32).
// The stage's layer inputs (core/nn/stage_stack.h keeps each layer's input
// for its backward; gpu/layers/kept_layer_input.h):
//   kept in bf16: a linear's or a conv2d's input (an MLP's, a conv net's, a
//   GPT's output layer's), which its backward reads only in the weight
//   gradient's GEMM (dW = x^T dy; a conv's over im2col of x, which only
//   copies values), rounding it to bf16; its input gradient reads W alone,
//   and no other layer reads that tensor.
//   kept in float32: the stage input (the stage's first layer's), which
//   full recompute starts again from; the output layer's input under
//   sequence parallelism (the stage keeps it gathered over the sequence);
//   every other layer's input (activations, norms, pools read it
//   elementwise).
#pragma once

#include <cstdint>

#include "core/model/mixture_of_experts.h"
#include "core/model/model_spec.h"
#include "core/model/transformer_block.h"
#include "core/plan/stage_profile.h"

namespace pipelab::gpu {

struct BlockKeptBf16 {
  bool norm1_out = false;
  bool qkv = false;
  bool attention_out = false;
  bool norm2_out = false;
  bool activation_out = false;
  // Sequence parallelism: the norm outputs gathered again in BI for BW.
  bool gathered_norms = false;
};

// All false unless `mixed_bf16`.
BlockKeptBf16 block_kept_bf16(bool mixed_bf16, bool sequence_parallel, bool experts,
                              bool context_parallel = false);

// Per sample, the values of one block shard's forward that are kept in bf16
// under bf16-mixed (from the forward to the backward; the gathered norms,
// kept from BI to BW only, are not among them), its experts' included.
int64_t block_kept_bf16_values(const TransformerBlockShape& shape, const BlockSplit& split);

// Per sample, the values of the norm outputs a block shard gathers again in
// its backward under sequence parallelism, kept in bf16 from BI to BW:
// Norm1's and, with a dense MLP, Norm2's, over the whole sequence (none
// without sequence parallelism).
int64_t block_gathered_bf16_values(const TransformerBlockShape& shape, const BlockSplit& split);

// Per sample, the values a moe layer's (or a block's) experts keep in bf16
// under bf16-mixed: the dispatched slot rows, tokens x capacity_factor x
// top_k of them of dim values each (as moe_cost counts them).
int64_t moe_kept_bf16_values(const MoeShape& shape);

// Whether the stage keeps the input of a layer of type `type` in bf16 (see
// above): false unless `mixed_bf16`; `stage_input`: the layer is the stage's
// first; `gathers_sequence`: it gathers its input over the sequence.
bool layer_input_kept_bf16(bool mixed_bf16, LayerType type, bool stage_input,
                           bool gathers_sequence);

// Per sample, the values of layer `info`'s input that its stage keeps in bf16
// under bf16-mixed (0 where layer_input_kept_bf16 says no): all of them, or
// a row-parallel linear's slice (1/tp of them). `split` is the plan's
// (block_split): under sequence parallelism a sequence model's
// column-parallel linear gathers its input.
int64_t layer_input_kept_bf16_values(const LayerInfo& info, TensorParallelRole role,
                                     const BlockSplit& split, bool stage_input,
                                     bool sequence_model);

}  // namespace pipelab::gpu
