// The residual connection of a Transformer block after a row-parallel linear
// (core/nn/gpt_block.cpp's add_residual): y[r][c] += residual[r][c] + bias[c],
// the bias left out when null, in the CPU's order of additions.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void add_residual(float* y, const float* residual, const float* bias, int64_t rows, int64_t cols,
                  cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
