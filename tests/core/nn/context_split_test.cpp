// A context rank's positions (two chunks, Megatron-LM's balance) and the
// chunk copies between a rank-major buffer and the sample-major whole
// sequence (context_split.h), which the CUDA backend's gathers and scatters
// run as strided copies: here run on the host and checked position by
// position.
#include "core/nn/context_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace pipelab {
namespace {

TEST(ContextSplit, EachRankHoldsChunkRAndItsMirror) {
  EXPECT_EQ(context_positions(8, 2, 0), (std::vector<int64_t>{0, 1, 6, 7}));
  EXPECT_EQ(context_positions(8, 2, 1), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(context_positions(8, 4, 3), (std::vector<int64_t>{3, 4}));
  EXPECT_THROW(context_positions(10, 2, 0), std::invalid_argument);
  EXPECT_THROW(context_positions(8, 2, 2), std::invalid_argument);
}

// Rank-major [cp][batch][seq / cp][width] to sample-major [batch][seq][width]
// by the chunk copies: every value lands at its rank's global position.
TEST(ContextSplit, ChunkCopiesPutEveryRanksRowsAtTheirPositions) {
  const int64_t batch = 2, seq = 12, width = 3;
  for (int cp : {1, 2, 3}) {
    SCOPED_TRACE("cp " + std::to_string(cp));
    const int64_t local = seq / cp;
    // Rank j's row t of sample b holds 1000 j + 100 b + 10 t + c.
    std::vector<float> staged(static_cast<size_t>(batch * seq * width));
    for (int j = 0; j < cp; ++j)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t t = 0; t < local; ++t)
          for (int64_t c = 0; c < width; ++c)
            staged[((j * batch + b) * local + t) * width + c] =
                static_cast<float>(1000 * j + 100 * b + 10 * t + c);
    std::vector<float> whole(staged.size(), -1.0f);
    const ContextSlice slice{cp, 0, batch, seq};
    for (int j = 0; j < cp; ++j)
      for (int half = 0; half < 2; ++half) {
        const ContextChunkCopy copy = context_chunk_copy(slice, width, j, half);
        for (int64_t b = 0; b < copy.count; ++b)
          std::copy_n(staged.begin() + copy.staged_offset + b * copy.staged_stride, copy.run,
                      whole.begin() + copy.whole_offset + b * copy.whole_stride);
      }
    for (int j = 0; j < cp; ++j) {
      const std::vector<int64_t> positions = context_positions(seq, cp, j);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t t = 0; t < local; ++t)
          for (int64_t c = 0; c < width; ++c)
            EXPECT_EQ(whole[(b * seq + positions[t]) * width + c],
                      static_cast<float>(1000 * j + 100 * b + 10 * t + c))
                << "rank " << j << " sample " << b << " row " << t;
    }
  }
}

}  // namespace
}  // namespace pipelab
