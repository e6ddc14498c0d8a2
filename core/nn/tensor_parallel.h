// Megatron-style tensor parallelism for linear layers, W being [in, out]:
//  - a column-parallel shard holds out / tp output columns of W and the same
//    columns of b; its input is the whole activation, its output a slice;
//  - a row-parallel shard holds in / tp input rows of W and adds the whole b
//    once, after the partial outputs are summed by the all-reduce.
// Which linear plays which role comes from tensor_parallel_roles in
// core/plan/stage_profile.h (only its enum is used here). Since init (init.h)
// is keyed by the element's position in the full layer, a shard initialised
// for its slice equals that slice of the full layer's initial weights.
#pragma once

#include <cstdint>

#include "core/nn/tensor.h"
#include "core/plan/stage_profile.h"

namespace pipelab {

// A block of a matrix: rows [row_begin, row_begin + rows), columns likewise.
struct MatrixSlice {
  int64_t row_begin = 0;
  int64_t rows = 0;
  int64_t col_begin = 0;
  int64_t cols = 0;
};

// The part of a full [in, out] weight that shard `shard` of `tp` holds (the whole
// matrix for Replicated). Throws std::invalid_argument when tp does not divide
// the split width.
MatrixSlice linear_weight_slice(TensorParallelRole role, int64_t in_features, int64_t out_features,
                                int tp, int shard);
// The part of the full [1, out] bias: column-parallel, its out / tp columns;
// otherwise the whole bias.
MatrixSlice linear_bias_slice(TensorParallelRole role, int64_t out_features, int tp, int shard);

// A copy of one block of `full`.
Tensor copy_slice(const Tensor& full, const MatrixSlice& slice,
                  DeviceAllocator* allocator = nullptr,
                  MemoryCategory category = MemoryCategory::Workspace);

}  // namespace pipelab
