#include "gpu/kernels/layer_norm.h"

#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/column_reduce.cuh"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

struct RowStatistics {
  float mean;
  float rstd;
};

// Mean and 1/sqrt(var + eps) of one row, two passes in double like core/nn.
// Every thread of the block calls it and gets the result.
__device__ RowStatistics row_statistics(const float* x, int64_t width) {
  double sum = 0.0;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x) sum += x[c];
  const double mean = block_sum(sum) / static_cast<double>(width);
  double squares = 0.0;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
    const double d = x[c] - mean;
    squares += d * d;
  }
  const double variance = block_sum(squares) / static_cast<double>(width);
  return {static_cast<float>(mean), static_cast<float>(1.0 / sqrt(variance + kLayerNormEpsilon))};
}

__global__ void forward_kernel(const float* x, const float* gain, const float* bias, float* y,
                               float* mean, float* rstd, int64_t width) {
  const int64_t row = blockIdx.x;
  const float* in = x + row * width;
  float* out = y + row * width;
  const RowStatistics stats = row_statistics(in, width);
  if (threadIdx.x == 0 && mean) mean[row] = stats.mean;
  if (threadIdx.x == 0 && rstd) rstd[row] = stats.rstd;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
    out[c] = (in[c] - stats.mean) * stats.rstd * gain[c] + bias[c];
}

__global__ void statistics_kernel(const float* x, float* mean, float* rstd, int64_t width) {
  const int64_t row = blockIdx.x;
  const RowStatistics stats = row_statistics(x + row * width, width);
  if (threadIdx.x == 0) {
    mean[row] = stats.mean;
    rstd[row] = stats.rstd;
  }
}

__global__ void backward_input_kernel(const float* x, const float* dy, const float* gain,
                                      const float* mean, const float* rstd, float* dx,
                                      int64_t width) {
  const int64_t row = blockIdx.x;
  const float* in = x + row * width;
  const float* grad = dy + row * width;
  float* out = dx + row * width;
  const float row_mean = mean[row];
  const float row_rstd = rstd[row];
  double sum_dxhat = 0.0;
  double sum_dxhat_xhat = 0.0;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
    const float xhat = (in[c] - row_mean) * row_rstd;
    const float dxhat = grad[c] * gain[c];
    sum_dxhat += dxhat;
    sum_dxhat_xhat += static_cast<double>(dxhat) * xhat;
  }
  const float mean_dxhat = static_cast<float>(block_sum(sum_dxhat) / static_cast<double>(width));
  const float mean_dxhat_xhat =
      static_cast<float>(block_sum(sum_dxhat_xhat) / static_cast<double>(width));
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x) {
    const float xhat = (in[c] - row_mean) * row_rstd;
    out[c] = row_rstd * (grad[c] * gain[c] - mean_dxhat - xhat * mean_dxhat_xhat);
  }
}

// dy * xhat at (r, c): what dgain sums over the rows.
struct GainGradient {
  const float* x;
  const float* dy;
  const float* mean;
  const float* rstd;
  __device__ float operator()(int64_t r, int64_t c, int64_t cols) const {
    const int64_t i = r * cols + c;
    return dy[i] * (x[i] - mean[r]) * rstd[r];
  }
};

struct Element {
  const float* values;
  __device__ float operator()(int64_t r, int64_t c, int64_t cols) const {
    return values[r * cols + c];
  }
};

// Partials of dgain at gain_partials, of dbias at bias_partials ([chunks, width] each).
__global__ void backward_weight_kernel(const float* x, const float* dy, const float* mean,
                                       const float* rstd, float* gain_partials,
                                       float* bias_partials, int64_t rows, int64_t width) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(kColumnTile) + threadIdx.x;
  const float gain_total = column_tile_sum(GainGradient{x, dy, mean, rstd}, c, rows, width);
  const float bias_total = column_tile_sum(Element{dy}, c, rows, width);
  if (threadIdx.y == 0 && c < width) {
    gain_partials[blockIdx.y * width + c] = gain_total;
    bias_partials[blockIdx.y * width + c] = bias_total;
  }
}

}  // namespace

void layer_norm_forward(const float* x, const float* gain, const float* bias, float* y, float* mean,
                        float* rstd, int64_t rows, int64_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  forward_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(x, gain, bias, y, mean,
                                                                            rstd, width);
  PIPELAB_CHECK_LAUNCH();
}

void layer_norm_statistics(const float* x, float* mean, float* rstd, int64_t rows, int64_t width,
                           cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  statistics_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(x, mean, rstd,
                                                                               width);
  PIPELAB_CHECK_LAUNCH();
}

void layer_norm_backward_input(const float* x, const float* dy, const float* gain,
                               const float* mean, const float* rstd, float* dx, int64_t rows,
                               int64_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  backward_input_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(
      x, dy, gain, mean, rstd, dx, width);
  PIPELAB_CHECK_LAUNCH();
}

void layer_norm_backward_weight(const float* x, const float* dy, const float* mean,
                                const float* rstd, float* dgain, float* dbias, int64_t rows,
                                int64_t width, float* scratch, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  const int64_t chunks = column_chunks(rows, width);
  float* bias_partials = scratch + chunks * width;
  backward_weight_kernel<<<column_grid(rows, width), column_tile_block(), 0, stream>>>(
      x, dy, mean, rstd, scratch, bias_partials, rows, width);
  PIPELAB_CHECK_LAUNCH();
  add_column_partials(scratch, chunks, width, dgain, stream);
  add_column_partials(bias_partials, chunks, width, dbias, stream);
}

}  // namespace pipelab::gpu::kernels
