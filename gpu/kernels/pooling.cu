#include "gpu/kernels/block_reduce.cuh"
#include "gpu/kernels/launch.cuh"
#include "gpu/kernels/pooling.h"

namespace pipelab::gpu::kernels {
namespace {

using image_math::WindowGeometry;

__global__ void max_pool_forward_kernel(const float* x, WindowGeometry g, int64_t batch, float* y,
                                        int32_t* argmax) {
  const int64_t per_sample = g.channels * g.positions();
  PIPELAB_GRID_STRIDE_LOOP(i, batch * per_sample) {
    const float* sample = x + (i / per_sample) * g.in_size();
    const int64_t best = image_math::window_argmax(sample, g, i % per_sample);
    argmax[i] = static_cast<int32_t>(best);
    y[i] = sample[best];
  }
}

__global__ void avg_pool_forward_kernel(const float* x, WindowGeometry g, int64_t batch, float* y) {
  const int64_t per_sample = g.channels * g.positions();
  PIPELAB_GRID_STRIDE_LOOP(i, batch * per_sample) {
    y[i] = image_math::window_average(x + (i / per_sample) * g.in_size(), g, i % per_sample);
  }
}

__global__ void pool_backward_kernel(const float* dy, const int32_t* argmax, WindowGeometry g,
                                     int64_t batch, float* dx) {
  const int64_t per_sample = g.in_size();
  const int64_t outputs = g.channels * g.positions();
  PIPELAB_GRID_STRIDE_LOOP(i, batch * per_sample) {
    const int64_t n = i / per_sample;
    dx[i] = image_math::pool_input_gradient(
        dy + n * outputs, argmax ? argmax + n * outputs : nullptr, g, i % per_sample);
  }
}

// One block per (sample, channel): a row of `pixels` values.
__global__ void global_avg_pool_forward_kernel(const float* x, int64_t pixels, float* y) {
  const int64_t row = blockIdx.x;
  double sum = 0.0;
  for (int64_t p = threadIdx.x; p < pixels; p += blockDim.x) sum += x[row * pixels + p];
  sum = block_sum(sum);
  if (threadIdx.x == 0) y[row] = static_cast<float>(sum / static_cast<double>(pixels));
}

__global__ void global_avg_pool_backward_kernel(const float* dy, int64_t count, int64_t pixels,
                                                float* dx) {
  PIPELAB_GRID_STRIDE_LOOP(i, count) { dx[i] = dy[i / pixels] / static_cast<float>(pixels); }
}

}  // namespace

void max_pool_forward(const float* x, const WindowGeometry& geometry, int64_t batch, float* y,
                      int32_t* argmax, cudaStream_t stream) {
  const int64_t count = batch * geometry.channels * geometry.positions();
  if (count == 0) return;
  max_pool_forward_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(x, geometry, batch, y,
                                                                         argmax);
  PIPELAB_CHECK_LAUNCH();
}

void avg_pool_forward(const float* x, const WindowGeometry& geometry, int64_t batch, float* y,
                      cudaStream_t stream) {
  const int64_t count = batch * geometry.channels * geometry.positions();
  if (count == 0) return;
  avg_pool_forward_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(x, geometry, batch, y);
  PIPELAB_CHECK_LAUNCH();
}

void pool_backward(const float* dy, const int32_t* argmax, const WindowGeometry& geometry,
                   int64_t batch, float* dx, cudaStream_t stream) {
  const int64_t count = batch * geometry.in_size();
  if (count == 0) return;
  pool_backward_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(dy, argmax, geometry, batch,
                                                                      dx);
  PIPELAB_CHECK_LAUNCH();
}

void global_avg_pool_forward(const float* x, int64_t rows, int64_t channels, int64_t pixels,
                             float* y, cudaStream_t stream) {
  if (rows * channels == 0) return;
  global_avg_pool_forward_kernel<<<static_cast<unsigned>(rows * channels), kBlockThreads, 0,
                                   stream>>>(x, pixels, y);
  PIPELAB_CHECK_LAUNCH();
}

void global_avg_pool_backward(const float* dy, int64_t rows, int64_t channels, int64_t pixels,
                              float* dx, cudaStream_t stream) {
  const int64_t count = rows * channels * pixels;
  if (count == 0) return;
  global_avg_pool_backward_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(dy, count, pixels,
                                                                                 dx);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
