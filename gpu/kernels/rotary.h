// Rotary position embeddings on the device (rotary_math.h has the rules,
// core/nn/rotary.h the definition): turns q and k of every head of the fused
// QKV rows [rows, (heads + 2 kv_heads) head_dim] in place, row r at position
// r % seq, by the [seq, head_dim / 2] cos and sin tables (direction +1), or
// their gradients back (direction -1).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pipelab::gpu::kernels {

struct RotaryGeometry {
  int64_t rows = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
};

void rotary_turn(float* qkv, const RotaryGeometry& geometry, const float* cos, const float* sin,
                 float direction, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
