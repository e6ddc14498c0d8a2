// Column sums over the rows of a row-major [rows, cols] matrix, for the bias
// and norm-parameter gradients, in two passes that give the same bits from
// run to run (no atomics): blocks of 32 columns by a chunk of rows each write
// one partial sum per column (column_reduce.cuh), then add_column_partials
// adds each column's partials in chunk order. The chunks give a narrow matrix
// (GPT-2's 768 columns: 24 column tiles) blocks enough to fill the GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

// Row chunks for a [rows, cols] matrix: about 512 blocks in all, at least 128 rows each.
int64_t column_chunks(int64_t rows, int64_t cols);
// Floats of scratch (Workspace, from the caller) one column sum of [rows, cols] needs.
inline int64_t column_partial_floats(int64_t rows, int64_t cols) {
  return column_chunks(rows, cols) * cols;
}
// sums[c] += the sum over k < chunks of partials[k cols + c], in k's order.
void add_column_partials(const float* partials, int64_t chunks, int64_t cols, float* sums,
                         cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
