// Optimizer kernels over one parameter tensor of n floats (optimizer_math.h
// has the updates). `velocity` is null for SGD without momentum.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/optimizer_math.h"

namespace pipelab::gpu::kernels {

void sgd_step(float* param, const float* grad, float* velocity, int64_t count, float lr,
              float momentum, float weight_decay, cudaStream_t stream);
void adam_step(float* param, const float* grad, float* first_moment, float* second_moment,
               int64_t count, const optimizer_math::AdamScalars& scalars, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
