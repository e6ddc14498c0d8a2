#include "core/nn/sequential.h"

#include "core/nn/activations.h"
#include "core/nn/batch_norm.h"
#include "core/nn/conv2d.h"
#include "core/nn/pooling.h"
#include "core/nn/residual_block.h"
#include "core/nn/block_config.h"
#include "core/nn/dropout.h"
#include "core/nn/embedding_layer.h"
#include "core/nn/init.h"
#include "core/nn/layer_norm.h"
#include "core/nn/linear.h"
#include "core/nn/moe_layer.h"
#include "core/nn/per_token_layer.h"
#include "core/nn/transformer_block_layer.h"

namespace pipelab {
namespace {

// A layer built for one position, applied to every position of a sequence model.
std::unique_ptr<Layer> per_token(std::unique_ptr<Layer> layer, int64_t tokens) {
  if (tokens == 1) return layer;
  return std::make_unique<PerTokenLayer>(std::move(layer), tokens);
}

// Conv2d, pools, flatten, batchnorm and residual blocks; null for other types.
std::unique_ptr<Layer> build_image_layer(const LayerLayout& layer, uint64_t seed, DeviceAllocator* allocator) {
  const LayerSpec& spec = layer.spec;
  // Flat values reaching a batchnorm or flatten are an image of 1 x 1 pixels.
  const ImageShape in = layer.image_in.valid() ? layer.image_in : ImageShape{layer.in, 1, 1};
  const BatchNormOptions norm{spec.momentum, spec.eps};
  switch (spec.type) {
    case LayerType::Conv2d: {
      auto conv = std::make_unique<Conv2dLayer>(layer.index, conv_geometry(in, spec.out, layer_window(spec)),
                                                spec.bias, allocator);
      conv->init(seed);
      return conv;
    }
    case LayerType::MaxPool:
    case LayerType::AvgPool:
      return std::make_unique<WindowPoolLayer>(spec.type, layer.index, in, layer_window(spec), allocator);
    case LayerType::GlobalAvgPool: return std::make_unique<GlobalAvgPoolLayer>(layer.index, in, allocator);
    case LayerType::Flatten: return std::make_unique<FlattenLayer>(layer.index, layer.in, allocator);
    case LayerType::BatchNorm: return std::make_unique<BatchNormLayer>(layer.index, in, norm, allocator);
    case LayerType::ResidualBlock: {
      auto block = std::make_unique<ResidualBlockLayer>(layer.index, residual_shape(in, spec.out, spec.stride),
                                                        norm, allocator);
      block->init(seed);
      return block;
    }
    default: return nullptr;
  }
}

}  // namespace

std::unique_ptr<Layer> HostStackMath::build_layer(const LayerLayout& layer, uint64_t seed,
                                                  DeviceAllocator* allocator) {
  const LayerSpec& spec = layer.spec;
  // The positions a per-token layer sees: the shard's slice of the sequence
  // under sequence parallelism, but all of them for the output layer, which
  // the stage hands the gathered sequence.
  const int64_t tokens = layer.gathers_sequence ? layer.context_tokens() : layer.local_tokens();
  if (spec.type == LayerType::Linear) {
    // A row-parallel shard adds the bias once, after the all-reduce.
    auto linear = std::make_unique<LinearLayer>(layer.index, layer.weight.rows,
                                                layer.weight.cols, spec.bias, allocator,
                                                layer.role != TensorParallelRole::RowParallel);
    init_linear_weight(linear->weight(), seed, layer.index, layer.token_in(), layer.token_out(),
                       layer.weight.row_begin, layer.weight.col_begin);
    if (spec.bias)
      init_linear_bias(linear->bias(), seed, layer.index, layer.token_in(), layer.token_out(),
                       layer.bias.col_begin);
    return per_token(std::move(linear), tokens);
  }
  if (spec.type == LayerType::LayerNorm)
    return per_token(std::make_unique<LayerNormLayer>(layer.index, layer.out / tokens, allocator),
                     tokens);
  if (spec.type == LayerType::Embedding) {
    auto embedding = std::make_unique<EmbeddingLayer>(
        layer.index, vocab_shard(spec.vocab, layer.tp, layer.shard), spec.dim, layer.tokens,
        allocator, layer.sequence_shards, layer.sequence_shard, !layer.rotary,
        layer.cp > 1 ? context_positions(layer.tokens, layer.cp, layer.context)
                     : std::vector<int64_t>{});
    embedding->init(seed);
    return embedding;
  }
  const auto experts_shape = [&] {
    return moe_shape(spec, layer.token_in(), layer.tokens, "layer " + std::to_string(layer.index));
  };
  if (spec.type == LayerType::TransformerBlock) {
    BlockExperts experts;
    if (spec.experts > 0)
      experts = {experts_shape(), spec.aux_loss_weight,
                 ExpertShard{layer.ep, layer.ep_rank, layer.tp, layer.shard, layer.sequence_shards > 1}};
    auto block = std::make_unique<TransformerBlockLayer>(
        layer.index, block_config(layer),
        BlockShard{layer.tp, layer.shard, layer.sequence_shards > 1, layer.cp, layer.context},
        layer.tokens, allocator, spec.experts > 0 ? &experts : nullptr);
    block->init(seed);
    return block;
  }
  if (spec.type == LayerType::Moe) {
    auto moe = std::make_unique<MoeLayer>(
        layer.index, experts_shape(), spec.aux_loss_weight, ExpertShard{layer.ep, layer.ep_rank},
        allocator, MoeSequenceSlice{layer.sequence_shards, layer.sequence_shard});
    moe->init(seed);
    return moe;
  }
  if (spec.type == LayerType::Dropout)
    return std::make_unique<DropoutLayer>(layer.index, layer.out, spec.p, seed, allocator,
                                          layer.feature_offset);
  if (auto image_layer = build_image_layer(layer, seed, allocator)) return image_layer;
  return make_activation_layer(spec.type, layer.index, layer.out, allocator);
}

void HostStackMath::add_bias(Layer& row_parallel_linear, Tensor& y) {
  static_cast<LinearLayer&>(row_parallel_linear).add_bias(y);
}

namespace {

// A stage's tensor collective over a kernel's buffer.
AllReduceFunction on_buffer(const std::function<void(Tensor&)>& collective) {
  return [&collective](float* data, int64_t count) {
    Tensor values = Tensor::borrow(data, count);
    collective(values);
  };
}

}  // namespace

Tensor HostStackMath::gather_sequence(const Tensor& local, const SequenceSlice& slice,
                                      DeviceAllocator* allocator,
                                      const std::function<void(Tensor&)>& all_gather) {
  const int64_t width = local.cols() / slice.local_positions;
  Tensor whole(slice.batch * slice.positions(), width, allocator, MemoryCategory::Activations);
  pipelab::gather_sequence(Tensor::view(local, slice.batch * slice.local_positions, width), slice,
                           whole, on_buffer(all_gather), allocator);
  whole.reshape(slice.batch, slice.positions() * width);
  return whole;
}

Tensor HostStackMath::scatter_sequence(const Tensor& whole, const SequenceSlice& slice,
                                       DeviceAllocator* allocator,
                                       const std::function<void(Tensor&)>& reduce_scatter) {
  const int64_t width = whole.cols() / slice.positions();
  Tensor local(slice.batch * slice.local_positions, width, allocator, MemoryCategory::Activations);
  pipelab::scatter_sequence(Tensor::view(whole, slice.batch * slice.positions(), width), slice,
                            local, on_buffer(reduce_scatter), allocator);
  local.reshape(slice.batch, slice.local_positions * width);
  return local;
}

template class StageStack<HostStackMath>;

}  // namespace pipelab
