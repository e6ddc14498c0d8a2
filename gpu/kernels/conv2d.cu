#include "gpu/kernels/channel_reduce.cuh"
#include "gpu/kernels/conv2d.h"
#include "gpu/kernels/launch.cuh"

namespace pipelab::gpu::kernels {
namespace {

using image_math::WindowGeometry;

__global__ void im2col_kernel(const float* images, WindowGeometry g, int64_t batch, float* cols) {
  const int64_t per_sample = g.taps() * g.positions();
  const int64_t count = batch * per_sample;
  PIPELAB_GRID_STRIDE_LOOP(i, count)
  cols[i] = image_math::cols_value(images + (i / per_sample) * g.in_size(), g, i % per_sample);
}

__global__ void col2im_kernel(const float* cols, WindowGeometry g, int64_t batch, float* images) {
  const int64_t per_sample = g.in_size();
  const int64_t count = batch * per_sample;
  PIPELAB_GRID_STRIDE_LOOP(i, count)
  images[i] = image_math::col2im_value(cols + (i / per_sample) * g.taps() * g.positions(), g,
                                       i % per_sample);
}

__global__ void broadcast_channels_kernel(float* y, const float* bias, int64_t count,
                                          int64_t channels, int64_t pixels) {
  PIPELAB_GRID_STRIDE_LOOP(i, count)
  y[i] = bias[(i / pixels) % channels];
}

struct Element {
  const float* x;
  __device__ double operator()(int64_t i) const { return x[i]; }
};

__global__ void add_channel_sums_kernel(float* sums, const float* x, int64_t rows, int64_t channels,
                                        int64_t pixels) {
  const int64_t c = blockIdx.x;
  const double total = channel_sum(Element{x}, c, rows, channels, pixels);
  if (threadIdx.x == 0) sums[c] += static_cast<float>(total);
}

}  // namespace

void im2col(const float* images, const WindowGeometry& geometry, int64_t batch, float* cols,
            cudaStream_t stream) {
  const int64_t count = batch * geometry.taps() * geometry.positions();
  if (count == 0) return;
  im2col_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(images, geometry, batch, cols);
  PIPELAB_CHECK_LAUNCH();
}

void col2im(const float* cols, const WindowGeometry& geometry, int64_t batch, float* images,
            cudaStream_t stream) {
  const int64_t count = batch * geometry.in_size();
  if (count == 0) return;
  col2im_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(cols, geometry, batch, images);
  PIPELAB_CHECK_LAUNCH();
}

void broadcast_channels(float* y, const float* bias, int64_t rows, int64_t channels, int64_t pixels,
                        cudaStream_t stream) {
  const int64_t count = rows * channels * pixels;
  if (count == 0) return;
  broadcast_channels_kernel<<<grid_for(count), kBlockThreads, 0, stream>>>(y, bias, count, channels,
                                                                           pixels);
  PIPELAB_CHECK_LAUNCH();
}

void add_channel_sums(float* sums, const float* x, int64_t rows, int64_t channels, int64_t pixels,
                      cudaStream_t stream) {
  if (rows * channels * pixels == 0) return;
  add_channel_sums_kernel<<<static_cast<unsigned>(channels), kBlockThreads, 0, stream>>>(
      sums, x, rows, channels, pixels);
  PIPELAB_CHECK_LAUNCH();
}

}  // namespace pipelab::gpu::kernels
