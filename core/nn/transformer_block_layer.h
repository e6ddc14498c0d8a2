// TransformerBlockLayer: a GPT block (gpt_block.h) as a stage layer. The stage
// passes [batch, seq * dim] (sample-major, per_token_layer.h); the block works
// on the same floats as [batch * seq, dim].
//
// Dropout inside the block (spec.dropout) draws block_dropout.h's masks from
// the experiment's seed, the layer, and the micro-batch's ForwardInfo, so a
// recompute, or any other split, draws the same ones.
//
// Its backward needs far more than its input (the normalised inputs, QKV, the
// attention probabilities, the feed-forward's values: Korthikanti et al.'s
// per-block activations), so forward_keeping hands them to the stage as a
// GptBlockState, counted as Activations on the layer's allocator, and the
// backward halves read it. After backward_input the state drops what
// backward_weight does not read, so a zero-bubble schedule's wait between BI
// and BW holds less. The stateless forward and backward (evaluation, tests)
// run forward into a temporary cache.
//
// Tensor parallelism: the layer holds one BlockShard of the block (heads and
// MLP columns, gpt_block.h) and runs the block's two forward and two backward
// all-reduces through the stage's tensor-parallel all-reduce
// (connect_all_reduce), so they are the ones the schedule lists for the layer.
// Under sequence parallelism (BlockShard::sequence_parallel) the layer takes
// and gives the shard's slice of the sequence, [batch, seq / tp * dim], and
// runs the block's gathers and scatters (connect_sequence_parallel).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/nn/gpt_block.h"
#include "core/nn/layer.h"

namespace pipelab {

// One micro-batch's GptBlockCache, kept by the stage between F and B (or BW).
class GptBlockState : public MovableLayerState<Tensor> {
 public:
  GptBlockCache cache;
  int64_t bytes() const override;
  std::vector<Tensor*> tensors() override;
};

class TransformerBlockLayer : public Layer {
 public:
  // `seq` positions of config.dim values per sample. Weights start at
  // GptBlock's defaults; call init.
  TransformerBlockLayer(int index, const GptBlockConfig& config, const BlockShard& shard,
                        int64_t seq, DeviceAllocator* allocator);
  void init(uint64_t seed) {
    seed_ = seed;
    block_.init(seed, index());
  }

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;

  Tensor forward_keeping(const Tensor& x, const ForwardInfo& info,
                         std::unique_ptr<LayerState>& state) override;
  Tensor backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                             LayerState* state) override;
  void backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) override;

  std::vector<Tensor*> params() override { return block_.weights().list(); }
  std::vector<Tensor*> grads() override { return block_.gradients().list(); }
  void connect_all_reduce(InnerAllReduce all_reduce) override;
  void connect_sequence_parallel(InnerSequenceCollectives collectives) override;
  std::vector<Tensor*> sequence_partial_grads() override {
    return block_.sequence_partial_gradients();
  }

  GptBlock& block() { return block_; }

 private:
  Tensor rows_of(const Tensor& x) const;  // [batch, seq * dim] seen as [batch * seq, dim]
  // The micro-batch's dropout masks (block_dropout.h): none in evaluation.
  BlockDropout dropout_of(const ForwardInfo& info) const;
  Tensor run_forward(const Tensor& x, const ForwardInfo& info, GptBlockCache& cache) const;
  Tensor run_backward_input(const Tensor& x, const Tensor& dy, GptBlockCache& cache) const;

  const int64_t seq_;        // the whole sequence
  const int64_t positions_;  // the positions this shard holds: seq, or seq / tp
  uint64_t seed_ = 0;  // keys the dropout masks, as it keyed the weights
  GptBlock block_;
  // The block's collectives in the forward and in the backward (no
  // communication while not split).
  BlockCollectives forward_collectives_;
  BlockCollectives backward_collectives_;
};

}  // namespace pipelab
