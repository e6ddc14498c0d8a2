// SwiGLU's per-element formulas (core/nn/swiglu.h has the definition), for the
// host and the device, in the CPU's order of operations. g is a gate column,
// u the matching up column, dy the output's gradient:
//   y  = silu(g) u = g / (1 + exp(-g)) u
//   dg = dy u s (1 + g (1 - s)),  du = dy g s,  s = sigmoid(g)
#pragma once

#include <math.h>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::swiglu_math {

PIPELAB_HOST_DEVICE inline float value(float g, float u) { return g / (1.0f + expf(-g)) * u; }

PIPELAB_HOST_DEVICE inline float gate_gradient(float g, float u, float dy) {
  const float s = 1.0f / (1.0f + expf(-g));
  return dy * u * s * (1.0f + g * (1.0f - s));
}

PIPELAB_HOST_DEVICE inline float up_gradient(float g, float dy) {
  const float s = 1.0f / (1.0f + expf(-g));
  return dy * g * s;
}

}  // namespace pipelab::gpu::swiglu_math
