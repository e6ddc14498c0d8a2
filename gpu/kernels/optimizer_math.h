// The per-element updates of core/nn/optimizer.h (PyTorch's SGD, Adam, AdamW),
// written once for the host and the device. Every multiply and add is rounded
// separately (mul_rn / add_rn), as the CPU code computes them, so the GPU
// kernels cannot fuse them into FMAs and the updates match the CPU's bit for
// bit (sqrtf and division are IEEE-exact on both).
#pragma once

#include <math.h>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::optimizer_math {

PIPELAB_HOST_DEVICE inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

PIPELAB_HOST_DEVICE inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

PIPELAB_HOST_DEVICE inline float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

PIPELAB_HOST_DEVICE inline float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

PIPELAB_HOST_DEVICE inline float sqrt_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return sqrtf(a);
#endif
}

// SGD without momentum: p -= lr (g + wd p).
PIPELAB_HOST_DEVICE inline void sgd_update(float& p, float g, float lr, float weight_decay) {
  p = sub_rn(p, mul_rn(lr, add_rn(g, mul_rn(weight_decay, p))));
}

// SGD with momentum: v = momentum v + (g + wd p); p -= lr v.
PIPELAB_HOST_DEVICE inline void sgd_momentum_update(float& p, float& v, float g, float lr,
                                                    float momentum, float weight_decay) {
  v = add_rn(mul_rn(momentum, v), add_rn(g, mul_rn(weight_decay, p)));
  p = sub_rn(p, mul_rn(lr, v));
}

// Adam's per-step scalars, computed on the host in double as PyTorch does.
struct AdamScalars {
  float step_size = 0;         // lr / (1 - beta1^t)
  float correction2_sqrt = 1;  // sqrt(1 - beta2^t)
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float coupled_decay = 0;  // adam: weight_decay; adamw: 0
  float decay_factor = 1;   // adamw: 1 - lr weight_decay; adam: 1
};

// g' = g + coupled_decay p; p *= decay_factor; m = b1 m + (1 - b1) g';
// v = b2 v + (1 - b2) g'^2; p -= step_size m / (sqrt(v) / correction2_sqrt + eps)
PIPELAB_HOST_DEVICE inline void adam_update(float& p, float& m, float& v, float g,
                                            const AdamScalars& s) {
  const float grad = add_rn(g, mul_rn(s.coupled_decay, p));
  p = mul_rn(p, s.decay_factor);
  m = add_rn(mul_rn(s.beta1, m), mul_rn(sub_rn(1.0f, s.beta1), grad));
  v = add_rn(mul_rn(s.beta2, v), mul_rn(mul_rn(sub_rn(1.0f, s.beta2), grad), grad));
  const float denom = add_rn(div_rn(sqrt_rn(v), s.correction2_sqrt), s.eps);
  p = sub_rn(p, div_rn(mul_rn(s.step_size, m), denom));
}

}  // namespace pipelab::gpu::optimizer_math
