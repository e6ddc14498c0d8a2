// Elementwise kernels on float arrays: fill, add (the sum step of a reduction
// between virtual devices on one GPU), add scaled, scale. Each launches on `stream`, which
// must belong to the current device, and returns without waiting.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

void fill(float* data, int64_t count, float value, cudaStream_t stream);
// target[i] += source[i]
void add_into(float* target, const float* source, int64_t count, cudaStream_t stream);
// target[i] += factor * source[i]
void add_scaled_into(float* target, const float* source, float factor, int64_t count, cudaStream_t stream);
// data[i] *= factor
void scale(float* data, int64_t count, float factor, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
