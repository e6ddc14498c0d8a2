#include "core/nn/sequence_split.h"

#include <algorithm>
#include <cassert>

namespace pipelab {
namespace {

// Copies, for every (shard j, sample b), the j-th slice of sample b between
// the sample-major `whole` and the shard-major `staged`.
void reorder(const SequenceSlice& slice, int64_t width, const float* from, float* to,
             bool to_shard_major) {
  for (int j = 0; j < slice.tp; ++j) {
    const SequenceShardCopy copy = sequence_shard_copy(slice, width, j);
    for (int64_t b = 0; b < copy.count; ++b) {
      const int64_t sample_major = copy.sample_major_offset + b * copy.sample_major_stride;
      const int64_t shard_major = copy.shard_major_offset + b * copy.run;
      const float* source = from + (to_shard_major ? sample_major : shard_major);
      float* target = to + (to_shard_major ? shard_major : sample_major);
      std::copy(source, source + copy.run, target);
    }
  }
}

}  // namespace

SequenceShardCopy sequence_shard_copy(const SequenceSlice& slice, int64_t width, int j) {
  const int64_t run = slice.local_positions * width;  // one sample's slice
  SequenceShardCopy copy;
  copy.sample_major_offset = j * run;
  copy.sample_major_stride = slice.positions() * width;
  copy.shard_major_offset = j * slice.batch * run;
  copy.run = run;
  copy.count = slice.batch;
  return copy;
}

void gather_sequence(const Tensor& local, const SequenceSlice& slice, Tensor& whole,
                     const AllReduceFunction& all_gather, DeviceAllocator* allocator) {
  const int64_t width = local.cols();
  assert(local.rows() == slice.batch * slice.local_positions);
  assert(whole.rows() == slice.batch * slice.positions() && whole.cols() == width);
  Tensor staged(whole.rows(), width, allocator, MemoryCategory::Workspace);
  std::copy(local.data(), local.data() + local.size(), staged.data() + slice.shard * local.size());
  all_gather(staged.data(), staged.size());
  reorder(slice, width, staged.data(), whole.data(), /*to_shard_major=*/false);
}

void scatter_sequence(const Tensor& whole, const SequenceSlice& slice, Tensor& local,
                      const AllReduceFunction& reduce_scatter, DeviceAllocator* allocator) {
  const int64_t width = whole.cols();
  assert(whole.rows() == slice.batch * slice.positions());
  assert(local.rows() == slice.batch * slice.local_positions && local.cols() == width);
  Tensor staged(whole.rows(), width, allocator, MemoryCategory::Workspace);
  reorder(slice, width, whole.data(), staged.data(), /*to_shard_major=*/true);
  reduce_scatter(staged.data(), staged.size());
  const float* mine = staged.data() + slice.shard * local.size();
  std::copy(mine, mine + local.size(), local.data());
}

}  // namespace pipelab
