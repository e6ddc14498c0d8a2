#include "gpu/kernels/launch.cuh"
#include "gpu/kernels/rotary.h"
#include "gpu/kernels/rotary_math.h"

namespace pipelab::gpu::kernels {
namespace {

// One thread per turned pair: (row, slot, c), slot a query or key head.
__global__ void turn_kernel(float* qkv, RotaryGeometry g, const float* cos, const float* sin,
                            float direction) {
  const int64_t half = g.head_dim / 2;
  const int64_t slots = g.heads + g.kv_heads;
  const int64_t group = g.heads / g.kv_heads;
  const int64_t width = (g.heads + 2 * g.kv_heads) * g.head_dim;
  PIPELAB_GRID_STRIDE_LOOP(i, g.rows * slots * half) {
    const int64_t c = i % half;
    const int64_t slot = (i / half) % slots;
    const int64_t r = i / (half * slots);
    const int64_t angle = (r % g.seq) * half + c;
    float* head = qkv + r * width + rotary_math::turned_column(slot, g.heads, group, g.head_dim);
    rotary_math::turn_pair(head[c], head[c + half], cos[angle], sin[angle], direction);
  }
}

}  // namespace

void rotary_turn(float* qkv, const RotaryGeometry& geometry, const float* cos, const float* sin,
                 float direction, cudaStream_t stream) {
  const int64_t count =
      geometry.rows * (geometry.heads + geometry.kv_heads) * (geometry.head_dim / 2);
  if (count == 0) return;
  turn_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(qkv, geometry, cos, sin, direction);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
