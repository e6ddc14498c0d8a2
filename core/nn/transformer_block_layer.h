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
// runs the block's gathers and scatters (connect_sequence_parallel). Under
// context parallelism it takes and gives the rank's positions, [batch, seq /
// cp * dim] (divided by tp again under sequence parallelism), and runs the
// attention's gathers and scatters over the context-parallel group
// (connect_context_parallel).
//
// Mixture of experts (a transformer_block with experts > 0, Switch and
// GShard's block): the MLP is a MoeLayer's gate and experts (moe_layer.h),
//   y = h + drop3(MoE(norm2(h))),
// the GptBlock holding no FFN weights (GptBlockConfig::dense_mlp false). The
// experts report their routing and exchange tokens over the expert-parallel
// group like a moe layer's (connect_experts), and add their weight gradients
// in the backward's input half. Under tensor parallelism each expert's FFN
// is split over the shards as the dense MLP is (ExpertShard::tp, the block's
// tp), its partial outputs summed by the block's all-reduce. Under sequence
// parallelism too, the block gathers Norm2's output before the gate (every
// shard routes the whole sequence alike), the experts' partial combined
// outputs are reduce-scattered onto the shard's slice, where the dropout and
// residual apply, and the backward mirrors it (gather, gather, scatter), as
// the dense MLP's collectives.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/nn/block_state.h"
#include "core/nn/gpt_block.h"
#include "core/nn/layer.h"
#include "core/nn/moe_layer.h"

namespace pipelab {

// One micro-batch's GptBlockCache, kept by the stage between F and B (or BW).
// With experts, `experts` holds the MoE MLP's (MoeLayer::mix).
using GptBlockState = BasicBlockState<Tensor, GptBlockCache>;

// The MLP of a block with experts: a moe layer's shape (its ffn the block's),
// aux_loss_weight, and which experts this device holds.
struct BlockExperts {
  MoeShape shape;
  double aux_loss_weight = 0.01;
  ExpertShard shard;
};

class TransformerBlockLayer : public Layer {
 public:
  // `seq` positions of config.dim values per sample. Weights start at
  // GptBlock's defaults; call init. With `experts`, config.dense_mlp must be
  // false and the experts split as the block (throws std::invalid_argument
  // otherwise).
  TransformerBlockLayer(int index, const GptBlockConfig& config, const BlockShard& shard,
                        int64_t seq, DeviceAllocator* allocator,
                        const BlockExperts* experts = nullptr);
  void init(uint64_t seed) {
    seed_ = seed;
    block_.init(seed, index());
    if (experts_) experts_->init(seed);
  }

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;

  Tensor forward_keeping(const Tensor& x, const ForwardInfo& info,
                         std::unique_ptr<LayerState>& state) override;
  Tensor backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                             LayerState* state) override;
  void backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) override;

  std::vector<Tensor*> params() override;
  std::vector<Tensor*> grads() override;
  void connect_experts(ExpertConnection connection) override;
  std::vector<Tensor*> expert_grads() override;
  void connect_all_reduce(InnerAllReduce all_reduce) override;
  void connect_sequence_parallel(InnerSequenceCollectives collectives) override;
  void connect_context_parallel(InnerContextCollectives collectives) override;
  std::vector<Tensor*> sequence_partial_grads() override;

  GptBlock& block() { return block_; }
  MoeLayer* experts() { return experts_.get(); }  // null for a dense MLP

 private:
  Tensor rows_of(const Tensor& x) const;  // [batch, seq * dim] seen as [batch * seq, dim]
  // The micro-batch's dropout masks (block_dropout.h): none in evaluation.
  BlockDropout dropout_of(const ForwardInfo& info) const;
  Tensor run_forward(const Tensor& x, const ForwardInfo& info, GptBlockState& state);
  Tensor run_backward_input(const Tensor& x, const Tensor& dy, GptBlockState& state);
  // y = h + drop3(MoE(norm2_out)) after the attention half, and its backward
  // to d_norm2_out.
  void experts_forward(const ForwardInfo& info, GptBlockState& state, Tensor& y);
  void experts_backward(const Tensor& dy, GptBlockState& state);

  const int64_t seq_;        // the whole sequence
  const int64_t positions_;  // the positions this shard holds: seq, over cp, over tp under sequence
                             // parallelism
  uint64_t seed_ = 0;  // keys the dropout masks, as it keyed the weights
  GptBlock block_;
  std::unique_ptr<MoeLayer> experts_;  // the MLP of a block with experts
  // The block's collectives in the forward and in the backward (no
  // communication while not split).
  BlockCollectives forward_collectives_;
  BlockCollectives backward_collectives_;
};

}  // namespace pipelab
