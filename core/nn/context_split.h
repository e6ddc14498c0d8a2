// Moving values between one context-parallel rank's positions and the whole
// sequence (parallel.cp; Megatron-LM's --context-parallel-size).
//
// Positions. The sequence of `seq` tokens is cut into 2 cp equal chunks and
// rank r holds chunks r and 2 cp - 1 - r, so that under the causal mask every
// rank has the same attention work (Megatron-LM's load balancing). A rank's
// rows of a sample are its tokens in position order: chunk r, then chunk
// 2 cp - 1 - r.
//
// The layers keep sequence values sample-major, [batch * positions, width].
// The collectives (all_reduce.h's ContextCollectives, run over the
// context-parallel group) cut a buffer into cp slices in rank order: a
// rank-major buffer, [cp][batch][seq / cp][width], whose slice j is rank j's
// rows as that rank keeps them. The cpu backend's ring attention works on
// such a buffer directly (gpt_block.h); the CUDA backend reorders it into
// sample-major [batch][seq][width] in position order (context_chunk_copy,
// gpu/layers/context_split.h).
#pragma once

#include <cstdint>
#include <vector>

namespace pipelab {

// The global positions rank `rank` of `cp` holds of a `seq`-token sequence,
// increasing. Throws std::invalid_argument when 2 cp does not divide seq or
// rank is outside [0, cp).
std::vector<int64_t> context_positions(int64_t seq, int cp, int rank);

struct ContextSlice {
  int cp = 1;
  int rank = 0;
  int64_t batch = 0;
  int64_t seq = 0;  // the whole sequence

  int64_t local_positions() const { return seq / cp; }
  int64_t chunk() const { return seq / (2 * cp); }
};

// The copy between the sample-major whole [batch][seq][width] and the
// rank-major staging [cp][batch][seq / cp][width] of rank j's chunk `half`
// (0: chunk j, 1: chunk 2 cp - 1 - j): `count` (batch) runs of `run` floats,
// run b at whole_offset + b * whole_stride on one side and staged_offset + b *
// staged_stride on the other (the CUDA backend's cudaMemcpy2DAsync).
struct ContextChunkCopy {
  int64_t whole_offset = 0;
  int64_t whole_stride = 0;
  int64_t staged_offset = 0;
  int64_t staged_stride = 0;
  int64_t run = 0;
  int64_t count = 0;
};
ContextChunkCopy context_chunk_copy(const ContextSlice& slice, int64_t width, int j, int half);

}  // namespace pipelab
