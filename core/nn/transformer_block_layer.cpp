#include "core/nn/transformer_block_layer.h"

#include <cassert>
#include <stdexcept>

namespace pipelab {
namespace {

// The positions of a sample this layer's rank and shard hold.
int64_t positions_of(int64_t seq, const BlockShard& shard) {
  const int64_t context = seq / shard.cp;
  return shard.splits_sequence() ? context / shard.tp : context;
}

std::vector<Tensor*> joined(std::vector<Tensor*> list, const std::vector<Tensor*>& more) {
  list.insert(list.end(), more.begin(), more.end());
  return list;
}

}  // namespace

TransformerBlockLayer::TransformerBlockLayer(int index, const GptBlockConfig& config,
                                             const BlockShard& shard, int64_t seq,
                                             DeviceAllocator* allocator,
                                             const BlockExperts* experts)
    : Layer(LayerType::TransformerBlock, index, positions_of(seq, shard) * config.dim,
            positions_of(seq, shard) * config.dim, allocator),
      seq_(seq),
      positions_(positions_of(seq, shard)),
      block_(config, shard, allocator) {
  if (!experts) return;
  if (shard.splits_context())
    throw std::invalid_argument("layer " + std::to_string(index) +
                                ": a transformer_block with experts does not train under context "
                                "parallelism yet; set parallel.cp = 1, or simulate");
  if (config.dense_mlp || experts->shard.tp != shard.tp || experts->shard.tp_shard != shard.shard ||
      experts->shard.partial_outputs() != shard.splits_sequence())
    throw std::invalid_argument("layer " + std::to_string(index) +
                                ": a transformer_block's experts must be split over the block's "
                                "tensor-parallel shards, and along the sequence as the block is");
  experts_ = std::make_unique<MoeLayer>(index, experts->shape, experts->aux_loss_weight,
                                        experts->shard, allocator);
}

// The block's tensors, then the experts' (gate, then each expert's).
std::vector<Tensor*> TransformerBlockLayer::params() {
  return experts_ ? joined(block_.weights().list(), experts_->params()) : block_.weights().list();
}

std::vector<Tensor*> TransformerBlockLayer::grads() {
  std::vector<Tensor*> gradients = block_.gradients().list_like(block_.weights());
  return experts_ ? joined(std::move(gradients), experts_->grads()) : gradients;
}

void TransformerBlockLayer::connect_experts(ExpertConnection connection) {
  if (!experts_) return Layer::connect_experts(std::move(connection));
  experts_->connect_experts(std::move(connection));
}

std::vector<Tensor*> TransformerBlockLayer::expert_grads() {
  return experts_ ? experts_->expert_grads() : std::vector<Tensor*>{};
}

std::vector<Tensor*> TransformerBlockLayer::sequence_partial_grads() {
  // Under sequence parallelism the norms' and the gate's (moe_layer.h).
  return experts_ ? joined(block_.sequence_partial_gradients(), experts_->sequence_partial_grads())
                  : block_.sequence_partial_gradients();
}

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

void TransformerBlockLayer::connect_context_parallel(InnerContextCollectives collectives) {
  for (bool in_forward : {true, false}) {
    BlockCollectives& target = in_forward ? forward_collectives_ : backward_collectives_;
    target.context.all_gather = [gather = collectives.all_gather, in_forward](
                                    float* data, int64_t count, const SliceArrival& arrived) {
      Tensor values = Tensor::borrow(data, count);
      gather(values, in_forward, arrived);
    };
    target.context.reduce_scatter = bridge(collectives.reduce_scatter, in_forward);
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
                                          GptBlockState& state) {
  Tensor y = make_activation(x.rows() * positions_, block_.config().dim);
  if (experts_) {
    block_.forward_attention(rows_of(x), x.rows(), seq_, state.cache, forward_collectives_,
                             dropout_of(info));
    experts_forward(info, state, y);
  } else {
    block_.forward(rows_of(x), x.rows(), seq_, state.cache, y, forward_collectives_,
                   dropout_of(info));
  }
  y.reshape(x.rows(), out_features());
  return y;
}

void TransformerBlockLayer::experts_forward(const ForwardInfo& info, GptBlockState& state,
                                            Tensor& y) {
  GptBlockCache& cache = state.cache;
  const BlockCollectives& collectives = forward_collectives_;
  const SequenceSlice slice = block_.sequence_slice(cache.batch, cache.seq);
  // Under sequence parallelism every shard routes the whole sequence alike
  // and the combined partial outputs are scattered back onto the slices;
  // under plain tp the experts sum their slots themselves (moe_layer.h).
  const bool split = slice.tp > 1;
  Tensor gathered;
  Tensor mixed = experts_->mix(block_.whole_sequence(cache.norm2_out, slice, gathered, collectives),
                               info, state.experts,
                               split ? AllReduceFunction(all_reduce_nothing) : collectives.all_reduce_sum);
  gathered.reset();
  if (split) {
    y = make_activation(cache.norm2_out.rows(), cache.norm2_out.cols());
    block_.sum_partials(mixed, slice, y, collectives);
  } else {
    y = std::move(mixed);
  }
  if (cache.dropout.active())
    apply_block_dropout(cache.dropout, BlockDropoutSite::AfterFeedForward, slice.local_positions, y,
                        slice.first_position());
  y.add(cache.h);
}

Tensor TransformerBlockLayer::run_backward_input(const Tensor& x, const Tensor& dy,
                                                 GptBlockState& state) {
  Tensor dx = make_activation(x.rows() * positions_, block_.config().dim);
  if (experts_) {
    experts_backward(rows_of(dy), state);
    block_.backward_attention(rows_of(x), rows_of(dy), state.cache, dx, backward_collectives_);
  } else {
    block_.backward_input(rows_of(x), rows_of(dy), state.cache, dx, backward_collectives_);
  }
  dx.reshape(x.rows(), in_features());
  return dx;
}

void TransformerBlockLayer::experts_backward(const Tensor& dy, GptBlockState& state) {
  GptBlockCache& cache = state.cache;
  const BlockCollectives& collectives = backward_collectives_;
  const SequenceSlice slice = block_.sequence_slice(cache.batch, cache.seq);
  const bool split = slice.tp > 1;
  // Under sequence parallelism: the output gradient gathered, the tokens
  // gathered again (as the dense block does for FFN1's weight gradient), and
  // the partial token gradients scattered onto the slice.
  Tensor masked, gathered;
  const Tensor& mix_grad =
      block_.output_gradient(dy, BlockDropoutSite::AfterFeedForward, cache, masked, collectives);
  Tensor token_grad =
      experts_->mix_backward(block_.whole_sequence(cache.norm2_out, slice, gathered, collectives),
                             mix_grad, state.experts.get(),
                             split ? AllReduceFunction(all_reduce_nothing) : collectives.all_reduce_sum);
  if (!split) {
    cache.d_norm2_out = std::move(token_grad);
    return;
  }
  masked.reset();
  gathered.reset();
  cache.d_norm2_out = make_activation(cache.norm2_out.rows(), cache.norm2_out.cols());
  block_.sum_partials(token_grad, slice, cache.d_norm2_out, collectives);
}

Tensor TransformerBlockLayer::forward(const Tensor& x, const ForwardInfo& info) {
  GptBlockState state;
  return run_forward(x, info, state);
}

Tensor TransformerBlockLayer::backward_input(const Tensor& x, const Tensor& dy,
                                             const ForwardInfo& info) {
  GptBlockState state;
  run_forward(x, info, state);
  return run_backward_input(x, dy, state);
}

void TransformerBlockLayer::backward_weight(const Tensor& x, const Tensor& dy) {
  // Without a kept state there is no ForwardInfo to redraw dropout masks from:
  // stages keep one for every block (forward_keeping), so this serves
  // dropout-free uses only.
  assert(block_.config().dropout == 0.0f);
  // The experts added their gradients in backward_input (moe_layer.h); the
  // rerun below must not add them twice.
  std::vector<Tensor> experts_before;
  if (experts_)
    for (Tensor* grad : experts_->grads()) experts_before.push_back(grad->clone());
  GptBlockState state;
  run_forward(x, ForwardInfo{}, state);
  run_backward_input(x, dy, state);
  block_.backward_weight(rows_of(x), rows_of(dy), state.cache);
  if (experts_) {
    const std::vector<Tensor*> grads = experts_->grads();
    for (size_t i = 0; i < grads.size(); ++i) grads[i]->copy_from(experts_before[i]);
  }
}

Tensor TransformerBlockLayer::forward_keeping(const Tensor& x, const ForwardInfo& info,
                                              std::unique_ptr<LayerState>& state) {
  auto kept = std::make_unique<GptBlockState>();
  Tensor y = run_forward(x, info, *kept);
  state = std::move(kept);
  return y;
}

Tensor TransformerBlockLayer::backward_input_with(const Tensor& x, const Tensor& dy,
                                                  const ForwardInfo& info, LayerState* state) {
  if (!state) return backward_input(x, dy, info);
  GptBlockState& kept = *static_cast<GptBlockState*>(state);
  Tensor dx = run_backward_input(x, dy, kept);
  kept.drop_unread_by_backward_weight(block_.shard().splits_sequence());  // gpt_block.cpp reads the rest
  return dx;
}

void TransformerBlockLayer::backward_weight_with(const Tensor& x, const Tensor& dy,
                                                 LayerState* state) {
  if (!state) return backward_weight(x, dy);
  block_.backward_weight(rows_of(x), rows_of(dy), static_cast<GptBlockState*>(state)->cache);
}

}  // namespace pipelab
