// RMSNorm's per-row and per-element formulas (core/nn/rms_norm.h has the
// definition), written once for the host and the device: the kernels call
// them, and host tests compare them with core/nn's RMSNorm. Row sums are
// accumulated in double by the caller, as the CPU does:
//   r      = 1 / sqrt(sum(x^2) / width + eps)
//   y      = x r gain
//   dx     = r (dy gain - x r mean(dy gain x r))
//   dgain += dy x r
#pragma once

#include <math.h>

#include <cstdint>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::rms_norm_math {

inline constexpr double kEpsilon = 1e-5;  // as core/nn's kRmsNormEpsilon

PIPELAB_HOST_DEVICE inline float inverse_rms(double sum_squares, int64_t width) {
  return static_cast<float>(1.0 / sqrt(sum_squares / static_cast<double>(width) + kEpsilon));
}

PIPELAB_HOST_DEVICE inline float value(float x, float r, float gain) { return x * r * gain; }

// One column's term of the row sum that mean(dy gain x r) divides.
PIPELAB_HOST_DEVICE inline double gradient_dot_term(float x, float dy, float gain, float r) {
  return static_cast<double>(dy * gain) * (x * r);
}

PIPELAB_HOST_DEVICE inline float input_gradient(float x, float dy, float gain, float r,
                                                float mean_dxhat_xhat) {
  return r * (dy * gain - x * r * mean_dxhat_xhat);
}

PIPELAB_HOST_DEVICE inline float gain_gradient(float x, float dy, float r) { return dy * x * r; }

}  // namespace pipelab::gpu::rms_norm_math
