#include "gpu/layers/embedding.h"

#include <cassert>

#include "core/nn/init.h"
#include "gpu/kernels/embedding.h"

namespace pipelab::gpu {
namespace {

DeviceTensor initial_table(int64_t rows, int64_t dim, uint64_t seed, RandomStream stream,
                           int index, int64_t first_row, CachingAllocator* allocator) {
  Tensor host(rows, dim);
  init_embedding_table(host, seed, stream, index, first_row);
  return DeviceTensor::from_host(host, allocator, MemoryCategory::Weights);
}

}  // namespace

GpuEmbedding::GpuEmbedding(int index, const VocabRange& range, int64_t dim, int64_t seq,
                           uint64_t seed, DeviceContext& context)
    : GpuLayer(LayerType::Embedding, index, seq, seq * dim, context),
      range_(range),
      dim_(dim),
      seq_(seq),
      token_table_(initial_table(range.rows, dim, seed, RandomStream::TokenEmbedding, index,
                                 range.begin, &context.allocator())),
      position_table_(initial_table(seq, dim, seed, RandomStream::PositionEmbedding, index, 0,
                                    &context.allocator())),
      token_grad_(range.rows, dim, &context.allocator(), MemoryCategory::Gradients),
      position_grad_(seq, dim, &context.allocator(), MemoryCategory::Gradients) {}

DeviceTensor GpuEmbedding::forward(const DeviceTensor& x, const ForwardInfo&) {
  assert(x.cols() == seq_);
  const int64_t count = x.size();
  DeviceTensor y = make_activation(count, dim_);
  kernels::token_embedding_forward(x.data(), count, token_table_.data(), range_.begin, range_.rows,
                                   dim_, y.data(), y.stream());
  if (range_.rows != range_.vocab) {
    assert(all_reduce_);
    all_reduce_(y, true);  // every shard now holds the full lookup
  }
  kernels::add_position_embedding(position_table_.data(), seq_, y.data(), count, dim_, y.stream());
  y.reshape(x.rows(), seq_ * dim_);
  return y;
}

DeviceTensor GpuEmbedding::backward_input(const DeviceTensor& x, const DeviceTensor&,
                                          const ForwardInfo&) {
  // Ids are not trained: a zero gradient.
  return DeviceTensor(x.rows(), x.cols(), &context().allocator(), MemoryCategory::Activations);
}

void GpuEmbedding::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  assert(dy.size() == x.size() * dim_);
  // dy is whole on every shard: each adds its own token rows' gradients.
  kernels::token_embedding_backward(x.data(), x.size(), dy.data(), range_.begin, range_.rows, dim_,
                                    token_grad_.data(), token_grad_.stream());
  kernels::position_embedding_backward(dy.data(), x.size(), seq_, dim_, position_grad_.data(),
                                       position_grad_.stream());
}

}  // namespace pipelab::gpu
