// How a kernel that runs on one tensor-parallel shard asks for a collective:
// the executor passes a function that all-reduces `count` floats at `data` in
// place across the shards of its group (NCCL, MPI, or threads summing on the
// host in tests). The kernels say which reduction each callback must do.
#pragma once

#include <cstdint>
#include <functional>

namespace pipelab {

using AllReduceFunction = std::function<void(float* data, int64_t count)>;

// For a single shard (tp = 1): every all-reduce is the identity.
inline void all_reduce_nothing(float*, int64_t) {}

// Sequence parallelism's two collectives, in place on a buffer of `count`
// floats that the tp shards cut into tp equal slices, shard k's being floats
// [k count / tp, (k + 1) count / tp):
//  - all_gather: the caller has written its own slice; afterwards every slice
//    holds its shard's values;
//  - reduce_scatter: the caller passes its partial values of the whole
//    buffer; afterwards its own slice holds the sum over the shards (the
//    other slices hold no meaningful values).
// These are NCCL's in-place ncclAllGather and ncclReduceScatter.
struct SequenceCollectives {
  AllReduceFunction all_gather;
  AllReduceFunction reduce_scatter;
};

// Context parallelism's two, over the ranks that split each sequence, as
// SequenceCollectives over their slices; the all-gather hands each rank's
// slice to `arrived` as soon as it is in place (the caller's own first), so
// the caller works on one slice while the ring passes the next on (ring
// attention). `arrived` may be empty.
using SliceArrival = std::function<void(int member)>;
struct ContextCollectives {
  std::function<void(float* data, int64_t count, const SliceArrival& arrived)> all_gather;
  AllReduceFunction reduce_scatter;
};

}  // namespace pipelab
