// ImageShape: a sample laid out as [channels, height, width] (row-major, one
// sample per tensor row), and the window arithmetic the convolution and
// pooling layers share. A model whose model.input has three dimensions starts
// as an image; convolutions and pooling keep it one; flatten, a global average
// pool or a linear layer turn it into a flat vector of features.
#pragma once

#include <cstdint>

namespace pipelab {

struct ImageShape {
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;

  bool valid() const { return channels > 0 && height > 0 && width > 0; }
  int64_t pixels() const { return height * width; }
  int64_t size() const { return channels * height * width; }
  bool operator==(const ImageShape&) const = default;
};

// A sliding window of `kernel` x `kernel` taps, moved by `stride`, over an
// input padded by `padding` zeros on every side.
struct Window {
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t padding = 0;
  bool operator==(const Window&) const = default;
};

// Output positions along one axis: floor((in + 2 padding - kernel) / stride) + 1,
// or 0 or less when the window does not fit the padded input.
inline int64_t window_output_size(int64_t in, const Window& window) {
  const int64_t span = in + 2 * window.padding - window.kernel;
  if (span < 0) return 0;
  return span / window.stride + 1;
}

inline ImageShape window_output(const ImageShape& in, const Window& window, int64_t out_channels) {
  return {out_channels, window_output_size(in.height, window), window_output_size(in.width, window)};
}

}  // namespace pipelab
