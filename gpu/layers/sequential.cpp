#include "gpu/layers/sequential.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/nn/block_config.h"
#include "core/nn/context_split.h"
#include "core/nn/init.h"
#include "gpu/layers/activation.h"
#include "gpu/layers/batch_norm.h"
#include "gpu/layers/conv2d.h"
#include "gpu/layers/dropout.h"
#include "gpu/layers/embedding.h"
#include "gpu/layers/kept_layer_input.h"
#include "gpu/layers/layer_norm.h"
#include "gpu/layers/linear.h"
#include "gpu/layers/moe.h"
#include "gpu/layers/per_token.h"
#include "gpu/layers/pooling.h"
#include "gpu/layers/residual_block.h"
#include "gpu/layers/sequence_split.h"
#include "gpu/layers/transformer_block.h"

namespace pipelab::gpu {
namespace {

// A linear's initial weights: generated on the host for this shard's block of
// the full layer (core/nn/init.h), then copied to the device.
// In a sequence model the full widths are per position (token_in, token_out).
void initialise_linear(GpuLinear& linear, const LayerLayout& layer, uint64_t seed) {
  Tensor weight(layer.weight.rows, layer.weight.cols);
  init_linear_weight(weight, seed, layer.index, layer.token_in(), layer.token_out(),
                     layer.weight.row_begin, layer.weight.col_begin);
  linear.weight().copy_from_host(weight);
  if (linear.has_bias()) {
    Tensor bias(1, layer.bias.cols);
    init_linear_bias(bias, seed, layer.index, layer.token_in(), layer.token_out(),
                     layer.bias.col_begin);
    linear.bias().copy_from_host(bias);
  }
  // The host tensors die when this returns; copy_from_host has staged them.
}

// A layer built for one position, applied to every position of a sequence model.
std::unique_ptr<GpuLayer> per_token(std::unique_ptr<GpuLayer> layer, int64_t tokens) {
  if (tokens == 1) return layer;
  return std::make_unique<GpuPerTokenLayer>(std::move(layer), tokens);
}

// Conv2d, pools, flatten, batchnorm and residual blocks (as core/nn/sequential.cpp
// builds them); null for other types.
std::unique_ptr<GpuLayer> build_image_layer(const LayerLayout& layer, uint64_t seed,
                                            DeviceContext& context) {
  const LayerSpec& spec = layer.spec;
  // Flat values reaching a batchnorm or flatten are an image of 1 x 1 pixels.
  const ImageShape in = layer.image_in.valid() ? layer.image_in : ImageShape{layer.in, 1, 1};
  const BatchNormOptions norm{spec.momentum, spec.eps};
  switch (spec.type) {
    case LayerType::Conv2d: {
      auto conv = std::make_unique<GpuConv2d>(
          layer.index, conv_geometry(in, spec.out, layer_window(spec)), spec.bias, context);
      conv->init(seed);
      return conv;
    }
    case LayerType::MaxPool:
    case LayerType::AvgPool:
      return std::make_unique<GpuWindowPool>(spec.type, layer.index, in, layer_window(spec),
                                             context);
    case LayerType::GlobalAvgPool:
      return std::make_unique<GpuGlobalAvgPool>(layer.index, in, context);
    case LayerType::Flatten:
      return std::make_unique<GpuFlatten>(layer.index, layer.in, context);
    case LayerType::BatchNorm:
      return std::make_unique<GpuBatchNorm>(layer.index, in, norm, context);
    case LayerType::ResidualBlock: {
      auto block = std::make_unique<GpuResidualBlock>(
          layer.index, residual_shape(in, spec.out, spec.stride), norm, context);
      block->init(seed);
      return block;
    }
    default:
      return nullptr;
  }
}

// The layer in float32, as every precision builds it.
std::unique_ptr<GpuLayer> build_float_layer(const LayerLayout& layer, uint64_t seed,
                                            DeviceContext& context) {
  const LayerSpec& spec = layer.spec;
  // The positions a per-token layer sees: the shard's slice of the sequence
  // under sequence parallelism, but all of them for the output layer, which
  // the stage hands the gathered sequence (as the CPU's HostStackMath).
  const int64_t tokens = layer.gathers_sequence ? layer.context_tokens() : layer.local_tokens();
  if (spec.type == LayerType::Linear) {
    // A row-parallel shard adds the bias once, after the all-reduce.
    auto linear =
        std::make_unique<GpuLinear>(layer.index, layer.weight.rows, layer.weight.cols, spec.bias,
                                    context, layer.role != TensorParallelRole::RowParallel);
    initialise_linear(*linear, layer, seed);
    return per_token(std::move(linear), tokens);
  }
  if (spec.type == LayerType::LayerNorm)
    return per_token(std::make_unique<GpuLayerNorm>(layer.index, layer.out / tokens, context),
                     tokens);
  if (spec.type == LayerType::Embedding)
    return std::make_unique<GpuEmbedding>(
        layer.index, vocab_shard(spec.vocab, layer.tp, layer.shard), spec.dim, layer.tokens, seed,
        context, layer.sequence_shards, layer.sequence_shard, !layer.rotary,
        layer.cp > 1 ? context_positions(layer.tokens, layer.cp, layer.context)
                     : std::vector<int64_t>{});
  const std::string label = "layer " + std::to_string(layer.index);
  if (spec.type == LayerType::TransformerBlock) {
    BlockExperts experts;
    if (spec.experts > 0)
      experts = {moe_shape(spec, layer.token_in(), layer.tokens, label), spec.aux_loss_weight,
                 ExpertShard{layer.ep, layer.ep_rank, layer.tp, layer.shard, layer.sequence_shards > 1}};
    return std::make_unique<GpuTransformerBlock>(
        layer.index, block_config(layer),
        BlockShard{layer.tp, layer.shard, layer.sequence_shards > 1, layer.cp, layer.context},
        layer.tokens, seed, context, spec.experts > 0 ? &experts : nullptr);
  }
  if (spec.type == LayerType::Dropout)
    return std::make_unique<GpuDropout>(layer.index, layer.out, spec.p, seed, context,
                                        layer.feature_offset);
  if (spec.type == LayerType::Moe)
    return std::make_unique<GpuMoe>(
        layer.index, moe_shape(spec, layer.token_in(), layer.tokens, label), spec.aux_loss_weight,
        ExpertShard{layer.ep, layer.ep_rank}, seed, context,
        MoeSequenceSlice{layer.sequence_shards, layer.sequence_shard});
  if (auto image_layer = build_image_layer(layer, seed, context)) return image_layer;
  return std::make_unique<GpuActivation>(spec.type, layer.index, layer.out, context);
}

}  // namespace

void keep_bf16_copies(GpuLayer& layer) {
  const std::vector<DeviceTensor*> params = layer.params();
  const std::vector<DeviceTensor*> grads = layer.grads();
  for (DeviceTensor* weight : layer.gemm_weights()) {
    weight->keep_bf16_copy(MemoryCategory::Weights);
    weight->retag(MemoryCategory::OptimizerState);
    // params() and grads() list a parameter and its gradient at the same place.
    const auto at = std::find(params.begin(), params.end(), weight);
    if (at == params.end())
      throw std::logic_error("layer " + std::to_string(layer.index()) +
                             ": a GEMM weight is not among its parameters (gemm_weights() must list "
                             "only tensors of params())");
    grads.at(static_cast<size_t>(at - params.begin()))->accumulate_bf16_products();
  }
}

std::unique_ptr<GpuLayer> DeviceStackMath::build_layer(const LayerLayout& layer, uint64_t seed,
                                                       DeviceContext& context) {
  std::unique_ptr<GpuLayer> built = build_float_layer(layer, seed, context);
  if (context.mixed_bf16()) keep_bf16_copies(*built);
  return built;
}

void DeviceStackMath::add_bias(GpuLayer& row_parallel_linear, DeviceTensor& y) {
  if (auto* wrapped = dynamic_cast<GpuPerTokenLayer*>(&row_parallel_linear)) {
    wrapped->per_token_in_place(
        y, [&](DeviceTensor& rows) { static_cast<GpuLinear&>(wrapped->inner()).add_bias(rows); });
    return;
  }
  static_cast<GpuLinear&>(row_parallel_linear).add_bias(y);
}

void DeviceStackMath::keep_layer_input(GpuLayer& layer, bool stage_input, bool gathers_sequence,
                                       DeviceTensor& input, std::unique_ptr<LayerState>& state) {
  pipelab::gpu::keep_layer_input(layer, stage_input, gathers_sequence, input, state);
}

bool DeviceStackMath::holds_layer_input(const LayerState* state) {
  return pipelab::gpu::holds_layer_input(state);
}

DeviceTensor DeviceStackMath::restore_layer_input(const LayerState& state, DeviceContext& context) {
  return pipelab::gpu::restore_layer_input(state, context);
}

DeviceTensor DeviceStackMath::gather_sequence(
    const DeviceTensor& local, const SequenceSlice& slice, DeviceContext& context,
    const std::function<void(DeviceTensor&)>& all_gather) {
  const int64_t width = local.cols() / slice.local_positions;
  DeviceTensor whole = DeviceTensor::uninitialized(
      slice.batch, slice.positions() * width, &context.allocator(), MemoryCategory::Activations);
  pipelab::gpu::gather_sequence(local.data(), slice, width, whole.data(), all_gather, context);
  return whole;
}

DeviceTensor DeviceStackMath::scatter_sequence(
    const DeviceTensor& whole, const SequenceSlice& slice, DeviceContext& context,
    const std::function<void(DeviceTensor&)>& reduce_scatter) {
  const int64_t width = whole.cols() / slice.positions();
  DeviceTensor local =
      DeviceTensor::uninitialized(slice.batch, slice.local_positions * width, &context.allocator(),
                                  MemoryCategory::Activations);
  pipelab::gpu::scatter_sequence(whole.data(), slice, width, local.data(), reduce_scatter, context);
  return local;
}

}  // namespace pipelab::gpu

namespace pipelab {
template class StageStack<gpu::DeviceStackMath>;
}  // namespace pipelab
