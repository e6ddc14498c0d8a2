// SwiGLU kernels (swiglu_math.h has the formulas; core/nn/swiglu.h the
// definition) on row-major tensors: x [rows, 2 half] as [gate | up], y and dy
// [rows, half], dx [rows, 2 half] (overwritten).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void swiglu_forward(const float* x, float* y, int64_t rows, int64_t half, cudaStream_t stream);
void swiglu_backward(const float* x, const float* dy, float* dx, int64_t rows, int64_t half,
                     cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
