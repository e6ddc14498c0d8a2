#include "core/nn/transformer_block_layer.h"

#include <array>
#include <cassert>


namespace pipelab {
namespace {

int64_t positions_of(int64_t seq, const BlockShard& shard) {
  return shard.splits_sequence() ? seq / shard.tp : seq;
}

// Every tensor of a block's cache, for bytes() and tensors().
template <typename Cache>
auto cache_tensors(Cache& cache) {
  return std::array{&cache.norm1_out, &cache.qkv, &cache.probabilities, &cache.attention_out, &cache.h,
                    &cache.norm2_out, &cache.ffn1_out, &cache.activation_out, &cache.d_activation_out,
                    &cache.d_ffn1_out, &cache.d_norm2_out, &cache.d_h, &cache.d_attention_out, &cache.d_qkv,
                    &cache.d_norm1_out, &cache.d_proj_out, &cache.d_ffn2_out, &cache.norm1_gathered,
                    &cache.norm2_gathered};
}

}  // namespace

int64_t GptBlockState::bytes() const {
  int64_t total = 0;
  for (const Tensor* t : cache_tensors(cache)) total += t->bytes();
  return total;
}

std::vector<Tensor*> GptBlockState::tensors() {
  const auto all = cache_tensors(cache);
  return {all.begin(), all.end()};
}

TransformerBlockLayer::TransformerBlockLayer(int index, const GptBlockConfig& config,
                                             const BlockShard& shard, int64_t seq,
                                             DeviceAllocator* allocator)
    : Layer(LayerType::TransformerBlock, index, positions_of(seq, shard) * config.dim,
            positions_of(seq, shard) * config.dim, allocator),
      seq_(seq),
      positions_(positions_of(seq, shard)),
      block_(config, shard, allocator) {}

namespace {

// The block hands over buffers; the stage's collectives take tensors.
template <typename Collective>
AllReduceFunction bridge(Collective collective, bool in_forward) {
  return [collective, in_forward](float* data, int64_t count) {
    Tensor values = Tensor::borrow(data, count);
    collective(values, in_forward);
  };
}

}  // namespace

void TransformerBlockLayer::connect_all_reduce(InnerAllReduce all_reduce) {
  forward_collectives_.all_reduce_sum = bridge(all_reduce, true);
  backward_collectives_.all_reduce_sum = bridge(all_reduce, false);
}

void TransformerBlockLayer::connect_sequence_parallel(InnerSequenceCollectives collectives) {
  for (bool in_forward : {true, false}) {
    BlockCollectives& target = in_forward ? forward_collectives_ : backward_collectives_;
    target.sequence.all_gather = bridge(collectives.all_gather, in_forward);
    target.sequence.reduce_scatter = bridge(collectives.reduce_scatter, in_forward);
  }
}

Tensor TransformerBlockLayer::rows_of(const Tensor& x) const {
  assert(x.cols() == in_features());
  return Tensor::view(x, x.rows() * positions_, block_.config().dim);
}

BlockDropout TransformerBlockLayer::dropout_of(const ForwardInfo& info) const {
  BlockDropout dropout;
  dropout.p = info.training ? block_.config().dropout : 0.0f;
  dropout.seed = seed_;
  dropout.layer = index();
  dropout.step = info.step;
  dropout.first_sample = info.first_sample;
  return dropout;
}

Tensor TransformerBlockLayer::run_forward(const Tensor& x, const ForwardInfo& info,
                                          GptBlockCache& cache) const {
  Tensor y = make_activation(x.rows() * positions_, block_.config().dim);
  block_.forward(rows_of(x), x.rows(), seq_, cache, y, forward_collectives_, dropout_of(info));
  y.reshape(x.rows(), out_features());
  return y;
}

Tensor TransformerBlockLayer::run_backward_input(const Tensor& x, const Tensor& dy,
                                                 GptBlockCache& cache) const {
  Tensor dx = make_activation(x.rows() * positions_, block_.config().dim);
  block_.backward_input(rows_of(x), rows_of(dy), cache, dx, backward_collectives_);
  dx.reshape(x.rows(), in_features());
  return dx;
}

Tensor TransformerBlockLayer::forward(const Tensor& x, const ForwardInfo& info) {
  GptBlockCache cache;
  return run_forward(x, info, cache);
}

Tensor TransformerBlockLayer::backward_input(const Tensor& x, const Tensor& dy,
                                             const ForwardInfo& info) {
  GptBlockCache cache;
  run_forward(x, info, cache);
  return run_backward_input(x, dy, cache);
}

void TransformerBlockLayer::backward_weight(const Tensor& x, const Tensor& dy) {
  // Without a kept state there is no ForwardInfo to redraw dropout masks from:
  // stages keep one for every block (forward_keeping), so this serves
  // dropout-free uses only.
  assert(block_.config().dropout == 0.0f);
  GptBlockCache cache;
  run_forward(x, ForwardInfo{}, cache);
  run_backward_input(x, dy, cache);
  block_.backward_weight(rows_of(x), rows_of(dy), cache);
}

Tensor TransformerBlockLayer::forward_keeping(const Tensor& x, const ForwardInfo& info,
                                              std::unique_ptr<LayerState>& state) {
  auto kept = std::make_unique<GptBlockState>();
  Tensor y = run_forward(x, info, kept->cache);
  state = std::move(kept);
  return y;
}

Tensor TransformerBlockLayer::backward_input_with(const Tensor& x, const Tensor& dy,
                                                  const ForwardInfo& info, LayerState* state) {
  if (!state) return backward_input(x, dy, info);
  GptBlockCache& cache = static_cast<GptBlockState*>(state)->cache;
  Tensor dx = run_backward_input(x, dy, cache);
  // What backward_weight does not read (gpt_block.cpp): free it before the wait for BW.
  cache.qkv.reset();
  cache.probabilities.reset();
  if (block_.shard().splits_sequence()) {  // BW reads their gathered copies
    cache.norm1_out.reset();
    cache.norm2_out.reset();
  }
  cache.ffn1_out.reset();
  cache.d_activation_out.reset();
  cache.d_attention_out.reset();
  return dx;
}

void TransformerBlockLayer::backward_weight_with(const Tensor& x, const Tensor& dy,
                                                 LayerState* state) {
  if (!state) return backward_weight(x, dy);
  block_.backward_weight(rows_of(x), rows_of(dy), static_cast<GptBlockState*>(state)->cache);
}

}  // namespace pipelab
