// Bias kernels of a linear layer on row-major [rows, cols] matrices:
//   broadcast_rows   y[r][c] = bias[c]  (seeds Y before a GEMM with beta = 1,
//                    as core/nn's linear forward does)
//   add_bias_rows    y[r][c] += bias[c] (a row-parallel shard after its all-reduce)
//   add_column_sums  sums[c] += sum over r of x[r][c] (the bias gradient),
//                    accumulating like the weight gradient; `scratch` holds
//                    column_partial_floats(rows, cols) (column_reduce.h)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void broadcast_rows(float* y, const float* bias, int64_t rows, int64_t cols, cudaStream_t stream);
void add_bias_rows(float* y, const float* bias, int64_t rows, int64_t cols, cudaStream_t stream);
void add_column_sums(float* sums, const float* x, int64_t rows, int64_t cols, float* scratch,
                     cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
