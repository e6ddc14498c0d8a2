#include "gpu/layers/embedding.h"

#include <cassert>
#include <utility>

#include "core/nn/init.h"
#include "gpu/device/cuda_check.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/embedding.h"
#include "gpu/layers/sequence_split.h"

namespace pipelab::gpu {
namespace {

DeviceTensor initial_table(int64_t rows, int64_t dim, uint64_t seed, RandomStream stream,
                           int index, int64_t first_row, CachingAllocator* allocator) {
  Tensor host(rows, dim);
  init_embedding_table(host, seed, stream, index, first_row);
  return DeviceTensor::from_host(host, allocator, MemoryCategory::Weights);
}

int64_t local_seq_of(int64_t seq, const std::vector<int64_t>& context_positions) {
  return context_positions.empty() ? seq : static_cast<int64_t>(context_positions.size());
}

}  // namespace

GpuEmbedding::GpuEmbedding(int index, const VocabRange& range, int64_t dim, int64_t seq,
                           uint64_t seed, DeviceContext& context, int sequence_shards,
                           int sequence_shard, bool learned_positions,
                           std::vector<int64_t> context_positions)
    : GpuLayer(LayerType::Embedding, index, local_seq_of(seq, context_positions),
               local_seq_of(seq, context_positions) / sequence_shards * dim, context),
      range_(range),
      dim_(dim),
      seq_(seq),
      local_seq_(local_seq_of(seq, context_positions)),
      sequence_shards_(sequence_shards),
      sequence_shard_(sequence_shard),
      token_table_(initial_table(range.rows, dim, seed, RandomStream::TokenEmbedding, index,
                                 range.begin, &context.allocator())),
      position_table_(learned_positions
                          ? initial_table(seq, dim, seed, RandomStream::PositionEmbedding, index, 0,
                                          &context.allocator())
                          : DeviceTensor()),
      token_grad_(range.rows, dim, &context.allocator(), MemoryCategory::Gradients),
      position_grad_(learned_positions
                         ? DeviceTensor(seq, dim, &context.allocator(), MemoryCategory::Gradients)
                         : DeviceTensor()) {
  for (size_t t = 0; t < context_positions.size(); ++t) {
    const int64_t position = context_positions[t];
    if (!context_runs_.empty() &&
        context_runs_.back().global + context_runs_.back().count == position)
      ++context_runs_.back().count;
    else
      context_runs_.push_back({static_cast<int64_t>(t), position, 1});
  }
}

SequenceSlice GpuEmbedding::slice(int64_t batch) const {
  return {sequence_shards_, sequence_shard_, batch, local_seq_ / sequence_shards_};
}

const float* GpuEmbedding::position_rows(int64_t first, DeviceTensor& copy) const {
  if (context_runs_.empty()) return position_table_.data() + first * dim_;
  copy = DeviceTensor::uninitialized(local_seq_, dim_, &context().allocator(),
                                     MemoryCategory::Workspace);
  for (const PositionRun& run : context_runs_)
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(copy.data() + run.local * dim_,
                                       position_table_.data() + run.global * dim_,
                                       static_cast<size_t>(run.count * dim_) * sizeof(float),
                                       cudaMemcpyDeviceToDevice, context().stream()));
  return copy.data() + first * dim_;
}

DeviceTensor GpuEmbedding::forward(const DeviceTensor& x, const ForwardInfo&) {
  assert(x.cols() == local_seq_);
  const int64_t count = x.size();
  DeviceTensor y = make_activation(count, dim_);
  kernels::token_embedding_forward(x.data(), count, token_table_.data(), range_.begin, range_.rows,
                                   dim_, y.data(), y.stream());
  if (sequence_shards_ > 1) {
    // Each shard keeps the sum of the lookups at its positions, and their rows of the table.
    const SequenceSlice mine = slice(x.rows());
    DeviceTensor local = make_activation(x.rows() * mine.local_positions, dim_);
    scatter_sequence(
        y.data(), mine, dim_, local.data(),
        [this](DeviceTensor& values) { sequence_.reduce_scatter(values, true); }, context());
    if (learned_positions()) {
      DeviceTensor copy;
      kernels::add_position_embedding(position_rows(mine.first_position(), copy),
                                      mine.local_positions, local.data(), local.rows(), dim_,
                                      local.stream());
    }
    local.reshape(x.rows(), out_features());
    return local;
  }
  if (range_.rows != range_.vocab) {
    assert(all_reduce_);
    all_reduce_(y, true);  // every shard now holds the full lookup
  }
  if (learned_positions()) {
    DeviceTensor copy;
    kernels::add_position_embedding(position_rows(0, copy), local_seq_, y.data(), count, dim_,
                                    y.stream());
  }
  y.reshape(x.rows(), local_seq_ * dim_);
  return y;
}

DeviceTensor GpuEmbedding::backward_input(const DeviceTensor& x, const DeviceTensor&,
                                          const ForwardInfo&) {
  // Ids are not trained: a zero gradient.
  return DeviceTensor(x.rows(), x.cols(), &context().allocator(), MemoryCategory::Activations);
}

void GpuEmbedding::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  assert(dy.size() == x.rows() * out_features());
  // dy is whole on every shard (gathered first under sequence parallelism):
  // each adds its own token rows' gradients.
  DeviceTensor gathered;
  if (sequence_shards_ > 1) {
    gathered = make_activation(x.size(), dim_);
    gather_sequence(
        dy.data(), slice(x.rows()), dim_, gathered.data(),
        [this](DeviceTensor& values) { sequence_.all_gather(values, false); }, context());
  }
  const float* whole = sequence_shards_ > 1 ? gathered.data() : dy.data();
  kernels::token_embedding_backward(x.data(), x.size(), whole, range_.begin, range_.rows, dim_,
                                    token_grad_.data(), token_grad_.stream());
  if (!learned_positions()) return;
  if (context_runs_.empty()) {
    kernels::position_embedding_backward(whole, x.size(), seq_, dim_, position_grad_.data(),
                                         position_grad_.stream());
    return;
  }
  // The rank's positions' gradients, then added into their rows of the table's.
  DeviceTensor local(local_seq_, dim_, &context().allocator(), MemoryCategory::Workspace);
  kernels::position_embedding_backward(whole, x.size(), local_seq_, dim_, local.data(),
                                       local.stream());
  for (const PositionRun& run : context_runs_)
    kernels::add_into(position_grad_.data() + run.global * dim_, local.data() + run.local * dim_,
                      run.count * dim_, position_grad_.stream());
}

}  // namespace pipelab::gpu
