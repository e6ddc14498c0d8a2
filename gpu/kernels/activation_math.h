// The activation formulas of core/nn/activations.h, written once for the host
// and the device (the kernels call them per element; host tests compare them
// with the CPU layers). Same operations in the same order as the CPU code:
//   relu     y = max(x, 0);                        dy/dx = 1 if x > 0 else 0
//   gelu     y = 0.5 x (1 + tanh(k (x + 0.044715 x^3))),  k = sqrt(2 / pi),
//            with core/nn/fast_math.h's rational tanh, as the CPU computes it
//   tanh     y = tanh(x);                          dy/dx = 1 - y^2
//   sigmoid  y = 1 / (1 + exp(-x));                dy/dx = y (1 - y)
// (On the GPU, tanhf and expf may differ from glibc's in the last bits, and the
// compiler may fuse a multiply-add: the GPU tests allow for that.)
#pragma once

#include <math.h>

#include "core/nn/fast_math.h"
#include "gpu/device/host_device.h"

namespace pipelab::gpu {

enum class Activation { Relu, Gelu, Tanh, Sigmoid };

namespace activation_math {

inline constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)
inline constexpr float kGeluCubic = 0.044715f;

PIPELAB_HOST_DEVICE inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

PIPELAB_HOST_DEVICE inline float value(Activation kind, float x) {
  switch (kind) {
    case Activation::Relu:
      return x > 0.0f ? x : 0.0f;
    case Activation::Gelu: {
      const float t = fast_tanh(kGeluScale * (x + kGeluCubic * x * x * x));
      return 0.5f * x * (1.0f + t);
    }
    case Activation::Tanh:
      return tanhf(x);
    case Activation::Sigmoid:
      return sigmoid(x);
  }
  return 0.0f;
}

// dy/dx at x.
PIPELAB_HOST_DEVICE inline float derivative(Activation kind, float x) {
  switch (kind) {
    case Activation::Relu:
      return x > 0.0f ? 1.0f : 0.0f;
    case Activation::Gelu: {
      const float t = fast_tanh(kGeluScale * (x + kGeluCubic * x * x * x));
      const float inner_derivative = kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x);
      return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * inner_derivative;
    }
    case Activation::Tanh: {
      const float t = tanhf(x);
      return 1.0f - t * t;
    }
    case Activation::Sigmoid: {
      const float s = sigmoid(x);
      return s * (1.0f - s);
    }
  }
  return 0.0f;
}

}  // namespace activation_math
}  // namespace pipelab::gpu
