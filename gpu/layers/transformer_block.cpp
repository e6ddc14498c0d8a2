#include "gpu/layers/transformer_block.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <stdexcept>
#include <string>

#include "core/nn/counter_rng.h"
#include "gpu/kernels/activations.h"
#include "gpu/kernels/bias.h"
#include "gpu/kernels/block_dropout.h"
#include "gpu/kernels/column_reduce.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/layer_norm.h"
#include "gpu/kernels/residual.h"
#include "gpu/kernels/rms_norm.h"
#include "gpu/kernels/rotary.h"
#include "gpu/kernels/swiglu.h"
#include "gpu/layers/attention.h"
#include "gpu/layers/context_split.h"
#include "gpu/layers/cublas_gemm.h"
#include "gpu/layers/sequence_split.h"

namespace pipelab::gpu {
namespace {

// The host block's tensors on the device: values (Weights) or zeros of the
// same shapes (Gradients). Empty host tensors stay empty.
GpuBlockTensors upload(GptBlockTensors& host, CachingAllocator* allocator, bool values) {
  GpuBlockTensors device;
  for (size_t i = 0; i < GptBlockTensors::kMembers.size(); ++i) {
    const Tensor& from = host.*GptBlockTensors::kMembers[i];
    if (from.empty()) continue;
    device.*GpuBlockTensors::kMembers[i] =
        values ? DeviceTensor::from_host(from, allocator, MemoryCategory::Weights)
               : DeviceTensor(from.rows(), from.cols(), allocator, MemoryCategory::Gradients);
  }
  return device;
}

GptBlock initial_block(const GptBlockConfig& config, const BlockShard& shard, uint64_t seed,
                       int index) {
  GptBlock block(config, shard);  // throws for a config the CPU rejects
  block.init(seed, index);
  return block;
}

const DeviceTensor* optional(const DeviceTensor& t) { return t.empty() ? nullptr : &t; }
DeviceTensor* optional(DeviceTensor& t) { return t.empty() ? nullptr : &t; }

bool active(const BlockDropoutKey& dropout) { return dropout.p > 0.0f; }

// The positions a context rank holds of every sequence: all, or seq / cp.
int64_t rank_positions_of(int64_t seq, const BlockShard& shard) { return seq / shard.cp; }

// The positions a shard's input and output hold: the rank's, or its slice of
// them under sequence parallelism.
int64_t positions_of(int64_t seq, const BlockShard& shard) {
  const int64_t rank = rank_positions_of(seq, shard);
  return shard.splits_sequence() ? rank / shard.tp : rank;
}

std::vector<DeviceTensor*> joined(std::vector<DeviceTensor*> list,
                                  const std::vector<DeviceTensor*>& more) {
  list.insert(list.end(), more.begin(), more.end());
  return list;
}

}  // namespace

GpuTransformerBlock::GpuTransformerBlock(int index, const GptBlockConfig& config,
                                         const BlockShard& shard, int64_t seq, uint64_t seed,
                                         DeviceContext& context, const BlockExperts* experts)
    : GpuLayer(LayerType::TransformerBlock, index, positions_of(seq, shard) * config.dim,
               positions_of(seq, shard) * config.dim, context),
      config_(config),
      shard_(shard),
      seq_(seq),
      rank_positions_(rank_positions_of(seq, shard)),
      positions_(positions_of(seq, shard)),
      seed_(seed),
      kept_bf16_(block_kept_bf16(context.keeps_bf16_gemm_inputs(), shard.splits_sequence(),
                                 experts != nullptr, shard.splits_context())) {
  check_block_sequence(shard, seq);       // as GptBlock::forward_attention
  if (experts && shard.splits_context())  // as core's check_trainable
    throw std::invalid_argument("layer " + std::to_string(index) +
                                ": a transformer_block with experts does not split the sequence "
                                "over context-parallel ranks");
  GptBlock host = initial_block(config, shard, seed, index);
  weights_ = upload(host.weights(), &context.allocator(), true);
  gradients_ = upload(host.gradients(), &context.allocator(), false);
  if (shard.splits_context()) {
    context_positions_ = context_positions(seq, shard.cp, shard.context);
    device_positions_ = upload_positions(context_positions_, context);
  }
  if (config.rotary) {
    // One row of angles per position the rank holds, in its rows' order.
    const RotaryTable table = rotary_table(seq, config.head_dim(), config.rotary_theta);
    const auto upload_angles = [&](const std::vector<float>& values) {
      Tensor host_values(rank_positions_, table.half);
      for (int64_t t = 0; t < rank_positions_; ++t) {
        const int64_t position = shard.splits_context() ? context_positions_[t] : t;
        std::copy_n(values.begin() + position * table.half, table.half, host_values.row(t));
      }
      return DeviceTensor::from_host(host_values, &context.allocator(), MemoryCategory::Workspace);
    };
    rotary_cos_ = upload_angles(table.cos);
    rotary_sin_ = upload_angles(table.sin);
  }
  if (!experts) return;
  if (config.dense_mlp || experts->shard.tp != shard.tp || experts->shard.tp_shard != shard.shard ||
      experts->shard.partial_outputs() != shard.splits_sequence())  // as the CPU's TransformerBlockLayer
    throw std::invalid_argument("layer " + std::to_string(index) +
                                ": a transformer_block's experts must be split over the block's "
                                "tensor-parallel shards, and along the sequence as the block is");
  experts_ =
      std::make_unique<GpuMoe>(index, experts->shape, experts->aux_loss_weight, experts->shard, seed, context);
}

std::vector<DeviceTensor*> GpuTransformerBlock::params() {
  return experts_ ? joined(weights_.list(), experts_->params()) : weights_.list();
}

std::vector<DeviceTensor*> GpuTransformerBlock::grads() {
  std::vector<DeviceTensor*> gradients = gradients_.list_like(weights_);
  return experts_ ? joined(std::move(gradients), experts_->grads()) : gradients;
}

void GpuTransformerBlock::connect_experts(ExpertConnection connection) {
  if (!experts_) return GpuLayer::connect_experts(std::move(connection));
  experts_->connect_experts(std::move(connection));
}

std::vector<DeviceTensor*> GpuTransformerBlock::expert_grads() {
  return experts_ ? experts_->expert_grads() : std::vector<DeviceTensor*>{};
}

BlockDropoutKey GpuTransformerBlock::dropout_of(const ForwardInfo& info) const {
  BlockDropoutKey key;
  key.layer_key = layer_key(seed_, RandomStream::Dropout, index());
  key.step = info.step;
  key.first_sample = info.first_sample;
  key.p = info.training ? config_.dropout : 0.0f;
  key.scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(key.p)));  // as BlockDropout
  return key;
}

AttentionShape GpuTransformerBlock::attention_shape(int64_t batch) const {
  return block_attention_shape(config_, shard_, batch, seq_, context_positions_.data());
}

const int64_t* GpuTransformerBlock::device_positions() const {
  return shard_.splits_context() ? device_positions_.as<int64_t>() : nullptr;
}

DeviceTensor GpuTransformerBlock::gathered_keys(const KeptGemmInput& qkv,
                                                const AttentionShape& shape,
                                                bool in_forward) const {
  // q, k and v stay float32 under context parallelism (kept_bf16.h).
  assert(!qkv.bf16());
  DeviceTensor local = rows_tensor(shape.rows(), shape.key_width());
  pack_keys(qkv.values().data(), shape, shape.rows(), local.data(), context().stream());
  DeviceTensor keys = rows_tensor(shape.key_rows(), shape.key_width());
  gather_context(local.data(), context_slice(shape.batch), shape.key_width(), keys.data(),
                 context_collective(true, in_forward), context());
  return keys;
}

ContextSlice GpuTransformerBlock::context_slice(int64_t batch) const {
  return {shard_.cp, shard_.context, batch, seq_};
}

DeviceSequenceCollective GpuTransformerBlock::context_collective(bool gather,
                                                                 bool in_forward) const {
  // The gather hands no slice over as it lands: this block attends once all have.
  if (gather)
    return
        [this, in_forward](DeviceTensor& values) { context_.all_gather(values, in_forward, {}); };
  return [this, in_forward](DeviceTensor& values) { context_.reduce_scatter(values, in_forward); };
}

void GpuTransformerBlock::turn_rotary(DeviceTensor& qkv, const AttentionShape& shape,
                                      float direction) const {
  assert(!rotary_cos_.empty());
  kernels::rotary_turn(
      qkv.data(),
      {shape.rows(), shape.query_count(), shape.heads, shape.key_value_heads(), shape.head_dim},
      rotary_cos_.data(), rotary_sin_.data(), direction, qkv.stream());
}

DeviceTensor GpuTransformerBlock::rows_tensor(int64_t rows, int64_t cols) const {
  return make_activation(rows, cols);
}

SequenceSlice GpuTransformerBlock::sequence_slice(int64_t batch) const {
  if (!shard_.splits_sequence()) return {1, 0, batch, rank_positions_};
  return {shard_.tp, shard_.shard, batch, positions_};
}

DeviceSequenceCollective GpuTransformerBlock::sequence_collective(bool gather,
                                                                  bool in_forward) const {
  const auto& collective = gather ? sequence_.all_gather : sequence_.reduce_scatter;
  return [&collective, in_forward](DeviceTensor& values) { collective(values, in_forward); };
}

const float* GpuTransformerBlock::whole_sequence(const DeviceTensor& local,
                                                 const SequenceSlice& slice, DeviceTensor& whole,
                                                 bool in_forward) const {
  if (slice.tp == 1) return local.data();
  whole = rows_tensor(slice.batch * slice.positions(), local.cols());
  gather_sequence(local.data(), slice, local.cols(), whole.data(),
                  sequence_collective(true, in_forward), context());
  return whole.data();
}

void GpuTransformerBlock::sum_partials(DeviceTensor& whole, const SequenceSlice& slice,
                                       DeviceTensor& local, bool in_forward) const {
  if (slice.tp == 1) {
    assert(&whole == &local);
    if (all_reduce_) all_reduce_(whole, in_forward);
    return;
  }
  scatter_sequence(whole.data(), slice, whole.cols(), local.data(),
                   sequence_collective(false, in_forward), context());
}

void GpuTransformerBlock::norm_output_linear(const KeptGemmInput& norm_out,
                                            const SequenceSlice& slice, DeviceTensor& whole,
                                            const DeviceTensor& weight, const DeviceTensor& bias,
                                            float* y) const {
  const int64_t rows = slice.batch * rank_positions_;
  if (slice.tp == 1) {
    linear_forward(context().cublas(), norm_out, 0, rows, weight, optional(bias), y,
                   context().stream());
    return;
  }
  linear_forward(context().cublas(), whole_sequence(norm_out.values(), slice, whole, true), rows,
                 weight, optional(bias), y, context().stream());
}

KeptGemmInput GpuTransformerBlock::gathered_again(const KeptGemmInput& norm_out,
                                                  const SequenceSlice& slice) const {
  DeviceTensor gathered;
  whole_sequence(norm_out.values(), slice, gathered, false);
  return KeptGemmInput(std::move(gathered), kept_bf16_.gathered_norms);
}

void GpuTransformerBlock::norm_forward(const DeviceTensor& gain, const DeviceTensor& bias,
                                       const float* x, int64_t rows, float* y) const {
  const cudaStream_t stream = context().stream();
  if (config_.norm == NormType::LayerNorm)
    kernels::layer_norm_forward(x, gain.data(), bias.data(), y, nullptr, nullptr, rows, config_.dim,
                                stream);
  else
    kernels::rms_norm_forward(x, gain.data(), y, rows, config_.dim, stream);
}

void GpuTransformerBlock::norm_backward_input(const DeviceTensor& gain, const float* x,
                                              const float* dy, int64_t rows, float* dx) const {
  const cudaStream_t stream = context().stream();
  if (config_.norm == NormType::RmsNorm) {
    kernels::rms_norm_backward_input(x, dy, gain.data(), dx, rows, config_.dim, stream);
    return;
  }
  DeviceTensor stats =
      DeviceTensor::uninitialized(2, rows, &context().allocator(), MemoryCategory::Workspace);
  kernels::layer_norm_statistics(x, stats.data(), stats.data() + rows, rows, config_.dim, stream);
  kernels::layer_norm_backward_input(x, dy, gain.data(), stats.data(), stats.data() + rows, dx,
                                     rows, config_.dim, stream);
}

void GpuTransformerBlock::norm_backward_weight(const float* x, const float* dy, int64_t rows,
                                               DeviceTensor& gain_grad,
                                               DeviceTensor& bias_grad) const {
  const cudaStream_t stream = context().stream();
  DeviceTensor stats =
      DeviceTensor::uninitialized(2, rows, &context().allocator(), MemoryCategory::Workspace);
  // The column sums' partials: one sum for RMSNorm's gain, two for LayerNorm's gain and bias.
  DeviceTensor scratch =
      DeviceTensor::uninitialized(2, kernels::column_partial_floats(rows, config_.dim),
                                  &context().allocator(), MemoryCategory::Workspace);
  if (config_.norm == NormType::RmsNorm) {
    kernels::rms_norm_backward_weight(x, dy, stats.data(), gain_grad.data(), rows, config_.dim,
                                      scratch.data(), stream);
    return;
  }
  kernels::layer_norm_statistics(x, stats.data(), stats.data() + rows, rows, config_.dim, stream);
  kernels::layer_norm_backward_weight(x, dy, stats.data(), stats.data() + rows, gain_grad.data(),
                                      bias_grad.data(), rows, config_.dim, scratch.data(), stream);
}

void GpuTransformerBlock::bias_dropout_residual(DeviceTensor& y, const float* residual,
                                                const DeviceTensor& bias,
                                                const GpuBlockCache& cache, uint64_t site) const {
  const cudaStream_t stream = context().stream();
  const float* b = bias.empty() ? nullptr : bias.data();
  if (!active(cache.dropout)) {
    kernels::add_residual(y.data(), residual, b, y.rows(), y.cols(), stream);
    return;
  }
  if (b) kernels::add_bias_rows(y.data(), b, y.rows(), y.cols(), stream);
  drop(y.data(), y.data(), cache, site);
  kernels::add_into(y.data(), residual, y.size(), stream);
}

void GpuTransformerBlock::drop(const float* in, float* out, const GpuBlockCache& cache,
                               uint64_t site) const {
  const SequenceSlice slice = sequence_slice(cache.batch);
  kernels::residual_dropout(in, out, cache.batch, slice.local_positions, config_.dim, site,
                            cache.dropout, context().stream(), slice.first_position(),
                            device_positions());
}

const float* GpuTransformerBlock::through_dropout(const float* grad, const GpuBlockCache& cache,
                                                  uint64_t site, DeviceTensor& masked) const {
  if (!active(cache.dropout)) {
    masked.reset();
    return grad;
  }
  masked = rows_tensor(cache.batch * positions_, config_.dim);
  drop(grad, masked.data(), cache, site);
  return masked.data();
}

const float* GpuTransformerBlock::output_gradient(const float* grad, const GpuBlockCache& cache,
                                                  uint64_t site, DeviceTensor& kept) const {
  const SequenceSlice slice = sequence_slice(cache.batch);
  if (slice.tp == 1) return through_dropout(grad, cache, site, kept);
  DeviceTensor masked;
  const float* local = through_dropout(grad, cache, site, masked);
  kept = rows_tensor(cache.batch * rank_positions_, config_.dim);
  gather_sequence(local, slice, config_.dim, kept.data(), sequence_collective(true, false),
                  context());
  return kept.data();
}

DeviceTensor GpuTransformerBlock::run_forward(const DeviceTensor& x, const ForwardInfo& info,
                                              GpuBlockState& state) {
  attention_forward(x, info, state.cache);
  DeviceTensor y = experts_ ? experts_forward(info, state) : feed_forward(state.cache);
  y.reshape(x.rows(), out_features());
  return y;
}

void GpuTransformerBlock::attention_forward(const DeviceTensor& x, const ForwardInfo& info,
                                            GpuBlockCache& cache) {
  assert(x.cols() == in_features());
  const int64_t batch = x.rows();
  const SequenceSlice slice = sequence_slice(batch);
  const int64_t rows = batch * rank_positions_;
  const int64_t local_rows = batch * positions_;
  const int64_t dim = config_.dim;
  const int tp = shard_.tp;
  const AttentionShape shape = attention_shape(batch);
  const cublasHandle_t cublas = context().cublas();
  const GpuBlockTensors& t = weights_;
  cache.batch = batch;
  cache.seq = seq_;
  cache.dropout = dropout_of(info);
  DeviceTensor norm1_out = rows_tensor(local_rows, dim);
  DeviceTensor qkv = rows_tensor(rows, config_.qkv_width() / tp);
  if (keeps_probabilities())
    cache.probabilities = rows_tensor(shape.probability_rows(), seq_);  // every key's column
  else
    cache.probabilities.reset();
  // The fused kernels' lse, kept so that the backward runs no second forward.
  if (uses_fused_attention(shape, keeps_probabilities(), context().mixed_bf16()))
    cache.lse = rows_tensor(shape.probability_rows(), 1);
  else
    cache.lse.reset();
  DeviceTensor attention_out = rows_tensor(rows, dim / tp);
  cache.h = rows_tensor(local_rows, dim);
  DeviceTensor norm2_out = rows_tensor(local_rows, dim);
  // Sequence parallelism's whole-sequence values (the gathered norm output,
  // then proj's partial output) live only while this runs.
  DeviceTensor whole;

  // Attention half: h = x + proj(attention(qkv(norm1(x)))), then norm2(h).
  // Each value kept only for GEMMs is kept (in bf16 or not) before its first
  // GEMM reads it, so the forward's GEMMs read what the backward's will.
  norm_forward(t.norm1_gain, t.norm1_bias, x.data(), local_rows, norm1_out.data());
  cache.norm1_out = KeptGemmInput(std::move(norm1_out), kept_bf16_.norm1_out);
  norm_output_linear(cache.norm1_out, slice, whole, t.qkv_weight, t.qkv_bias, qkv.data());
  if (config_.rotary) turn_rotary(qkv, shape, 1.0f);
  cache.qkv = KeptGemmInput(std::move(qkv), kept_bf16_.qkv);
  {
    // Under context parallelism every rank's keys and values, for this forward only.
    DeviceTensor keys;
    ContextKeys context_keys;
    if (shard_.splits_context()) {
      keys = gathered_keys(cache.qkv, shape, true);
      context_keys = {&keys, device_positions(), nullptr};
    }
    gpu_attention_forward(context(), cache.qkv, shape, attention_out,
                          keeps_probabilities() ? &cache.probabilities : nullptr, &cache.dropout,
                          cache.lse.empty() ? nullptr : &cache.lse,
                          shard_.splits_context() ? &context_keys : nullptr);
  }
  cache.attention_out = KeptGemmInput(std::move(attention_out), kept_bf16_.attention_out);
  DeviceTensor& proj_out = slice.tp == 1 ? cache.h : whole;
  linear_forward(cublas, cache.attention_out, 0, rows, t.proj_weight, nullptr, proj_out.data(),
                 context().stream());
  sum_partials(proj_out, slice, cache.h, true);
  bias_dropout_residual(cache.h, x.data(), t.proj_bias, cache, kernels::kProjectionSite);
  norm_forward(t.norm2_gain, t.norm2_bias, cache.h.data(), local_rows, norm2_out.data());
  cache.norm2_out = KeptGemmInput(std::move(norm2_out), kept_bf16_.norm2_out);
}

DeviceTensor GpuTransformerBlock::feed_forward(GpuBlockCache& cache) {
  const SequenceSlice slice = sequence_slice(cache.batch);
  const int64_t rows = cache.batch * rank_positions_;
  const int tp = shard_.tp;
  const cublasHandle_t cublas = context().cublas();
  const cudaStream_t stream = context().stream();
  const GpuBlockTensors& t = weights_;
  cache.ffn1_out = rows_tensor(rows, config_.ffn1_width() / tp);
  DeviceTensor activation_out = rows_tensor(rows, config_.ffn_hidden / tp);
  DeviceTensor whole;  // as in attention_forward

  // Feed-forward half: y = h + ffn2(act(ffn1(norm2(h)))).
  norm_output_linear(cache.norm2_out, slice, whole, t.ffn1_weight, t.ffn1_bias,
                     cache.ffn1_out.data());
  if (config_.activation == BlockActivation::Gelu)
    kernels::activation_forward(Activation::Gelu, cache.ffn1_out.data(), activation_out.data(),
                                cache.ffn1_out.size(), stream);
  else
    kernels::swiglu_forward(cache.ffn1_out.data(), activation_out.data(), rows,
                            activation_out.cols(), stream);
  cache.activation_out = KeptGemmInput(std::move(activation_out), kept_bf16_.activation_out);
  DeviceTensor y = rows_tensor(cache.batch * positions_, config_.dim);
  DeviceTensor& ffn2_out = slice.tp == 1 ? y : whole;
  linear_forward(cublas, cache.activation_out, 0, rows, t.ffn2_weight, nullptr, ffn2_out.data(),
                 stream);
  sum_partials(ffn2_out, slice, y, true);
  bias_dropout_residual(y, cache.h.data(), t.ffn2_bias, cache, kernels::kFeedForwardSite);
  return y;
}

DeviceTensor GpuTransformerBlock::experts_forward(const ForwardInfo& info, GpuBlockState& state) {
  GpuBlockCache& cache = state.cache;
  const SequenceSlice slice = sequence_slice(cache.batch);
  const int64_t rows = cache.batch * rank_positions_;
  // y = h + drop3(MoE(norm2_out)): the experts' part first, h last, as on the
  // CPU. Under sequence parallelism every shard routes the whole (gathered)
  // sequence and the combined partial outputs are scattered onto its slice;
  // under plain tp the experts sum their slots themselves.
  const bool split = slice.tp > 1;
  const GpuMoe::TensorParallelSum tp_sum = split ? GpuMoe::TensorParallelSum{} : experts_tensor_parallel_sum(true);
  if (!split && !active(cache.dropout))
    return experts_->mix(cache.norm2_out.values().data(), rows, cache.h.data(), info, state.experts,
                         tp_sum);
  DeviceTensor whole;
  DeviceTensor y = experts_->mix(whole_sequence(cache.norm2_out.values(), slice, whole, true), rows, nullptr, info,
                                 state.experts, tp_sum);
  if (split) {
    DeviceTensor partial = std::move(y);
    y = rows_tensor(cache.batch * positions_, config_.dim);
    sum_partials(partial, slice, y, true);
  }
  if (active(cache.dropout)) drop(y.data(), y.data(), cache, kernels::kFeedForwardSite);
  kernels::add_into(y.data(), cache.h.data(), y.size(), context().stream());
  return y;
}

DeviceTensor GpuTransformerBlock::run_backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                                     GpuBlockState& state) {
  assert(x.same_shape(dy) && x.rows() == state.cache.batch);
  if (experts_)
    experts_backward(dy, state);
  else
    feed_forward_backward(dy, state.cache);
  return attention_backward(x, dy, state.cache);
}

void GpuTransformerBlock::feed_forward_backward(const DeviceTensor& dy, GpuBlockCache& cache) {
  const SequenceSlice slice = sequence_slice(cache.batch);
  const bool split = slice.tp > 1;
  const int64_t rows = cache.batch * rank_positions_;
  const int tp = shard_.tp;
  const cublasHandle_t cublas = context().cublas();
  const cudaStream_t stream = context().stream();
  const GpuBlockTensors& t = weights_;
  cache.d_activation_out = rows_tensor(rows, config_.ffn_hidden / tp);
  cache.d_ffn1_out = rows_tensor(rows, config_.ffn1_width() / tp);
  cache.d_norm2_out = rows_tensor(cache.batch * positions_, config_.dim);
  DeviceTensor partial;  // the norm output's gradient before the sum over shards (split only)

  // Feed-forward half, back to dnorm2_out.
  const float* d_ffn2_out =
      output_gradient(dy.data(), cache, kernels::kFeedForwardSite, cache.d_ffn2_out);
  linear_backward_input(cublas, d_ffn2_out, rows, t.ffn2_weight, cache.d_activation_out.data());
  if (config_.activation == BlockActivation::Gelu)
    kernels::activation_backward(Activation::Gelu, cache.ffn1_out.data(),
                                 cache.d_activation_out.data(), cache.d_ffn1_out.data(),
                                 cache.ffn1_out.size(), stream);
  else
    kernels::swiglu_backward(cache.ffn1_out.data(), cache.d_activation_out.data(),
                             cache.d_ffn1_out.data(), rows, cache.d_activation_out.cols(), stream);
  if (split) partial = rows_tensor(rows, config_.dim);
  DeviceTensor& d_norm2_partial = split ? partial : cache.d_norm2_out;
  linear_backward_input(cublas, cache.d_ffn1_out, t.ffn1_weight, d_norm2_partial);
  sum_partials(d_norm2_partial, slice, cache.d_norm2_out, false);
  if (split) cache.norm2_gathered = gathered_again(cache.norm2_out, slice);
}

void GpuTransformerBlock::experts_backward(const DeviceTensor& dy, GpuBlockState& state) {
  GpuBlockCache& cache = state.cache;
  const SequenceSlice slice = sequence_slice(cache.batch);
  const bool split = slice.tp > 1;
  // dy through drop3's mask (gathered under sequence parallelism), the tokens
  // gathered again, their partial gradient scattered: as on the CPU.
  DeviceTensor masked, whole;
  const float* mix_grad = output_gradient(dy.data(), cache, kernels::kFeedForwardSite, masked);
  DeviceTensor token_grad = experts_->mix_backward(
      whole_sequence(cache.norm2_out.values(), slice, whole, false), mix_grad,
      cache.batch * rank_positions_, nullptr, state.experts.get(),
      split ? GpuMoe::TensorParallelSum{} : experts_tensor_parallel_sum(false));
  if (!split) {
    cache.d_norm2_out = std::move(token_grad);
    return;
  }
  masked.reset();
  whole.reset();
  cache.d_norm2_out = rows_tensor(cache.batch * positions_, config_.dim);
  sum_partials(token_grad, slice, cache.d_norm2_out, false);
}

GpuMoe::TensorParallelSum GpuTransformerBlock::experts_tensor_parallel_sum(bool in_forward) {
  if (!all_reduce_) return {};  // one shard
  return [this, in_forward](DeviceTensor& values) { all_reduce_(values, in_forward); };
}

DeviceTensor GpuTransformerBlock::attention_backward(const DeviceTensor& x, const DeviceTensor& dy,
                                                     GpuBlockCache& cache) {
  const SequenceSlice slice = sequence_slice(cache.batch);
  const bool split = slice.tp > 1;
  const int64_t rows = cache.batch * rank_positions_;
  const int64_t local_rows = cache.batch * positions_;
  const int64_t dim = config_.dim;
  const int tp = shard_.tp;
  const cublasHandle_t cublas = context().cublas();
  const cudaStream_t stream = context().stream();
  const GpuBlockTensors& t = weights_;
  cache.d_h = rows_tensor(local_rows, dim);
  cache.d_attention_out = rows_tensor(rows, dim / tp);
  cache.d_qkv = rows_tensor(rows, config_.qkv_width() / tp);
  cache.d_norm1_out = rows_tensor(local_rows, dim);
  DeviceTensor partial;
  if (split) partial = rows_tensor(rows, dim);

  // dh = dy + norm2'(dnorm2_out).
  norm_backward_input(t.norm2_gain, cache.h.data(), cache.d_norm2_out.data(), local_rows,
                      cache.d_h.data());
  kernels::add_into(cache.d_h.data(), dy.data(), cache.d_h.size(), stream);

  // Attention half, back to dx = dh + norm1'(dnorm1_out).
  const float* d_proj_out =
      output_gradient(cache.d_h.data(), cache, kernels::kProjectionSite, cache.d_proj_out);
  linear_backward_input(cublas, d_proj_out, rows, t.proj_weight, cache.d_attention_out.data());
  const FusedKept fused{&cache.lse, cache.attention_out.gemm_input()};
  const AttentionShape shape = attention_shape(cache.batch);
  const DeviceTensor* probabilities = keeps_probabilities() ? &cache.probabilities : nullptr;
  if (shard_.splits_context()) {
    // Gather every rank's keys and values again; dk and dv of every position
    // go home through the reduce-scatter, to join this rank's dq.
    DeviceTensor keys = gathered_keys(cache.qkv, shape, false);
    DeviceTensor key_grads = rows_tensor(keys.rows(), keys.cols());
    const ContextKeys context_keys{&keys, device_positions(), &key_grads};
    gpu_attention_backward(context(), cache.qkv, probabilities, cache.d_attention_out, shape,
                           cache.d_qkv, &cache.dropout, nullptr, &context_keys);
    keys.reset();
    DeviceTensor home = rows_tensor(rows, shape.key_width());
    scatter_context(key_grads.data(), context_slice(cache.batch), shape.key_width(), home.data(),
                    context_collective(false, false), context());
    unpack_keys(home.data(), shape, rows, cache.d_qkv.data(), stream);
  } else {
    gpu_attention_backward(context(), cache.qkv, probabilities, cache.d_attention_out, shape,
                           cache.d_qkv, &cache.dropout, cache.lse.empty() ? nullptr : &fused);
  }
  if (config_.rotary) turn_rotary(cache.d_qkv, shape, -1.0f);
  DeviceTensor& d_norm1_partial = split ? partial : cache.d_norm1_out;
  linear_backward_input(cublas, cache.d_qkv, t.qkv_weight, d_norm1_partial);
  sum_partials(d_norm1_partial, slice, cache.d_norm1_out, false);
  if (split) cache.norm1_gathered = gathered_again(cache.norm1_out, slice);
  DeviceTensor dx = make_activation(x.rows(), x.cols());
  norm_backward_input(t.norm1_gain, x.data(), cache.d_norm1_out.data(), local_rows, dx.data());
  kernels::add_into(dx.data(), cache.d_h.data(), dx.size(), stream);
  return dx;
}

void GpuTransformerBlock::run_backward_weight(const DeviceTensor& x, const DeviceTensor& dy,
                                              const GpuBlockCache& cache) {
  const int64_t rows = cache.batch * rank_positions_;
  const int64_t local_rows = cache.batch * positions_;
  const bool split = shard_.splits_sequence();
  const cublasHandle_t cublas = context().cublas();
  GpuBlockTensors& g = gradients_;
  // Kept only with dropout or sequence parallelism; otherwise they are d_h and dy.
  const float* d_proj_out = cache.d_proj_out.empty() ? cache.d_h.data() : cache.d_proj_out.data();
  if (config_.dense_mlp) {  // the experts added theirs in the input half
    const float* d_ffn2_out = cache.d_ffn2_out.empty() ? dy.data() : cache.d_ffn2_out.data();
    linear_backward_weight(cublas, cache.activation_out, 0, d_ffn2_out, rows, g.ffn2_weight,
                           optional(g.ffn2_bias));
    linear_backward_weight(cublas, split ? cache.norm2_gathered : cache.norm2_out, 0,
                           cache.d_ffn1_out.data(), rows, g.ffn1_weight, optional(g.ffn1_bias));
  }
  norm_backward_weight(cache.h.data(), cache.d_norm2_out.data(), local_rows, g.norm2_gain,
                       g.norm2_bias);
  linear_backward_weight(cublas, cache.attention_out, 0, d_proj_out, rows, g.proj_weight,
                         optional(g.proj_bias));
  linear_backward_weight(cublas, split ? cache.norm1_gathered : cache.norm1_out, 0,
                         cache.d_qkv.data(), rows, g.qkv_weight, optional(g.qkv_bias));
  norm_backward_weight(x.data(), cache.d_norm1_out.data(), local_rows, g.norm1_gain, g.norm1_bias);
}

std::vector<DeviceTensor*> GpuTransformerBlock::sequence_partial_grads() {
  if (!shard_.splits_sequence()) return {};
  std::vector<DeviceTensor*> partial;
  for (DeviceTensor* t : {&gradients_.norm1_gain, &gradients_.norm1_bias, &gradients_.norm2_gain,
                          &gradients_.norm2_bias})
    if (!t->empty()) partial.push_back(t);
  // The experts' gate too (moe.h).
  return experts_ ? joined(std::move(partial), experts_->sequence_partial_grads()) : partial;
}

DeviceTensor GpuTransformerBlock::forward(const DeviceTensor& x, const ForwardInfo& info) {
  GpuBlockState state;
  return run_forward(x, info, state);
}

DeviceTensor GpuTransformerBlock::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                                 const ForwardInfo& info) {
  GpuBlockState state;
  run_forward(x, info, state);
  return run_backward_input(x, dy, state);
}

void GpuTransformerBlock::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  // As on the CPU: without a kept state no ForwardInfo redraws the dropout
  // masks, so this serves dropout-free uses only (stages keep a state).
  assert(config_.dropout == 0.0f);
  // The experts added their gradients in backward_input; the rerun below
  // must not add them twice.
  std::vector<DeviceTensor> experts_before;
  if (experts_)
    for (DeviceTensor* grad : experts_->grads()) experts_before.push_back(grad->clone());
  GpuBlockState state;
  run_forward(x, ForwardInfo{}, state);
  run_backward_input(x, dy, state);
  run_backward_weight(x, dy, state.cache);
  if (experts_) {
    const std::vector<DeviceTensor*> grads = experts_->grads();
    for (size_t i = 0; i < grads.size(); ++i) grads[i]->copy_from(experts_before[i]);
  }
}

DeviceTensor GpuTransformerBlock::forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                                                  std::unique_ptr<LayerState>& state) {
  auto kept = std::make_unique<GpuBlockState>();
  DeviceTensor y = run_forward(x, info, *kept);
  state = std::move(kept);
  return y;
}

DeviceTensor GpuTransformerBlock::backward_input_with(const DeviceTensor& x,
                                                      const DeviceTensor& dy,
                                                      const ForwardInfo& info, LayerState* state) {
  if (!state) return backward_input(x, dy, info);
  GpuBlockState& kept = *static_cast<GpuBlockState*>(state);
  DeviceTensor dx = run_backward_input(x, dy, kept);
  kept.drop_unread_by_backward_weight(shard_.splits_sequence());
  return dx;
}

void GpuTransformerBlock::backward_weight_with(const DeviceTensor& x, const DeviceTensor& dy,
                                               LayerState* state) {
  if (!state) return backward_weight(x, dy);
  run_backward_weight(x, dy, static_cast<GpuBlockState*>(state)->cache);
}

}  // namespace pipelab::gpu
