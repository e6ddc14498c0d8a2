#include "core/nn/tensor_parallel.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace pipelab {
namespace {

// [begin, begin + width / tp) of shard `shard`, after checking the split is even.
void split_evenly(int64_t width, int tp, int shard, const char* what, int64_t& begin,
                  int64_t& count) {
  if (tp < 1 || shard < 0 || shard >= tp)
    throw std::invalid_argument("tensor-parallel shard " + std::to_string(shard) + " of tp = " +
                                std::to_string(tp) + " does not exist; need 0 <= shard < tp");
  if (width % tp != 0)
    throw std::invalid_argument("tp = " + std::to_string(tp) + " does not divide the linear's " +
                                what + " width " + std::to_string(width) +
                                "; choose a tp that divides it");
  count = width / tp;
  begin = count * shard;
}

}  // namespace

MatrixSlice linear_weight_slice(TensorParallelRole role, int64_t in_features, int64_t out_features,
                                int tp, int shard) {
  MatrixSlice slice{0, in_features, 0, out_features};
  if (role == TensorParallelRole::ColumnParallel)
    split_evenly(out_features, tp, shard, "output", slice.col_begin, slice.cols);
  else if (role == TensorParallelRole::RowParallel)
    split_evenly(in_features, tp, shard, "input", slice.row_begin, slice.rows);
  return slice;
}

MatrixSlice linear_bias_slice(TensorParallelRole role, int64_t out_features, int tp, int shard) {
  MatrixSlice slice{0, 1, 0, out_features};
  if (role == TensorParallelRole::ColumnParallel)
    split_evenly(out_features, tp, shard, "output", slice.col_begin, slice.cols);
  return slice;
}

Tensor copy_slice(const Tensor& full, const MatrixSlice& slice, DeviceAllocator* allocator,
                  MemoryCategory category) {
  assert(slice.row_begin >= 0 && slice.row_begin + slice.rows <= full.rows());
  assert(slice.col_begin >= 0 && slice.col_begin + slice.cols <= full.cols());
  Tensor part(slice.rows, slice.cols, allocator, category);
  for (int64_t r = 0; r < slice.rows; ++r) {
    const float* source = full.row(slice.row_begin + r) + slice.col_begin;
    std::copy(source, source + slice.cols, part.row(r));
  }
  return part;
}

}  // namespace pipelab
