// The index math of the image layers on samples laid out [channels, height,
// width] (core/nn/conv2d.h, core/nn/pooling.h), written once for the host and
// the device: the im2col, col2im and pooling kernels call it per element, and
// host tests compare it with core/nn's layers. Every index is within one
// sample. The gradients are gathered per input element (no atomics, a fixed
// order): the CPU scatters them, so each gather visits its terms in the order
// the CPU's loops add them, and the sums come out the same.
#pragma once

#include <cstdint>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::image_math {

// A kernel x kernel window moved by stride over an input padded by padding
// zeros (core/model/image_shape.h's Window): in is [channels, in_height,
// in_width], each window gives one of out_height x out_width positions.
struct WindowGeometry {
  int64_t channels = 0;
  int64_t in_height = 0;
  int64_t in_width = 0;
  int64_t out_height = 0;
  int64_t out_width = 0;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t padding = 0;

  PIPELAB_HOST_DEVICE int64_t in_pixels() const { return in_height * in_width; }
  PIPELAB_HOST_DEVICE int64_t positions() const { return out_height * out_width; }
  PIPELAB_HOST_DEVICE int64_t in_size() const { return channels * in_pixels(); }
  // Rows of a convolution's cols matrix: (c, ki, kj) is row (c kernel + ki) kernel + kj.
  PIPELAB_HOST_DEVICE int64_t taps() const { return channels * kernel * kernel; }
};

// The input element that tap (ki, kj) of channel c's window at (oh, ow)
// sees, or -1 when it lies on the padding.
PIPELAB_HOST_DEVICE inline int64_t window_tap(const WindowGeometry& g, int64_t c, int64_t oh,
                                              int64_t ow, int64_t ki, int64_t kj) {
  const int64_t ih = oh * g.stride - g.padding + ki;
  const int64_t iw = ow * g.stride - g.padding + kj;
  if (ih < 0 || ih >= g.in_height || iw < 0 || iw >= g.in_width) return -1;
  return (c * g.in_height + ih) * g.in_width + iw;
}

// Along one axis: the output position whose tap `tap` lands on input `i`, or
// -1 when none does (the reverse of window_tap).
PIPELAB_HOST_DEVICE inline int64_t position_seeing(int64_t i, int64_t tap, int64_t stride,
                                                   int64_t padding, int64_t out_size) {
  const int64_t span = i + padding - tap;
  if (span < 0 || span % stride != 0) return -1;
  const int64_t o = span / stride;
  return o < out_size ? o : -1;
}

// The output position (oh out_width + ow) whose window's tap (ki, kj) lands on
// input element `source`, or -1.
PIPELAB_HOST_DEVICE inline int64_t output_seeing(const WindowGeometry& g, int64_t source,
                                                 int64_t ki, int64_t kj) {
  const int64_t iw = source % g.in_width;
  const int64_t ih = (source / g.in_width) % g.in_height;
  const int64_t oh = position_seeing(ih, ki, g.stride, g.padding, g.out_height);
  const int64_t ow = position_seeing(iw, kj, g.stride, g.padding, g.out_width);
  if (oh < 0 || ow < 0) return -1;
  return oh * g.out_width + ow;
}

// im2col: entry `at` of cols [taps(), positions()] (conv2d.h).
PIPELAB_HOST_DEVICE inline float cols_value(const float* image, const WindowGeometry& g,
                                            int64_t at) {
  const int64_t positions = g.positions();
  const int64_t row = at / positions;
  const int64_t p = at % positions;
  const int64_t kj = row % g.kernel;
  const int64_t ki = (row / g.kernel) % g.kernel;
  const int64_t c = row / (g.kernel * g.kernel);
  const int64_t source = window_tap(g, c, p / g.out_width, p % g.out_width, ki, kj);
  return source >= 0 ? image[source] : 0.0f;
}

// col2im: input element `source`'s sum over the cols entries that saw it,
// taps in the CPU's order (ki, then kj).
PIPELAB_HOST_DEVICE inline float col2im_value(const float* cols, const WindowGeometry& g,
                                              int64_t source) {
  const int64_t c = source / g.in_pixels();
  float sum = 0.0f;
  for (int64_t ki = 0; ki < g.kernel; ++ki)
    for (int64_t kj = 0; kj < g.kernel; ++kj) {
      const int64_t p = output_seeing(g, source, ki, kj);
      if (p >= 0) sum += cols[((c * g.kernel + ki) * g.kernel + kj) * g.positions() + p];
    }
  return sum;
}

// Calls visit(tap) for each input element output o's window covers (taps on
// the padding left out), in the CPU's order: ki, then kj.
template <typename Visit>
PIPELAB_HOST_DEVICE inline void for_each_window_tap(const WindowGeometry& g, int64_t o,
                                                    Visit&& visit) {
  const int64_t c = o / g.positions();
  const int64_t oh = (o % g.positions()) / g.out_width;
  const int64_t ow = o % g.out_width;
  for (int64_t ki = 0; ki < g.kernel; ++ki)
    for (int64_t kj = 0; kj < g.kernel; ++kj) {
      const int64_t tap = window_tap(g, c, oh, ow, ki, kj);
      if (tap >= 0) visit(tap);
    }
}

// Max pool: the input element holding the largest value of output o's
// window (the first of equals; padding never wins). padding < kernel, so
// every window holds an input.
PIPELAB_HOST_DEVICE inline int64_t window_argmax(const float* x, const WindowGeometry& g,
                                                 int64_t o) {
  int64_t best = -1;
  for_each_window_tap(g, o, [&](int64_t tap) {
    if (best < 0 || x[tap] > x[best]) best = tap;
  });
  return best;
}

// Average pool: output o's window sum over kernel^2 (padding counts as zeros).
PIPELAB_HOST_DEVICE inline float window_average(const float* x, const WindowGeometry& g,
                                                int64_t o) {
  float sum = 0.0f;
  for_each_window_tap(g, o, [&](int64_t tap) { sum += x[tap]; });
  return sum * (1.0f / static_cast<float>(g.kernel * g.kernel));
}

// A pool's input gradient at `source`: the sum over the outputs whose window
// covers it of dy times what that output took from it (max: all of it when
// argmax names `source`; average: 1 / kernel^2), outputs in ascending order as
// the CPU adds them (taps descending: a lower tap is a later output).
PIPELAB_HOST_DEVICE inline float pool_input_gradient(const float* dy, const int32_t* argmax,
                                                     const WindowGeometry& g, int64_t source) {
  const int64_t c = source / g.in_pixels();
  const float scale = 1.0f / static_cast<float>(g.kernel * g.kernel);
  float sum = 0.0f;
  for (int64_t ki = g.kernel - 1; ki >= 0; --ki)
    for (int64_t kj = g.kernel - 1; kj >= 0; --kj) {
      const int64_t p = output_seeing(g, source, ki, kj);
      if (p < 0) continue;
      const int64_t o = c * g.positions() + p;
      if (!argmax)
        sum += dy[o] * scale;
      else if (argmax[o] == source)
        sum += dy[o];
    }
  return sum;
}

}  // namespace pipelab::gpu::image_math
