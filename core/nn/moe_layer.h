// MoeLayer: a Mixture-of-Experts layer on the CPU (model/mixture_of_experts.h
// describes it; moe_routing.h routes). Each row of x is `tokens` tokens of
// `dim` values; per micro-batch:
//   probabilities = softmax(x Wg)            (the gate, [rows, E], no bias)
//   routing       = top_k experts per token, capacity per expert
//   dispatch      = [E x capacity, dim]: each kept assignment's token in its slot
//   expert e      = gelu(X W1_e + b1_e) W2_e + b2_e  on its capacity's rows
//   y             = x + sum over kept assignments of weight x expert output
//
// Expert parallelism: a device holds experts [rank L, (rank + 1) L) of E, L =
// E / ep. The dispatch buffer's rows are expert-major, so the rows for member
// j's experts are chunk j; an all-to-all hands each member the chunks for its
// experts from every member (ep chunks of L x capacity rows), the experts run
// on them, and a second all-to-all returns the outputs (the same exchange
// undoes itself). The backward does the reverse pair. Under ep = 1 both are
// no-ops and the layer is the whole model's.
//
// A Transformer block with experts (transformer_block_layer.h) holds one as
// its MLP and calls mix and mix_backward on Norm2's output: the same gate,
// routing and experts, without the layer's residual.
//
// Sequence parallelism (MoeSequenceSlice, between sequence-parallel blocks):
// the layer takes and gives one tensor-parallel shard's slice of the sequence
// but keeps every expert whole, as under plain tp. Its forward all-gathers
// the slices so that every shard routes the whole sequence alike (capacity is
// per micro-batch, so routing, drops and the aux loss are tp 1's), computes
// the whole output and keeps its own positions. Its backward all-gathers the
// output gradient (and the input again) and runs the whole backward on every
// shard, keeping its positions of dx. The alternative, a backward of its own
// rows only, would reduce-scatter a partial input gradient (the same bytes
// as gathering dy) but leave every expert's weight gradient partial, to be
// all-reduced each step (parameters' bytes, far more than a micro-batch's
// tokens), and it would save no GEMM work: the experts still run every
// slot. So the gradients come out whole and equal on every shard, and none
// is summed.
//
// Initial values depend on the seed, the layer and the global expert index
// only, so every ep split starts from the same model. The backward's input
// half also adds the weight gradients (the expert GEMMs need the exchanged
// gradients, which exist only there); the weight half adds nothing.
#pragma once

#include <memory>

#include "core/model/mixture_of_experts.h"
#include "core/nn/all_reduce.h"
#include "core/nn/layer.h"
#include "core/nn/moe_tensors.h"

namespace pipelab {

// Which slice of the sequence a standalone moe layer takes and gives
// (shards = tp under sequence parallelism; 1: the whole sequence).
struct MoeSequenceSlice {
  int shards = 1;
  int shard = 0;
};

class MoeLayer : public Layer {
 public:
  MoeLayer(int index, const MoeShape& shape, double aux_loss_weight, ExpertShard shard,
           DeviceAllocator* allocator, MoeSequenceSlice sequence = {});

  void init(uint64_t seed);

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  Tensor forward_keeping(const Tensor& x, const ForwardInfo& info,
                         std::unique_ptr<LayerState>& state) override;
  Tensor backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                             LayerState* state) override;
  void backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) override;
  void connect_experts(ExpertConnection connection) override;
  // Under MoeSequenceSlice::shards > 1: the gathers of the slices.
  void connect_sequence_parallel(InnerSequenceCollectives collectives) override;

  // The experts' part alone, on tokens [rows, dim]: the gate-weighted sum of
  // the chosen experts' outputs ([rows, dim], 0 for a dropped token), its
  // routing and what the backward reads kept in `state`. mix_backward: the
  // gradient of `tokens` from that of the mix, adding the weight gradients.
  // Under expert tensor parallelism (ExpertShard::tp > 1) the tokens and
  // their gradients are whole on every shard, which all route alike; tp_sum
  // sums over the shards the experts' partial outputs (forward, before the
  // combine) and W1's partial input gradients (backward), so the gate's
  // and b2's gradients come out equal on every shard. Under sequence
  // parallelism as well (ExpertShard::partial_outputs) the caller passes the
  // whole sequence's tokens and no tp_sum: mix returns this shard's partial
  // sum of the combined outputs and mix_backward its partial gradient of the
  // tokens, for the caller to reduce-scatter; the gate's gradient is partial
  // too (sequence_partial_grads), and only shard 0 adds the aux loss's.
  Tensor mix(const Tensor& tokens, const ForwardInfo& info, std::unique_ptr<LayerState>& state,
             const AllReduceFunction& tp_sum = all_reduce_nothing);
  Tensor mix_backward(const Tensor& tokens, const Tensor& mix_grad, LayerState* state,
                      const AllReduceFunction& tp_sum = all_reduce_nothing);
  std::vector<Tensor*> params() override;
  std::vector<Tensor*> grads() override;
  std::vector<Tensor*> expert_grads() override;
  std::vector<Tensor*> sequence_partial_grads() override;

  const MoeShape& shape() const { return shape_; }
  int64_t local_experts() const { return static_cast<int64_t>(experts_.size()); }
  Tensor& gate() { return gate_; }
  Tensor& gate_grad() { return gate_grad_; }
  using Expert = BasicExpertTensors<Tensor>;  // moe_tensors.h
  Expert& expert(int64_t local) { return experts_[static_cast<size_t>(local)]; }

 private:
  struct Kept;
  // The layer on the whole sequence: x [rows, tokens x dim] (the residual added).
  Tensor forward_whole(const Tensor& x, const ForwardInfo& info,
                       std::unique_ptr<LayerState>& state);
  Tensor backward_whole(const Tensor& x, const Tensor& dy, LayerState* state);
  // Under sequence parallelism: every shard's slices of `local` gathered,
  // [rows, tokens x dim]; and this shard's positions of `whole`.
  Tensor gather_slices(const Tensor& local, bool in_forward);
  Tensor own_positions(const Tensor& whole) const;
  // The all-to-all of `values` (ep chunks of rows), or nothing under ep = 1.
  void exchange(Tensor& values, bool in_forward);
  // Slot rows as they travel, [member][local expert][capacity], reordered to
  // [local expert][member][capacity] for the experts' GEMMs (to_expert_major),
  // or back.
  Tensor reorder_slots(const Tensor& from, bool to_expert_major) const;
  // The micro-batch's weight in the step's loss (ExpertConnection::step_tokens).
  double microbatch_share(int64_t rows) const;
  int64_t hidden_width() const { return shape_.ffn / shard_.tp; }  // each expert's, on this shard

  const MoeShape shape_;
  const double aux_loss_weight_;
  const ExpertShard shard_;
  const MoeSequenceSlice sequence_;
  InnerSequenceCollectives sequence_collectives_;  // set under sequence_.shards > 1
  Tensor gate_;       // [dim, E], Weights
  Tensor gate_grad_;  // [dim, E], Gradients
  std::vector<Expert> experts_;
  ExpertConnection connection_;
};

}  // namespace pipelab
