#include "gpu/kernels/rms_norm.h"

#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/column_reduce.cuh"
#include "gpu/kernels/launch.cuh"
#include "gpu/kernels/rms_norm_math.h"

namespace pipelab::gpu::kernels {
namespace {

// 1 / rms of one row; every thread of the block gets it.
__device__ float row_inverse_rms(const float* x, int64_t width) {
  double squares = 0.0;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
    squares += static_cast<double>(x[c]) * x[c];
  return rms_norm_math::inverse_rms(block_sum(squares), width);
}

__global__ void forward_kernel(const float* x, const float* gain, float* y, int64_t width) {
  const int64_t row = blockIdx.x;
  const float* in = x + row * width;
  float* out = y + row * width;
  const float r = row_inverse_rms(in, width);
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
    out[c] = rms_norm_math::value(in[c], r, gain[c]);
}

__global__ void inverse_rms_kernel(const float* x, float* rstd, int64_t width) {
  const int64_t row = blockIdx.x;
  const float r = row_inverse_rms(x + row * width, width);
  if (threadIdx.x == 0) rstd[row] = r;
}

__global__ void backward_input_kernel(const float* x, const float* dy, const float* gain, float* dx,
                                      int64_t width) {
  const int64_t row = blockIdx.x;
  const float* in = x + row * width;
  const float* grad = dy + row * width;
  float* out = dx + row * width;
  const float r = row_inverse_rms(in, width);
  double dot = 0.0;
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
    dot += rms_norm_math::gradient_dot_term(in[c], grad[c], gain[c], r);
  const float mean_dot = static_cast<float>(block_sum(dot) / static_cast<double>(width));
  for (int64_t c = threadIdx.x; c < width; c += blockDim.x)
    out[c] = rms_norm_math::input_gradient(in[c], grad[c], gain[c], r, mean_dot);
}

// dy x r at (r, c): what dgain sums over the rows.
struct GainGradient {
  const float* x;
  const float* dy;
  const float* rstd;
  __device__ float operator()(int64_t r, int64_t c, int64_t cols) const {
    const int64_t i = r * cols + c;
    return rms_norm_math::gain_gradient(x[i], dy[i], rstd[r]);
  }
};

__global__ void backward_weight_kernel(const float* x, const float* dy, const float* rstd,
                                       float* partials, int64_t rows, int64_t width) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(kColumnTile) + threadIdx.x;
  const float total = column_tile_sum(GainGradient{x, dy, rstd}, c, rows, width);
  if (threadIdx.y == 0 && c < width) partials[blockIdx.y * width + c] = total;
}

}  // namespace

void rms_norm_forward(const float* x, const float* gain, float* y, int64_t rows, int64_t width,
                      cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  forward_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(x, gain, y, width);
  PIPELAB_CHECK_LAUNCH();
}

void rms_norm_backward_input(const float* x, const float* dy, const float* gain, float* dx,
                             int64_t rows, int64_t width, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  backward_input_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(x, dy, gain, dx,
                                                                                   width);
  PIPELAB_CHECK_LAUNCH();
}

void rms_norm_backward_weight(const float* x, const float* dy, float* rstd, float* dgain,
                              int64_t rows, int64_t width, float* scratch, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  inverse_rms_kernel<<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(x, rstd, width);
  PIPELAB_CHECK_LAUNCH();
  backward_weight_kernel<<<column_grid(rows, width), column_tile_block(), 0, stream>>>(
      x, dy, rstd, scratch, rows, width);
  PIPELAB_CHECK_LAUNCH();
  add_column_partials(scratch, column_chunks(rows, width), width, dgain, stream);
}

}  // namespace pipelab::gpu::kernels
