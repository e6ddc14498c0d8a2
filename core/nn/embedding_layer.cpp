#include "core/nn/embedding_layer.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/nn/init.h"

namespace pipelab {
namespace {

// The ids of x [batch, seq], row-major (they are whole numbers stored as floats).
std::vector<int32_t> token_ids(const Tensor& x) {
  std::vector<int32_t> ids(static_cast<size_t>(x.size()));
  const float* values = x.data();
  for (size_t i = 0; i < ids.size(); ++i) {
    const float value = values[i];
    if (!(value >= 0.0f) || value != std::floor(value) || value >= 2147483648.0f)
      throw std::invalid_argument("embedding input " + std::to_string(value) +
                                  " is not a token id; feed token ids (a sequence data source)");
    ids[i] = static_cast<int32_t>(value);
  }
  return ids;
}

}  // namespace

EmbeddingLayer::EmbeddingLayer(int index, const VocabRange& range, int64_t dim, int64_t seq,
                               DeviceAllocator* allocator, int sequence_shards, int sequence_shard,
                               bool learned_positions, std::vector<int64_t> context_positions)
    : Layer(LayerType::Embedding, index,
            context_positions.empty() ? seq : static_cast<int64_t>(context_positions.size()),
            (context_positions.empty() ? seq : static_cast<int64_t>(context_positions.size())) /
                sequence_shards * dim,
            allocator),
      range_(range),
      dim_(dim),
      seq_(seq),
      context_positions_(std::move(context_positions)),
      local_seq_(in_features()),
      sequence_shards_(sequence_shards),
      sequence_shard_(sequence_shard),
      token_table_(range.rows, dim, allocator, MemoryCategory::Weights),
      position_table_(learned_positions ? Tensor(seq, dim, allocator, MemoryCategory::Weights)
                                        : Tensor()),
      token_grad_(range.rows, dim, allocator, MemoryCategory::Gradients),
      position_grad_(learned_positions ? Tensor(seq, dim, allocator, MemoryCategory::Gradients)
                                       : Tensor()) {}

void EmbeddingLayer::init(uint64_t seed) {
  init_embedding_table(token_table_, seed, RandomStream::TokenEmbedding, index(), range_.begin);
  if (learned_positions())
    init_embedding_table(position_table_, seed, RandomStream::PositionEmbedding, index());
}

SequenceSlice EmbeddingLayer::slice(int64_t batch) const {
  return {sequence_shards_, sequence_shard_, batch, local_seq_ / sequence_shards_};
}

Tensor EmbeddingLayer::position_rows(int64_t first, int64_t count) const {
  if (context_positions_.empty()) {
    Tensor rows = Tensor::borrow(const_cast<float*>(position_table_.row(first)), count * dim_);
    rows.reshape(count, dim_);
    return rows;
  }
  Tensor rows = Tensor::uninitialized(count, dim_, allocator(), MemoryCategory::Workspace);
  for (int64_t t = 0; t < count; ++t) {
    const float* row = position_table_.row(context_positions_[static_cast<size_t>(first + t)]);
    std::copy(row, row + dim_, rows.row(t));
  }
  return rows;
}

Tensor EmbeddingLayer::forward(const Tensor& x, const ForwardInfo&) {
  assert(x.cols() == local_seq_);
  const std::vector<int32_t> ids = token_ids(x);
  Tensor lookup = make_activation(x.rows() * local_seq_, dim_);
  token_embedding_forward(ids, token_table_, range_, lookup);
  if (sequence_shards_ > 1) {
    // Each shard keeps the sum of the lookups at its positions, and their rows of the table.
    const SequenceSlice mine = slice(x.rows());
    Tensor y = make_activation(x.rows() * mine.local_positions, dim_);
    scatter_sequence(lookup, mine, y,
                     [this](float* data, int64_t count) {
                       Tensor values = Tensor::borrow(data, count);
                       sequence_.reduce_scatter(values, true);
                     },
                     allocator());
    if (learned_positions())
      add_position_embedding(position_rows(mine.first_position(), mine.local_positions),
                             mine.local_positions, y);
    y.reshape(x.rows(), out_features());
    return y;
  }
  if (range_.rows != range_.vocab) {
    assert(all_reduce_);
    all_reduce_(lookup, true);  // every shard now holds the full lookup
  }
  if (learned_positions()) add_position_embedding(position_rows(0, local_seq_), local_seq_, lookup);
  lookup.reshape(x.rows(), local_seq_ * dim_);
  return lookup;
}

Tensor EmbeddingLayer::backward_input(const Tensor& x, const Tensor&, const ForwardInfo&) {
  return make_activation(x.rows(), x.cols());  // ids are not trained: a zero gradient
}

void EmbeddingLayer::backward_weight(const Tensor& x, const Tensor& dy) {
  const std::vector<int32_t> ids = token_ids(x);
  // dy is whole on every shard (gathered first under sequence parallelism):
  // each adds its own token rows' gradients, and the replicated position
  // table's gradient comes out the same everywhere.
  Tensor gathered;
  if (sequence_shards_ > 1) {
    const SequenceSlice mine = slice(x.rows());
    gathered = make_activation(x.rows() * local_seq_, dim_);
    gather_sequence(Tensor::view(dy, x.rows() * mine.local_positions, dim_), mine, gathered,
                    [this](float* data, int64_t count) {
                      Tensor values = Tensor::borrow(data, count);
                      sequence_.all_gather(values, false);
                    },
                    allocator());
  }
  const Tensor rows = sequence_shards_ > 1 ? Tensor::view(gathered, gathered.rows(), dim_)
                                           : Tensor::view(dy, x.rows() * local_seq_, dim_);
  token_embedding_backward(ids, rows, range_, token_grad_);
  if (!learned_positions()) return;
  if (context_positions_.empty()) {
    position_embedding_backward(rows, seq_, position_grad_);
    return;
  }
  // The rank's positions' gradients, then added into their rows of the table's.
  Tensor local(local_seq_, dim_, allocator(), MemoryCategory::Workspace);
  position_embedding_backward(rows, local_seq_, local);
  for (int64_t t = 0; t < local_seq_; ++t) {
    float* target = position_grad_.row(context_positions_[static_cast<size_t>(t)]);
    const float* grad = local.row(t);
    for (int64_t c = 0; c < dim_; ++c) target[c] += grad[c];
  }
}

}  // namespace pipelab
