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

}  // namespace pipelab
