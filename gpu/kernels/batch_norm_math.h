// Batch normalisation's per-channel formulas (core/nn/batch_norm.h has the
// definition), written once for the host and the device: the kernels call
// them, and host tests compare them with core/nn's BatchNormLayer. Per-channel
// sums are accumulated in double by the caller and the statistics kept in
// double, as the CPU does:
//   mean = sum / M,  inv_std = 1 / sqrt(max(0, sum(x^2) / M - mean^2) + eps)
//   y    = x scale + shift,  scale = inv_std gamma,  shift = beta - mean scale
//   dx   = gamma inv_std (dy - sum(dy) / M - xhat sum(dy xhat) / M)
//   running = (1 - momentum) running + momentum stat (the variance unbiased)
#pragma once

#include <math.h>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::batch_norm_math {

struct ChannelStatistics {
  double mean = 0;
  double inv_std = 1;
};

// From a channel's sum and sum of squares over `count` values.
PIPELAB_HOST_DEVICE inline ChannelStatistics batch_statistics(double sum, double sum_squares,
                                                              double count, double eps) {
  const double mean = sum / count;
  const double variance = fmax(0.0, sum_squares / count - mean * mean);
  return {mean, 1.0 / sqrt(variance + eps)};
}

// Evaluation's statistics: the running ones.
PIPELAB_HOST_DEVICE inline ChannelStatistics running_statistics(float running_mean,
                                                                float running_var, double eps) {
  return {running_mean, 1.0 / sqrt(static_cast<double>(running_var) + eps)};
}

PIPELAB_HOST_DEVICE inline float normalise(float x, ChannelStatistics s, float gamma, float beta) {
  const double scale = s.inv_std * gamma;
  const double shift = beta - s.mean * scale;
  return static_cast<float>(x * scale + shift);
}

// One value's term of sum(dy xhat).
PIPELAB_HOST_DEVICE inline double gradient_xhat_term(float x, float dy, ChannelStatistics s) {
  return dy * (x - s.mean) * s.inv_std;
}

PIPELAB_HOST_DEVICE inline float input_gradient(float x, float dy, ChannelStatistics s, float gamma,
                                                double mean_dy, double mean_dy_xhat) {
  const double xhat = (x - s.mean) * s.inv_std;
  const double scale = gamma * s.inv_std;
  return static_cast<float>(scale * (dy - mean_dy - xhat * mean_dy_xhat));
}

// Moves the running statistics towards a batch's (of `count` values per channel).
PIPELAB_HOST_DEVICE inline void fold_into_running(float& running_mean, float& running_var,
                                                  ChannelStatistics s, double count,
                                                  double momentum, double eps) {
  const double unbiased = count > 1 ? count / (count - 1) : 1.0;
  const double variance = 1.0 / (s.inv_std * s.inv_std) - eps;
  running_mean = static_cast<float>((1 - momentum) * running_mean + momentum * s.mean);
  running_var = static_cast<float>((1 - momentum) * running_var + momentum * variance * unbiased);
}

}  // namespace pipelab::gpu::batch_norm_math
