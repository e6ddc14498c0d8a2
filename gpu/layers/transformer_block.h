// GpuTransformerBlock: core/nn/transformer_block_layer.h's pre-norm GPT block
// on the CUDA backend, the same math step by step as core/nn/gpt_block.cpp
// (cuBLAS linears and attention, the norm, activation, dropout and residual
// kernels), the same weight layout and shards (Megatron's heads and MLP
// columns), the same two forward and two backward all-reduces through the
// stage's tensor-parallel all-reduce, and the same dropout masks (keyed by
// seed, layer and the micro-batch's ForwardInfo, so a recompute draws them
// again).
//
// Grouped-query attention and rotary position embeddings as GptBlock has
// them: the attention core reads the query-group layout, and q and k are
// turned by core's angles (kernels/rotary.h) before it.
//
// Initial weights: a CPU GptBlock of the same shard is initialised on the host
// (gpt_block.h's formula) and copied up, so they equal the CPU's bit for bit;
// params() lists them in GptBlockTensors::list()'s order.
//
// Sequence parallelism (BlockShard::sequence_parallel, tp > 1) as GptBlock:
// x, y, dx and dy hold the shard's slice of the sequence, the norms, dropouts
// and residual adds run on it, the all-reduces become reduce-scatters onto
// the slices, and the norm outputs are all-gathered for QKV and FFN1
// (connect_sequence_parallel: the stage's gather and scatter, through
// gpu/layers/sequence_split.h's staging, the CPU's layout of the shards).
//
// forward_keeping hands the stage a GpuBlockState (GptBlockCache's tensors, as
// Activations); under selective recompute it holds no probabilities and the
// backward recomputes them (gpu/layers/attention.h). After backward_input the
// state drops what backward_weight does not read, as on the CPU. Under
// bf16-mixed the values kept only for GEMMs are kept in bf16, rounded once in
// the forward (kept_bf16.h lists them, kept_gemm_input.h says why the
// results are the same bits).
//
// Context parallelism (BlockShard::cp > 1, as GptBlock): x, y, dx and dy
// hold the rank's seq / cp positions of every sample (two chunks,
// context_split.h; under sequence parallelism the shard's slice of them);
// rotary angles, the causal mask and the dropout masks follow the global
// positions. The attention packs the rank's k and v, all-gathers them over
// the context-parallel group (connect_context_parallel; gpu/layers/
// context_split.h's staging, the CPU's layout), attends its queries to the
// whole sequence (gpu/layers/attention.h's context-parallel form, unfused;
// keeping no P, as the CPU's ring attention keeps none), and in the backward
// gathers them again and reduce-scatters dk and dv home.
// q, k and v stay float32 then (kept_bf16.h). Blocks with experts refuse it.
//
// Mixture of experts (a transformer_block with experts > 0): the MLP is a
// GpuMoe's gate and experts (GpuMoe::mix on Norm2's output), as
// TransformerBlockLayer does it on the CPU:
//   y = h + drop3(MoE(norm2(h)))
// with the same routing (on the host, by core's code), the same order of
// additions, and the same report of each micro-batch's routing and auxiliary
// loss (connect_experts goes to the GpuMoe). The experts add their weight
// gradients in the backward's input half. Under tensor parallelism, with
// sequence parallelism or without, they split, gather and scatter as the
// CPU block's (transformer_block_layer.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/nn/block_state.h"
#include "core/nn/gpt_block.h"
#include "core/nn/transformer_block_layer.h"
#include "gpu/kernels/block_dropout_math.h"
#include "gpu/layers/kept_bf16.h"
#include "gpu/layers/kept_gemm_input.h"
#include "gpu/layers/layer.h"
#include "gpu/layers/moe.h"
#include "gpu/layers/sequence_split.h"
#include "gpu/memory/device_buffer.h"

namespace pipelab::gpu {

// GptBlockTensors on the device (empty tensors where the config has none).
using GpuBlockTensors = BasicBlockTensors<DeviceTensor>;

// GptBlockCache's tensors on the device: what forward keeps, then what
// backward_input keeps for backward_weight.
// The values kept only for GEMMs are KeptGemmInputs: bf16 under bf16-mixed
// where kept_bf16.h says so, float32 otherwise.
struct GpuBlockCache {
  int64_t batch = 0;
  int64_t seq = 0;
  BlockDropoutKey dropout;  // the forward's (p = 0: none)
  KeptGemmInput norm1_out, qkv, attention_out, norm2_out, activation_out;
  DeviceTensor probabilities, h, ffn1_out;
  DeviceTensor lse;  // the fused attention's log-sum-exp (gpu/layers/attention.h), or empty
  DeviceTensor d_activation_out, d_ffn1_out, d_norm2_out, d_h, d_attention_out, d_qkv,
      d_norm1_out, d_proj_out, d_ffn2_out;
  // Sequence parallelism: the norm outputs gathered again for the QKV and FFN1
  // weight gradients (the residual stream's tensors hold the shard's rows).
  KeptGemmInput norm1_gathered, norm2_gathered;

  // Every tensor above, for BasicBlockState's bytes() and tensors().
  template <typename Cache>
  static auto all_tensors(Cache& cache) {
    return std::array{&cache.norm1_out.stored(),
                      &cache.qkv.stored(),
                      &cache.probabilities,
                      &cache.lse,
                      &cache.attention_out.stored(),
                      &cache.h,
                      &cache.norm2_out.stored(),
                      &cache.ffn1_out,
                      &cache.activation_out.stored(),
                      &cache.d_activation_out,
                      &cache.d_ffn1_out,
                      &cache.d_norm2_out,
                      &cache.d_h,
                      &cache.d_attention_out,
                      &cache.d_qkv,
                      &cache.d_norm1_out,
                      &cache.d_proj_out,
                      &cache.d_ffn2_out,
                      &cache.norm1_gathered.stored(),
                      &cache.norm2_gathered.stored()};
  }
};

// With experts, `experts` holds the MoE MLP's (GpuMoe::mix).
using GpuBlockState = BasicBlockState<DeviceTensor, GpuBlockCache>;

class GpuTransformerBlock : public GpuLayer {
 public:
  // `seq` positions of config.dim values per sample; weights initialised from
  // (seed, index) as the CPU's. Throws like check_gpt_block, and as
  // TransformerBlockLayer for `experts` (config.dense_mlp false, its shard the block's).
  GpuTransformerBlock(int index, const GptBlockConfig& config, const BlockShard& shard, int64_t seq,
                      uint64_t seed, DeviceContext& context, const BlockExperts* experts = nullptr);

  DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) override;
  DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                              const ForwardInfo& info) override;
  void backward_weight(const DeviceTensor& x, const DeviceTensor& dy) override;

  DeviceTensor forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                               std::unique_ptr<LayerState>& state) override;
  DeviceTensor backward_input_with(const DeviceTensor& x, const DeviceTensor& dy,
                                   const ForwardInfo& info, LayerState* state) override;
  void backward_weight_with(const DeviceTensor& x, const DeviceTensor& dy,
                            LayerState* state) override;

  // The block's tensors, then the experts' (gate, then each expert's).
  std::vector<DeviceTensor*> params() override;
  std::vector<DeviceTensor*> grads() override;
  // With experts, theirs instead of the dense MLP's, which are empty then and
  // not among params() (keep_bf16_copies looks each one up there). The
  // attention core's batched GEMMs (attention.h) read no weight: under
  // bf16-mixed they round their inputs themselves.
  std::vector<DeviceTensor*> gemm_weights() override {
    std::vector<DeviceTensor*> weights;
    for (DeviceTensor* weight : {&weights_.qkv_weight, &weights_.proj_weight, &weights_.ffn1_weight,
                                 &weights_.ffn2_weight})
      if (!weight->empty()) weights.push_back(weight);
    if (experts_) {
      const std::vector<DeviceTensor*> expert_weights = experts_->gemm_weights();
      weights.insert(weights.end(), expert_weights.begin(), expert_weights.end());
    }
    return weights;
  }
  void connect_all_reduce(InnerAllReduce all_reduce) override {
    all_reduce_ = std::move(all_reduce);
  }
  void connect_experts(ExpertConnection connection) override;
  std::vector<DeviceTensor*> expert_grads() override;
  void connect_sequence_parallel(InnerSequenceCollectives collectives) override {
    sequence_ = std::move(collectives);
  }
  std::vector<DeviceTensor*> sequence_partial_grads() override;
  void connect_context_parallel(InnerContextCollectives collectives) override {
    context_ = std::move(collectives);
  }

 private:
  BlockDropoutKey dropout_of(const ForwardInfo& info) const;
  AttentionShape attention_shape(int64_t batch) const;
  // Whether the forward keeps P: unless recomputed (selective recomputation)
  // or under context parallelism, whose memory the simulator counts as the
  // CPU's ring attention keeps it (no P).
  bool keeps_probabilities() const {
    return config_.keep_attention_probabilities && !shard_.splits_context();
  }
  // Context parallelism: the rank's global positions on the device (null
  // without it), the rank's place in the sequence, the stage's gather or
  // scatter over the context-parallel group, and every rank's k and v of the
  // sequence ([key_rows, key_width], packed) gathered from the kept QKV rows.
  const int64_t* device_positions() const;
  ContextSlice context_slice(int64_t batch) const;
  DeviceSequenceCollective context_collective(bool gather, bool in_forward) const;
  DeviceTensor gathered_keys(const KeptGemmInput& qkv, const AttentionShape& shape,
                             bool in_forward) const;
  DeviceTensor run_forward(const DeviceTensor& x, const ForwardInfo& info, GpuBlockState& state);
  DeviceTensor run_backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                  GpuBlockState& state);
  void run_backward_weight(const DeviceTensor& x, const DeviceTensor& dy,
                           const GpuBlockCache& cache);
  // The attention half, up to norm2_out (and h), then the MLP's: the dense
  // feed-forward or the experts, y = h + drop3(MLP(norm2_out)).
  void attention_forward(const DeviceTensor& x, const ForwardInfo& info, GpuBlockCache& cache);
  DeviceTensor feed_forward(GpuBlockCache& cache);
  DeviceTensor experts_forward(const ForwardInfo& info, GpuBlockState& state);
  // Backward: the MLP's, to d_norm2_out, then the attention half's to dx.
  void feed_forward_backward(const DeviceTensor& dy, GpuBlockCache& cache);
  void experts_backward(const DeviceTensor& dy, GpuBlockState& state);
  // The experts' sum over the tensor-parallel shards (the block's all-reduce), empty at tp 1.
  GpuMoe::TensorParallelSum experts_tensor_parallel_sum(bool in_forward);
  DeviceTensor attention_backward(const DeviceTensor& x, const DeviceTensor& dy,
                                  GpuBlockCache& cache);
  // Sequence parallelism (core/nn/gpt_block.h, as GptBlock does it): the
  // shard's slice, the stage's gather or scatter, the whole sequence of a
  // local norm output (local's own data without it), and the sum of the
  // shards' partial `whole` onto `local` (the all-reduce in place, or a
  // reduce-scatter).
  SequenceSlice sequence_slice(int64_t batch) const;
  DeviceSequenceCollective sequence_collective(bool gather, bool in_forward) const;
  const float* whole_sequence(const DeviceTensor& local, const SequenceSlice& slice,
                              DeviceTensor& whole, bool in_forward) const;
  void sum_partials(DeviceTensor& whole, const SequenceSlice& slice, DeviceTensor& local,
                    bool in_forward) const;
  // A column-parallel linear (QKV, FFN1) on a kept norm output: on the whole
  // sequence gathered from it under sequence parallelism (`whole` holds it
  // after the call), on it as kept otherwise.
  void norm_output_linear(const KeptGemmInput& norm_out, const SequenceSlice& slice,
                          DeviceTensor& whole, const DeviceTensor& weight, const DeviceTensor& bias,
                          float* y) const;
  // Under sequence parallelism, a kept norm output gathered again for its
  // weight gradient, kept as kept_bf16.h says.
  KeptGemmInput gathered_again(const KeptGemmInput& norm_out, const SequenceSlice& slice) const;
  // The block's norm (layer norm or RMSNorm) on `rows` rows of dim values.
  void norm_forward(const DeviceTensor& gain, const DeviceTensor& bias, const float* x,
                    int64_t rows, float* y) const;
  void norm_backward_input(const DeviceTensor& gain, const float* x, const float* dy,
                           int64_t rows, float* dx) const;
  void norm_backward_weight(const float* x, const float* dy, int64_t rows, DeviceTensor& gain_grad,
                            DeviceTensor& bias_grad) const;
  // y = residual + dropout(y + bias) at `site`: the residual add after proj or ffn2.
  void bias_dropout_residual(DeviceTensor& y, const float* residual, const DeviceTensor& bias,
                             const GpuBlockCache& cache, uint64_t site) const;
  // The site's mask on the shard's rows, from `in` to `out` (may be equal).
  void drop(const float* in, float* out, const GpuBlockCache& cache, uint64_t site) const;
  // The gradient of a dropped output: `grad` through the site's mask into
  // `masked`, or `grad` itself without dropout.
  const float* through_dropout(const float* grad, const GpuBlockCache& cache, uint64_t site,
                               DeviceTensor& masked) const;
  // The same, then gathered over the whole sequence into `kept` under
  // sequence parallelism (GptBlock::output_gradient).
  const float* output_gradient(const float* grad, const GpuBlockCache& cache, uint64_t site,
                               DeviceTensor& kept) const;
  DeviceTensor rows_tensor(int64_t rows, int64_t cols) const;
  // Under rotary embeddings: turns q and k of `qkv` (direction +1), or their
  // gradients back (-1), by the uploaded angles.
  void turn_rotary(DeviceTensor& qkv, const AttentionShape& shape, float direction) const;

  const GptBlockConfig config_;
  const BlockShard shard_;
  const int64_t seq_;             // the whole sequence
  const int64_t rank_positions_;  // the positions this context rank holds: seq, or seq / cp
  const int64_t positions_;       // the positions this shard holds: the rank's, or theirs / tp
  const uint64_t seed_;
  const BlockKeptBf16 kept_bf16_;  // which kept values are bf16
  GpuBlockTensors weights_;
  GpuBlockTensors gradients_;
  // core's rotary_table at the rank's positions (Workspace), empty without rotary embeddings.
  DeviceTensor rotary_cos_, rotary_sin_;
  std::vector<int64_t> context_positions_;  // cp > 1: the rank's global positions
  DeviceBuffer device_positions_;           // the same on the device
  std::unique_ptr<GpuMoe> experts_;  // the MLP of a block with experts
  InnerAllReduce all_reduce_;  // set when the block is split over shards
  InnerSequenceCollectives sequence_;  // set under sequence parallelism
  InnerContextCollectives context_;    // set under context parallelism
};

}  // namespace pipelab::gpu
