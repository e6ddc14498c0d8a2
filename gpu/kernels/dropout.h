// Dropout's mask applied to a row-major [rows, cols] micro-batch (core/nn/
// dropout.h has the definition): element (r, c) is kept iff
//   dropout_row_keeps(dropout_row_key(layer_key, step, first_sample + r),
//                     feature_offset + c, p)
// and then scaled by `scale` (1 / (1 - p), computed by the caller as the CPU
// does); dropped elements become 0. The masks are bit-identical to the CPU's.
// Forward applies it to x, backward to dy (the same linear map).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

struct DropoutMask {
  uint64_t layer_key = 0;  // device_layer_key(seed, RandomStream::Dropout, layer)
  int step = 0;
  int64_t first_sample = 0;
  int64_t feature_offset = 0;
  float p = 0.0f;
  float scale = 1.0f;
};

void dropout_apply(const float* in, float* out, int64_t rows, int64_t cols, const DropoutMask& mask,
                   cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
