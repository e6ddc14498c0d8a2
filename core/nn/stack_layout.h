// StackLayout: what each layer of one pipeline stage's slice of a model is on
// one tensor-parallel shard: its type, role, the shard's and the full layer's
// widths, a linear's block of the full weights, and the first feature an
// elementwise layer sees. Worked out and validated once, here, so the CPU
// Sequential (sequential.h) and the GPU's GpuSequential build the same stack
// and reject the same models with the same messages; they only allocate.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/tensor_parallel.h"
#include "core/plan/stage_profile.h"

namespace pipelab {

// The backend-neutral part of a tensor-parallel setup (TensorParallelSetup in
// sequential.h without its all-reduce function).
struct TensorParallelShard {
  int degree = 1;  // tp; 1 = no tensor parallelism
  int shard = 0;   // this shard, in [0, degree)
  // One role per model layer; ignored when degree == 1. A view: the caller's
  // vector must outlive the call to stack_layout.
  std::span<const TensorParallelRole> roles;
  bool has_all_reduce = false;  // whether the backend supplied its all-reduce
  // Sequence parallelism (with degree > 1, in a sequence model): the layers
  // between the embedding and the output layer hold one shard's slice of
  // the sequence.
  bool sequence_parallel = false;
  // Context parallelism (parallel.cp, in a sequence model): every layer holds
  // this rank's seq / cp positions of each sample (context_split.h).
  int cp = 1;
  int context = 0;  // this rank, in [0, cp)
};

// One layer of a stage as one shard holds it. In a sequence model (first
// layer an embedding) widths count every position's values, as LayerInfo's
// do: a sample is a row of tokens x per-token values.
struct LayerLayout {
  int index = 0;  // in the model
  LayerSpec spec;
  TensorParallelRole role = TensorParallelRole::Replicated;
  int64_t tokens = 1;    // positions per sample; 1 unless a sequence model
  int64_t full_in = 0;   // the whole layer's input width
  int64_t full_out = 0;  // the whole layer's output width
  // The image entering the layer (image_shape.h); invalid for flat values.
  ImageShape image_in;
  int64_t in = 0;        // this shard's input width
  int64_t out = 0;       // this shard's output width
  // Linear only: this shard's block of the full [token_in(), token_out()]
  // weight and of the full [1, token_out()] bias (init.h keys initial values by
  // position in the full layer, so the blocks say what to initialise).
  MatrixSlice weight;
  MatrixSlice bias;
  // Elementwise under Sharded: this shard sees features [offset, offset + out)
  // of the full layer (dropout's mask is keyed by the full feature index).
  int64_t feature_offset = 0;
  // VocabParallel and BlockParallel layers split themselves (an embedding's
  // vocabulary rows, a block's heads and MLP columns): this shard of tp.
  int tp = 1;
  int shard = 0;
  // Selective recompute (parallel.recompute = "selective"): a Transformer
  // block keeps no attention probabilities; its backward recomputes them.
  bool selective_recompute = false;
  // Sequence parallelism: the layer's output holds positions [first, first +
  // local_tokens()) of each sample, first = sequence_shard * local_tokens()
  // (in and out count those positions only; an embedding still reads every
  // id). The output layer instead gathers its input's slices first
  // (gathers_sequence): in is the slice (sequence_shards and sequence_shard
  // describe it), out covers every position.
  int sequence_shards = 1;
  int sequence_shard = 0;
  bool gathers_sequence = false;
  // Context parallelism: the layer holds rank `context` of cp's positions
  // (tokens / cp of them, context_split.h); in and out count those only, and
  // sequence parallelism splits them again.
  int cp = 1;
  int context = 0;
  // Expert parallelism (moe layers): the group size and this device's place in it.
  int ep = 1;
  int ep_rank = 0;
  // A sequence model whose embedding says position = rope: its embedding has
  // no position table and its Transformer blocks turn q and k (rotary.h).
  bool rotary = false;
  double rotary_theta = kDefaultRopeTheta;  // the embedding's rope_theta

  int64_t token_in() const { return full_in / tokens; }    // the whole layer's, per position
  int64_t token_out() const { return full_out / tokens; }  // the whole layer's, per position
  int64_t context_tokens() const { return tokens / cp; }   // this context rank's positions
  int64_t local_tokens() const { return context_tokens() / sequence_shards; }
  // Under sequence parallelism, whether its gradients come from its slice of
  // the sequence only (a replicated layer between embedding and output).
  bool sequence_partial() const {
    // A moe layer gathers the whole sequence itself (moe_layer.h): its gradients are whole.
    return sequence_shards > 1 && !gathers_sequence && role == TensorParallelRole::Replicated &&
           spec.type != LayerType::Moe;
  }
};

// The layers [begin, end) of `model` on shard `tp.shard`, in order. Throws
// std::invalid_argument naming the field when the stack cannot be built: a
// range outside the layer list, an empty or non-positive input shape, a linear
// with out <= 0, an embedding that is not the first layer or has no vocab or
// dim, a transformer_block outside a sequence model, or a tensor-parallel
// setup that does not fit (roles of the wrong size or kind, a width tp does
// not divide, roles that do not pair up, a missing all-reduce; under sequence
// parallelism a sequence length tp does not divide, or a linear pair
// between blocks; under context parallelism a sequence 2 cp does not divide).
std::vector<LayerLayout> stack_layout(const ModelSpec& model, int begin, int end,
                                      const TensorParallelShard& tp);

}  // namespace pipelab
