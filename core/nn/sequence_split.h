// Moving values between one shard's slice of the sequence and the whole
// sequence, under sequence parallelism (Korthikanti et al.; Megatron-LM's
// sequence_parallel): shard k of tp holds positions [k s / tp, (k + 1) s / tp)
// of every sample.
//
// The layers keep sequence values sample-major, one row per position:
// [batch * seq, width], row b * seq + t. The collectives (all_reduce.h's
// SequenceCollectives) cut a buffer into tp slices in shard order, so the
// functions here go through a shard-major staging buffer,
// [tp][batch][seq / tp][width], and reorder on the way in and out.
#pragma once

#include <cstdint>

#include "core/nn/all_reduce.h"
#include "core/nn/tensor.h"

namespace pipelab {

struct SequenceSlice {
  int tp = 1;
  int shard = 0;
  int64_t batch = 0;
  int64_t local_positions = 0;  // seq / tp

  int64_t positions() const { return local_positions * tp; }
  int64_t first_position() const { return local_positions * shard; }
};

// The reorder between the sample-major [batch][seq][width] and the
// shard-major staging [tp][batch][seq / tp][width] buffers, for shard j's
// slice: `count` (batch) runs of `run` floats, run b at sample_major_offset +
// b * sample_major_stride on one side and shard_major_offset + b * run on the
// other. One strided copy per shard (the CUDA backend's cudaMemcpy2DAsync).
struct SequenceShardCopy {
  int64_t sample_major_offset = 0;
  int64_t sample_major_stride = 0;
  int64_t shard_major_offset = 0;
  int64_t run = 0;
  int64_t count = 0;
};
SequenceShardCopy sequence_shard_copy(const SequenceSlice& slice, int64_t width, int j);

// whole [batch * seq, width] from every shard's local [batch * seq / tp,
// width], through `all_gather`.
void gather_sequence(const Tensor& local, const SequenceSlice& slice, Tensor& whole,
                     const AllReduceFunction& all_gather, DeviceAllocator* allocator);

// local [batch * seq / tp, width] = this shard's positions of the sum over the
// shards of their partial `whole` [batch * seq, width], through
// `reduce_scatter`.
void scatter_sequence(const Tensor& whole, const SequenceSlice& slice, Tensor& local,
                      const AllReduceFunction& reduce_scatter, DeviceAllocator* allocator);

}  // namespace pipelab
