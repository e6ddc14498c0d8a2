#include "core/nn/context_split.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

// Copies every (rank, chunk) run between the sample-major `whole` and the
// rank-major `staged`.
void reorder(const ContextSlice& slice, int64_t width, const float* from, float* to,
             bool to_rank_major) {
  for (int j = 0; j < slice.cp; ++j)
    for (int half = 0; half < 2; ++half) {
      const ContextChunkCopy copy = context_chunk_copy(slice, width, j, half);
      for (int64_t b = 0; b < copy.count; ++b) {
        const int64_t whole = copy.whole_offset + b * copy.whole_stride;
        const int64_t staged = copy.staged_offset + b * copy.staged_stride;
        const float* source = from + (to_rank_major ? whole : staged);
        float* target = to + (to_rank_major ? staged : whole);
        std::copy(source, source + copy.run, target);
      }
    }
}

}  // namespace

std::vector<int64_t> context_positions(int64_t seq, int cp, int rank) {
  if (cp < 1 || seq <= 0 || seq % (2 * static_cast<int64_t>(cp)) != 0)
    throw std::invalid_argument(
        "context parallelism cuts the sequence into 2 x cp equal chunks: " + std::to_string(seq) +
        " tokens do not divide into 2 x " + std::to_string(cp));
  if (rank < 0 || rank >= cp)
    throw std::invalid_argument("context rank " + std::to_string(rank) + " is outside [0, " +
                                std::to_string(cp) + ")");
  const int64_t chunk = seq / (2 * cp);
  std::vector<int64_t> positions;
  positions.reserve(static_cast<size_t>(2 * chunk));
  for (int64_t c : {static_cast<int64_t>(rank), static_cast<int64_t>(2 * cp - 1 - rank)})
    for (int64_t t = 0; t < chunk; ++t) positions.push_back(c * chunk + t);
  return positions;
}

ContextChunkCopy context_chunk_copy(const ContextSlice& slice, int64_t width, int j, int half) {
  const int64_t run = slice.chunk() * width;
  const int64_t chunk_index = half == 0 ? j : 2 * slice.cp - 1 - j;
  const int64_t local = slice.local_positions() * width;  // one sample's rows on a rank
  ContextChunkCopy copy;
  copy.whole_offset = chunk_index * run;
  copy.whole_stride = slice.seq * width;
  copy.staged_offset = j * slice.batch * local + half * run;
  copy.staged_stride = local;
  copy.run = run;
  copy.count = slice.batch;
  return copy;
}

void gather_context(const Tensor& local, const ContextSlice& slice, Tensor& whole,
                    const AllReduceFunction& all_gather, DeviceAllocator* allocator) {
  const int64_t width = local.cols();
  assert(local.rows() == slice.batch * slice.local_positions());
  assert(whole.rows() == slice.batch * slice.seq && whole.cols() == width);
  Tensor staged = Tensor::uninitialized(whole.rows(), width, allocator, MemoryCategory::Workspace);
  std::copy(local.data(), local.data() + local.size(), staged.data() + slice.rank * local.size());
  all_gather(staged.data(), staged.size());
  reorder(slice, width, staged.data(), whole.data(), /*to_rank_major=*/false);
}

void scatter_context(const Tensor& whole, const ContextSlice& slice, Tensor& local,
                     const AllReduceFunction& reduce_scatter, DeviceAllocator* allocator) {
  const int64_t width = whole.cols();
  assert(whole.rows() == slice.batch * slice.seq);
  assert(local.rows() == slice.batch * slice.local_positions() && local.cols() == width);
  Tensor staged = Tensor::uninitialized(whole.rows(), width, allocator, MemoryCategory::Workspace);
  reorder(slice, width, whole.data(), staged.data(), /*to_rank_major=*/true);
  reduce_scatter(staged.data(), staged.size());
  const float* mine = staged.data() + slice.rank * local.size();
  std::copy(mine, mine + local.size(), local.data());
}

}  // namespace pipelab
