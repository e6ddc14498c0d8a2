// Activation kernels over n floats (activation_math.h has the formulas):
//   activation_forward   y = f(x)
//   activation_backward  dx = dy * f'(x)   (from the forward input, as core/nn)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/activation_math.h"

namespace pipelab::gpu::kernels {

void activation_forward(Activation kind, const float* x, float* y, int64_t count,
                        cudaStream_t stream);
void activation_backward(Activation kind, const float* x, const float* dy, float* dx, int64_t count,
                         cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
