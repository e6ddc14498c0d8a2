// Batch normalisation kernels over a batch of images [rows][channels][pixels]
// (batch_norm_math.h has the formulas; core/nn/batch_norm.h the definition).
// Per-channel sums are [2 channels] doubles in the CPU's all-reduce layout
// (first half then second half), so a synced layer all-reduces them as they are.
//   batch_norm_sums            sums = (sum x, sum x^2) per channel
//   batch_norm_statistics      statistics = mean, 1/std from the sums of `count` values
//   batch_norm_running_statistics  statistics from the running ones (evaluation)
//   batch_norm_fold_running    running statistics moved towards the batch's
//   batch_norm_forward         y = x scale + shift per channel
//   batch_norm_gradient_sums   sums = (sum dy, sum dy xhat) per channel
//   batch_norm_backward_input  dx from those sums (over `count` values)
//   batch_norm_add_weight_gradients  dgamma += sum dy xhat, dbeta += sum dy
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/kernels/batch_norm_math.h"

namespace pipelab::gpu::kernels {

using batch_norm_math::ChannelStatistics;

// The shape of a batch of images: rows samples of channels x pixels values.
struct ChannelLayout {
  int64_t rows = 0;
  int64_t channels = 0;
  int64_t pixels = 0;
};

void batch_norm_sums(const float* x, const ChannelLayout& layout, double* sums,
                     cudaStream_t stream);
void batch_norm_statistics(const double* sums, double count, double eps, int64_t channels,
                           ChannelStatistics* statistics, cudaStream_t stream);
void batch_norm_running_statistics(const float* running_mean, const float* running_var, double eps,
                                   int64_t channels, ChannelStatistics* statistics,
                                   cudaStream_t stream);
void batch_norm_fold_running(const ChannelStatistics* statistics, double count, double momentum,
                             double eps, int64_t channels, float* running_mean, float* running_var,
                             cudaStream_t stream);
void batch_norm_forward(const float* x, const ChannelStatistics* statistics, const float* gamma,
                        const float* beta, const ChannelLayout& layout, float* y,
                        cudaStream_t stream);
void batch_norm_gradient_sums(const float* x, const float* dy, const ChannelStatistics* statistics,
                              const ChannelLayout& layout, double* sums, cudaStream_t stream);
void batch_norm_backward_input(const float* x, const float* dy, const ChannelStatistics* statistics,
                               const float* gamma, const double* sums, double count,
                               const ChannelLayout& layout, float* dx, cudaStream_t stream);
void batch_norm_add_weight_gradients(const double* sums, int64_t channels, float* gamma_grad,
                                     float* beta_grad, cudaStream_t stream);

}  // namespace pipelab::gpu::kernels
