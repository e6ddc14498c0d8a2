#include "core/nn/context_split.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace pipelab {

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

}  // namespace pipelab
