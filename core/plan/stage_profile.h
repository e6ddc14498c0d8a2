// StageProfile: what one pipeline stage (one tensor-parallel shard of it) holds
// and costs per micro-batch. The lowering pass reads its byte counts, the
// simulator its FLOPs and memory.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/gemm_shape.h"
#include "core/model/model_spec.h"
#include "core/model/precision.h"
#include "core/plan/parallel_plan.h"
#include "core/plan/partition.h"

namespace pipelab {

// A tensor-parallel collective Megatron's split implies: an all-reduce after
// the forward of each row-parallel linear, and after the input-gradient of each
// column-parallel linear (a transformer block has two of each; a
// vocabulary-parallel embedding one in the forward). Under sequence
// parallelism a block's all-reduces become an all-gather before each
// column-parallel GEMM and a reduce-scatter after each row-parallel one; the
// backward runs their transposes (a reduce-scatter for each forward
// all-gather, an all-gather for each reduce-scatter) and gathers each
// layernorm output again for the column-parallel weight gradient, as
// Megatron-LM does rather than keep the whole sequence.
enum class TensorParallelCollective { AllReduce, ReduceScatter, AllGather };

struct TensorParallelAllReduce {
  int layer = 0;             // the layer it belongs to
  int64_t bytes = 0;         // per micro-batch: the whole (unsplit) tensor
  bool in_forward = true;    // forward (row-parallel output) or backward (column-parallel input grad)
  TensorParallelCollective collective = TensorParallelCollective::AllReduce;
  // A backward collective that runs with the weight gradient (BW of a split
  // backward) rather than the input gradient (BI): the sequence-parallel
  // embedding's gather, which has no input gradient to compute.
  bool with_weight_gradient = false;
};

// Synchronised batch norm (a batchnorm or residual_block with sync: true,
// under dp > 1): each of the layer's batch norms sums its statistics over the
// data-parallel replicas in the forward (per channel a sum and a sum of
// squares, and the count: 2C + 1 values) and its gradient sums in the backward
// (2C values), with the input gradient (BI).
struct BatchStatisticsAllReduce {
  int layer = 0;
  int64_t bytes = 0;  // float32 values sent
  bool in_forward = true;
};

// Expert parallelism (parallel.ep > 1): a moe layer's token dispatch and
// combine, each an all-to-all over the layer's expert-parallel group, in the
// forward and again (their gradients) in the backward. `bytes` is the whole
// dispatch buffer, experts x capacity x width; each member keeps 1/ep of it.
struct ExpertAllToAll {
  int layer = 0;
  int64_t bytes = 0;
  bool in_forward = true;
};

// Context parallelism (parallel.cp > 1): a transformer block's ring
// attention. Each rank holds its share of the sequence; in the forward the
// other ranks' K and V blocks travel around the ring to it (as much as an
// all-gather of the whole sequence's K and V moves), and in the backward K
// and V travel again while their gradients travel home (an all-gather and a
// reduce-scatter of the same size), as Megatron-LM's ring attention does.
// `bytes` is the whole K and V of a micro-batch, as this tensor-parallel shard
// holds them. The ring's steps overlap the attention's GEMMs on the blocks
// already there: `hidden_flops` (the forward's Q K^T and P V; each of the
// backward's two exchanges hides behind half its twice-as-large GEMMs).
struct ContextParallelExchange {
  int layer = 0;
  int64_t bytes = 0;
  bool in_forward = true;
  bool gradients = false;  // dK and dV going home (a reduce-scatter), not K and V (an all-gather)
  double hidden_flops = 0;
};

struct StageProfile {
  LayerRange layers;
  // Per micro-batch, per tensor-parallel shard.
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  // Per micro-batch, per shard: bytes the memory-bound kernels move (the
  // Transformer blocks' norms, softmax, dropouts, activations; transformer_block.h),
  // in the forward and in the backward's input-gradient half.
  double forward_memory_bytes = 0;
  double backward_memory_bytes = 0;
  // Per micro-batch, per shard: the kernels each pass launches, as a fused
  // GPU implementation runs the layers (stage_profile.cpp's layer_kernels).
  // However little they compute, a pass takes at least kernels x the
  // device's launch cost (core/sim/cost_model.h).
  // Per micro-batch, per shard: the GEMMs behind the FLOPs above, by shape
  // (the linears' and the Transformer blocks'), which the cost model prices
  // shape by shape on a device that describes its compute units. FLOPs no
  // GEMM here accounts for run at the large-GEMM rate.
  std::vector<GemmCount> forward_gemms;
  std::vector<GemmCount> backward_input_gemms;
  std::vector<GemmCount> backward_weight_gemms;
  int64_t forward_kernels = 0;
  int64_t backward_input_kernels = 0;
  int64_t backward_weight_kernels = 0;
  int64_t params = 0;              // trainable scalars held by one shard
  int64_t expert_params = 0;       // of which experts' (the expert-parallel member's share)
  int64_t largest_layer_params = 0;  // the most one layer (a block: FSDP's unit) holds
  int64_t activation_bytes = 0;    // kept from forward to backward, per micro-batch
  int64_t input_bytes = 0;         // activation received from the previous stage, per micro-batch
  int64_t output_bytes = 0;        // activation sent to the next stage, per micro-batch
  // Full recomputation (plan.recompute), per micro-batch: what the forward
  // keeps, the most that recomputing puts back at once before the backward,
  // and what the forward holds at its peak. With the stage as the unit: the
  // stage input; all the rest; everything. With each block as the unit
  // (plan.recompute_blocks): every block's input and the other layers'
  // activations; one block's rest; the two together.
  int64_t recompute_kept_bytes = 0;
  int64_t recompute_working_bytes = 0;
  int64_t recompute_forward_peak_bytes = 0;
  // What the backward (B or BI) of one micro-batch holds while it runs, beyond
  // the kept activations: the largest layer's gradient buffers (a block's
  // several, another layer's input and output gradients). And what BI leaves
  // for BW beyond them: each weighted layer's output gradient, and a block's
  // gradient buffers its weight gradients read (zero-bubble schedules), less
  // what BI frees of the kept activations (a block's values only its input
  // gradient reads, a weightless layer's input); it may be negative.
  int64_t backward_working_bytes = 0;
  int64_t split_backward_kept_bytes = 0;
  // What one running B, or BI, holds at its peak beyond the micro-batch's
  // kept activations, as the layers run last first: a layer's gradient
  // buffers (its output gradient included), less the kept activations of the
  // layers after it, which B has freed, or (BI) plus what they left for BW.
  int64_t backward_peak_bytes = 0;
  int64_t split_backward_peak_bytes = 0;
  // Last stage only: the loss's gradient of the stage output, computed right
  // after F and held until the micro-batch's B (or BI) starts.
  int64_t loss_gradient_bytes = 0;
  PrecisionBytes precision;        // bytes per weight, gradient, optimizer slot, activation
  std::vector<TensorParallelAllReduce> tp_allreduces;
  std::vector<BatchStatisticsAllReduce> batch_statistics_allreduces;  // dp > 1 only
  std::vector<ExpertAllToAll> expert_all_to_alls;                     // ep > 1 only
  std::vector<ContextParallelExchange> context_parallel_exchanges;    // cp > 1 only
  // Sequence parallelism: the gradient bytes a shard computes from its slice
  // of the sequence only (the layernorms' gains and biases, in blocks or
  // not), which the tensor-parallel group sums once per step, before the
  // update. 0 without sequence parallelism.
  int64_t sequence_parallel_gradient_bytes = 0;

  int64_t weight_bytes() const { return params * precision.weight; }
  int64_t gradient_bytes() const { return params * precision.gradient; }
  // The master copy (mixed precision) and `state_slots` values per parameter.
  int64_t optimizer_bytes(int state_slots) const {
    return params * (precision.master_weight + state_slots * precision.optimizer_slot);
  }
};

// How Megatron-style tensor parallelism treats each layer. Within one stage,
// linear layers pair up in order: the first of a pair is column-parallel
// (output features split over the tp shards), the second row-parallel (input
// features split, partial outputs summed by an all-reduce). Elementwise layers
// between the two act on the split width. A pair only forms when nothing but
// elementwise layers (relu, gelu, tanh, sigmoid, dropout) sits between the two
// linears: a layernorm needs the full width, so it ends a pending pair.
// A linear left without a partner (the last of an odd count in its stage, or
// one followed by a layernorm) is replicated: every shard computes it in full,
// which needs no communication and no divisible width, but gains no speed-up.
//
// In a sequence model the embedding is vocabulary-parallel (each shard holds
// vocab / tp rows; the partial lookups are summed by a forward all-reduce), a
// transformer block splits itself (attention by heads, its MLP by columns
// then rows: transformer_block.h), and a final linear (the output layer) is
// column-parallel over the vocabulary, feeding the parallel cross-entropy.
enum class TensorParallelRole {
  Replicated,      // every shard holds and computes the whole layer
  ColumnParallel,  // linear: out / tp outputs per shard
  RowParallel,     // linear: in / tp inputs per shard, then a forward all-reduce
  Sharded,         // elementwise layer between a column- and a row-parallel linear
  VocabParallel,   // embedding: vocab / tp rows per shard, then a forward all-reduce
  BlockParallel,   // transformer block: split inside, two all-reduces each way
};

// One role per layer of the model, for the given stage ranges (pairs never
// cross a stage boundary, since stages exchange full activations).
std::vector<TensorParallelRole> tensor_parallel_roles(const ModelSpec& model,
                                                      const std::vector<LayerRange>& stages);

// Under sequence parallelism (`sequence_parallel`: the plan's flag with
// tp > 1), whether layer `layer` of a sequence model hands on one shard's
// slice of the sequence (seq / tp positions of every sample): every layer
// does but a column-parallel linear (the output layer), which gathers the
// whole sequence first. False without sequence parallelism or outside a
// sequence model.
bool output_splits_sequence(const ModelSpec& model, const std::vector<TensorParallelRole>& roles,
                            int layer, bool sequence_parallel);

// One profile per pipeline stage (plan.stages() of them), for micro-batches of
// `microbatch_size` samples. Throws std::invalid_argument like partition_layers,
// and when tp does not divide a column-parallel linear's width, e.g.
// "tp = 3 does not divide linear layer 2's width 512", a block's heads or ffn,
// an embedding's vocab, or (sequence parallel) the sequence length; and when
// cp > 1 meets a model that is not a sequence model, or a sequence length
// that 2 cp does not divide (each rank holds two of 2 cp equal chunks).
// Under context parallelism every size and cost is one context rank's: the
// layers work on s / cp positions per sample (a learned position table stays
// whole), and attention as BlockSplit says. `fp32_gradients` holds the
// gradients in float32 under any precision (training.fp32_gradients).
std::vector<StageProfile> profile_stages(const ModelSpec& model, const ParallelPlan& plan,
                                         int64_t microbatch_size,
                                         Precision precision = Precision::Fp32,
                                         bool fp32_gradients = false);

// How the plan splits each Transformer block (tp, sequence parallelism,
// selective recompute), as the profiles cost it.
BlockSplit block_split(const ParallelPlan& plan);

}  // namespace pipelab
