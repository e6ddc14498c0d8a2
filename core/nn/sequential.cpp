#include "core/nn/sequential.h"

#include "core/nn/activations.h"
#include "core/nn/block_config.h"
#include "core/nn/dropout.h"
#include "core/nn/embedding_layer.h"
#include "core/nn/init.h"
#include "core/nn/layer_norm.h"
#include "core/nn/linear.h"
#include "core/nn/per_token_layer.h"
#include "core/nn/transformer_block_layer.h"

namespace pipelab {
namespace {

// A layer built for one position, applied to every position of a sequence model.
std::unique_ptr<Layer> per_token(std::unique_ptr<Layer> layer, int64_t tokens) {
  if (tokens == 1) return layer;
  return std::make_unique<PerTokenLayer>(std::move(layer), tokens);
}

}  // namespace

std::unique_ptr<Layer> HostStackMath::build_layer(const LayerLayout& layer, uint64_t seed,
                                                  DeviceAllocator* allocator) {
  const LayerSpec& spec = layer.spec;
  const int64_t tokens = layer.tokens;
  if (spec.type == LayerType::Linear) {
    // A row-parallel shard adds the bias once, after the all-reduce.
    auto linear = std::make_unique<LinearLayer>(layer.index, layer.in / tokens,
                                                layer.out / tokens, spec.bias, allocator,
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
        layer.index, vocab_shard(spec.vocab, layer.tp, layer.shard), spec.dim, tokens, allocator);
    embedding->init(seed);
    return embedding;
  }
  if (spec.type == LayerType::TransformerBlock) {
    auto block = std::make_unique<TransformerBlockLayer>(
        layer.index, block_config(layer), BlockShard{layer.tp, layer.shard}, tokens, allocator);
    block->init(seed);
    return block;
  }
  if (spec.type == LayerType::Dropout)
    return std::make_unique<DropoutLayer>(layer.index, layer.out, spec.p, seed, allocator,
                                          layer.feature_offset);
  return make_activation_layer(spec.type, layer.index, layer.out, allocator);
}

void HostStackMath::add_bias(Layer& row_parallel_linear, Tensor& y) {
  static_cast<LinearLayer&>(row_parallel_linear).add_bias(y);
}

template class StageStack<HostStackMath>;

}  // namespace pipelab
