// GpuMoe: a Mixture-of-Experts layer on the CUDA backend, the twin of
// core/nn/moe_layer.h (model/mixture_of_experts.h describes it). Per
// micro-batch of `rows` tokens:
//   the gate's logits x Wg                  cuBLAS
//   softmax, top_k routing, capacity        on the host, by core/nn/moe_routing.h
//   dispatch into [E x capacity, dim] slots a kernel (kernels/moe.h)
//   each expert's gelu(X W1 + b1) W2 + b2   cuBLAS and the activation kernel
//   y = x + weighted expert outputs         a kernel
// The backward mirrors it; the gate's gradient (the combine weights' and the
// load-balancing loss's, through the softmax) is computed on the host by the
// same core functions as the CPU's, then two GEMMs on the device.
//
// Why routing runs on the host: capacity is filled choice by choice in token
// order, a sequential, data-dependent fill whose exact result the CPU layer
// defines. Copying the E gate values per token down once per micro-batch and
// calling core's routing keeps the kept and dropped assignments, the expert
// load and the auxiliary loss identical to the CPU's for the same logits,
// for the price of one small copy each way.
//
// Expert parallelism (ep > 1), as the CPU layer does it: this device holds
// experts [rank L, (rank + 1) L) of E, L = E / ep; the dispatch buffer goes
// through the connection's all-to-all (the backend's expert_all_to_all),
// the local experts run on their ep x capacity rows in expert-major order
// (expert_major_block), and a second all-to-all brings the outputs back; the
// backward does the reverse pair. Under ep = 1 there is neither exchange nor
// reorder.
//
// Sequence parallelism (MoeSequenceSlice, between sequence-parallel blocks),
// as the CPU layer does it: x, y, dx and dy hold one shard's slice of the
// sequence; the forward all-gathers the slices (gather_sequence, through the
// stage's connection) and runs the whole layer, keeping its own positions;
// the backward gathers the input and dy again and runs the whole backward, so
// every shard's gradients are whole and none is summed (moe_layer.h says why).
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/model/mixture_of_experts.h"
#include "core/nn/moe_layer.h"
#include "gpu/layers/layer.h"

namespace pipelab::gpu {

class GpuMoe : public GpuLayer {
 public:
  // Initial values come from core's MoeLayer for the same index, shard and
  // seed, so they equal the CPU's bit for bit. Throws std::invalid_argument
  // when ep does not divide the experts or the shards do not divide the sequence.
  GpuMoe(int index, const MoeShape& shape, double aux_loss_weight, ExpertShard shard, uint64_t seed,
         DeviceContext& context, MoeSequenceSlice sequence = {});

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  DeviceTensor forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                               std::unique_ptr<LayerState>& state) override;
  DeviceTensor backward_input_with(const DeviceTensor& x, const DeviceTensor& dy,
                                   const ForwardInfo& info, LayerState* state) override;
  void backward_weight_with(const DeviceTensor& x, const DeviceTensor& dy,
                            LayerState* state) override;
  void connect_experts(ExpertConnection connection) override;
  // Under MoeSequenceSlice::shards > 1: the gathers of the slices.
  void connect_sequence_parallel(InnerSequenceCollectives collectives) override {
    sequence_collectives_ = std::move(collectives);
  }

  // The experts' part on `rows` tokens [rows, dim], as MoeLayer::mix (a
  // transformer_block with experts calls it on Norm2's output): the
  // gate-weighted sum of each token's kept choices, [rows, dim], plus
  // `residual` [rows, dim] when given (added last, as the layers add it).
  // mix_backward: the tokens' gradient from the mix's gradient `mix_grad`,
  // plus `residual_grad` when given; it adds the weight gradients.
  // Under expert tensor parallelism (ExpertShard::tp > 1, moe_layer.h) each
  // expert holds its shard's hidden columns, and tp_sum sums over the shards
  // the experts' partial outputs (forward) and W1's partial input gradients
  // (backward), as the CPU layer does. Under sequence parallelism too
  // (ExpertShard::partial_outputs) the caller passes the whole sequence's
  // tokens and no tp_sum, and reduce-scatters the partial results; the
  // gate's gradient is partial (sequence_partial_grads), as on the CPU.
  using TensorParallelSum = std::function<void(DeviceTensor& values)>;
  DeviceTensor mix(const float* tokens, int64_t rows, const float* residual,
                   const ForwardInfo& info, std::unique_ptr<LayerState>& state,
                   const TensorParallelSum& tp_sum = {});
  DeviceTensor mix_backward(const float* tokens, const float* mix_grad, int64_t rows,
                            const float* residual_grad, LayerState* state,
                            const TensorParallelSum& tp_sum = {});
  std::vector<DeviceTensor*> params() override;
  std::vector<DeviceTensor*> grads() override;
  std::vector<DeviceTensor*> expert_grads() override;
  std::vector<DeviceTensor*> sequence_partial_grads() override;
  // The experts' w1 and w2: under bf16-mixed their GEMMs read bf16 copies. The
  // gate stays float32, as Switch Transformer's selective precision keeps the
  // router: top-k choices from bf16 logits flip on rounding.
  std::vector<DeviceTensor*> gemm_weights() override;

 private:
  struct Kept;
  // The layer on the whole sequence: x [rows, tokens x dim] (the residual added).
  DeviceTensor forward_whole(const DeviceTensor& x, const ForwardInfo& info,
                             std::unique_ptr<LayerState>& state);
  DeviceTensor backward_whole(const DeviceTensor& x, const DeviceTensor& dy, LayerState* state);
  // Under sequence parallelism: every shard's slices of `local` gathered,
  // [rows, tokens x dim]; and this shard's positions of `whole`.
  DeviceTensor gather_slices(const DeviceTensor& local, bool in_forward);
  DeviceTensor own_positions(const DeviceTensor& whole) const;
  using Expert = BasicExpertTensors<DeviceTensor>;  // core/nn/moe_tensors.h
  // The micro-batch's weight in the step's loss (ExpertConnection::step_tokens).
  double microbatch_share(int64_t rows) const;
  int64_t local_experts() const { return static_cast<int64_t>(experts_.size()); }
  int64_t hidden_width() const { return shape_.ffn / shard_.tp; }  // each expert's, on this shard
  // The all-to-all of `values` (ep slices of slot rows), or nothing under ep = 1.
  void exchange(DeviceTensor& values, bool in_forward);
  // Slot rows reordered from member-major to expert-major (or back), in
  // blocks of `capacity` rows; under ep = 1 `from` itself.
  DeviceTensor reorder_slots(DeviceTensor from, int64_t capacity, bool to_expert_major) const;
  DeviceTensor tensor(int64_t rows, int64_t cols, MemoryCategory category) const;

  const MoeShape shape_;
  const double aux_loss_weight_;
  const ExpertShard shard_;
  const MoeSequenceSlice sequence_;
  InnerSequenceCollectives sequence_collectives_;  // set under sequence_.shards > 1
  DeviceTensor gate_;       // [dim, E], Weights
  DeviceTensor gate_grad_;  // [dim, E], Gradients
  std::vector<Expert> experts_;
  ExpertConnection connection_;
};

}  // namespace pipelab::gpu
