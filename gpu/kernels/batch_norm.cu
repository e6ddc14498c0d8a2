#include "gpu/kernels/batch_norm.h"
#include "gpu/kernels/channel_reduce.cuh"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

namespace math = batch_norm_math;

struct Value {
  const float* x;
  __device__ double operator()(int64_t i) const { return x[i]; }
};

struct Square {
  const float* x;
  __device__ double operator()(int64_t i) const { return static_cast<double>(x[i]) * x[i]; }
};

// dy xhat of element i; the channel's statistics are the block's.
struct GradientXhat {
  const float* x;
  const float* dy;
  ChannelStatistics s;
  __device__ double operator()(int64_t i) const { return math::gradient_xhat_term(x[i], dy[i], s); }
};

// One block per channel.
__global__ void sums_kernel(const float* x, ChannelLayout l, double* sums) {
  const int64_t c = blockIdx.x;
  const double sum = channel_sum(Value{x}, c, l.rows, l.channels, l.pixels);
  const double squares = channel_sum(Square{x}, c, l.rows, l.channels, l.pixels);
  if (threadIdx.x == 0) {
    sums[c] = sum;
    sums[l.channels + c] = squares;
  }
}

__global__ void statistics_kernel(const double* sums, double count, double eps, int64_t channels,
                                  ChannelStatistics* statistics) {
  PIPELAB_GRID_STRIDE_LOOP(c, channels) {
    statistics[c] = math::batch_statistics(sums[c], sums[channels + c], count, eps);
  }
}

__global__ void running_statistics_kernel(const float* running_mean, const float* running_var,
                                          double eps, int64_t channels,
                                          ChannelStatistics* statistics) {
  PIPELAB_GRID_STRIDE_LOOP(c, channels) {
    statistics[c] = math::running_statistics(running_mean[c], running_var[c], eps);
  }
}

__global__ void fold_running_kernel(const ChannelStatistics* statistics, double count,
                                    double momentum, double eps, int64_t channels,
                                    float* running_mean, float* running_var) {
  PIPELAB_GRID_STRIDE_LOOP(c, channels) {
    math::fold_into_running(running_mean[c], running_var[c], statistics[c], count, momentum, eps);
  }
}

__global__ void forward_kernel(const float* x, const ChannelStatistics* statistics,
                               const float* gamma, const float* beta, ChannelLayout l, float* y) {
  PIPELAB_GRID_STRIDE_LOOP(i, l.rows * l.channels * l.pixels) {
    const int64_t c = (i / l.pixels) % l.channels;
    y[i] = math::normalise(x[i], statistics[c], gamma[c], beta[c]);
  }
}

// One block per channel.
__global__ void gradient_sums_kernel(const float* x, const float* dy,
                                     const ChannelStatistics* statistics, ChannelLayout l,
                                     double* sums) {
  const int64_t c = blockIdx.x;
  const double sum_dy = channel_sum(Value{dy}, c, l.rows, l.channels, l.pixels);
  const double sum_dy_xhat =
      channel_sum(GradientXhat{x, dy, statistics[c]}, c, l.rows, l.channels, l.pixels);
  if (threadIdx.x == 0) {
    sums[c] = sum_dy;
    sums[l.channels + c] = sum_dy_xhat;
  }
}

__global__ void backward_input_kernel(const float* x, const float* dy,
                                      const ChannelStatistics* statistics, const float* gamma,
                                      const double* sums, double count, ChannelLayout l,
                                      float* dx) {
  PIPELAB_GRID_STRIDE_LOOP(i, l.rows * l.channels * l.pixels) {
    const int64_t c = (i / l.pixels) % l.channels;
    dx[i] = math::input_gradient(x[i], dy[i], statistics[c], gamma[c], sums[c] / count,
                                 sums[l.channels + c] / count);
  }
}

__global__ void add_weight_gradients_kernel(const double* sums, int64_t channels, float* gamma_grad,
                                            float* beta_grad) {
  PIPELAB_GRID_STRIDE_LOOP(c, channels) {
    gamma_grad[c] += static_cast<float>(sums[channels + c]);
    beta_grad[c] += static_cast<float>(sums[c]);
  }
}

}  // namespace

void batch_norm_sums(const float* x, const ChannelLayout& layout, double* sums,
                     cudaStream_t stream) {
  if (layout.channels == 0) return;
  sums_kernel<<<static_cast<unsigned>(layout.channels), kBlockThreads, 0, stream>>>(x, layout,
                                                                                    sums);
  PIPELAB_CHECK_LAUNCH();
}

void batch_norm_statistics(const double* sums, double count, double eps, int64_t channels,
                           ChannelStatistics* statistics, cudaStream_t stream) {
  if (channels == 0) return;
  statistics_kernel<<<grid_for(channels), kBlockThreads, 0, stream>>>(sums, count, eps, channels,
                                                                      statistics);
  PIPELAB_CHECK_LAUNCH();
}

void batch_norm_running_statistics(const float* running_mean, const float* running_var, double eps,
                                   int64_t channels, ChannelStatistics* statistics,
                                   cudaStream_t stream) {
  if (channels == 0) return;
  running_statistics_kernel<<<grid_for(channels), kBlockThreads, 0, stream>>>(
      running_mean, running_var, eps, channels, statistics);
  PIPELAB_CHECK_LAUNCH();
}

void batch_norm_fold_running(const ChannelStatistics* statistics, double count, double momentum,
                             double eps, int64_t channels, float* running_mean, float* running_var,
                             cudaStream_t stream) {
  if (channels == 0) return;
  fold_running_kernel<<<grid_for(channels), kBlockThreads, 0, stream>>>(
      statistics, count, momentum, eps, channels, running_mean, running_var);
  PIPELAB_CHECK_LAUNCH();
}

void batch_norm_forward(const float* x, const ChannelStatistics* statistics, const float* gamma,
                        const float* beta, const ChannelLayout& layout, float* y,
                        cudaStream_t stream) {
  const int64_t count = layout.rows * layout.channels * layout.pixels;
  if (count == 0) return;
  forward_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(x, statistics, gamma, beta, layout,
                                                                y);
  PIPELAB_CHECK_LAUNCH();
}

void batch_norm_gradient_sums(const float* x, const float* dy, const ChannelStatistics* statistics,
                              const ChannelLayout& layout, double* sums, cudaStream_t stream) {
  if (layout.channels == 0) return;
  gradient_sums_kernel<<<static_cast<unsigned>(layout.channels), kBlockThreads, 0, stream>>>(
      x, dy, statistics, layout, sums);
  PIPELAB_CHECK_LAUNCH();
}

void batch_norm_backward_input(const float* x, const float* dy, const ChannelStatistics* statistics,
                               const float* gamma, const double* sums, double count,
                               const ChannelLayout& layout, float* dx, cudaStream_t stream) {
  const int64_t elements = layout.rows * layout.channels * layout.pixels;
  if (elements == 0) return;
  backward_input_kernel<<<grid_for(elements), kBlockThreads, 0, stream>>>(x, dy, statistics, gamma,
                                                                          sums, count, layout, dx);
  PIPELAB_CHECK_LAUNCH();
}

void batch_norm_add_weight_gradients(const double* sums, int64_t channels, float* gamma_grad,
                                     float* beta_grad, cudaStream_t stream) {
  if (channels == 0) return;
  add_weight_gradients_kernel<<<grid_for(channels), kBlockThreads, 0, stream>>>(
      sums, channels, gamma_grad, beta_grad);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
