#include "core/nn/pooling.h"

#include <cassert>
#include <vector>

namespace pipelab {
namespace {

// Calls visit(output index, taps) for each output of a window over one
// sample: `taps` lists the input indices (within the sample) the window covers
// inside the image; taps on the padding are left out.
template <typename Visit>
void for_each_window(const ImageShape& in, const ImageShape& out, const Window& w, Visit&& visit) {
  std::vector<int64_t> taps;
  taps.reserve(static_cast<size_t>(w.kernel * w.kernel));
  for (int64_t c = 0; c < in.channels; ++c) {
    for (int64_t oh = 0; oh < out.height; ++oh) {
      for (int64_t ow = 0; ow < out.width; ++ow) {
        taps.clear();
        for (int64_t ki = 0; ki < w.kernel; ++ki) {
          const int64_t ih = oh * w.stride - w.padding + ki;
          if (ih < 0 || ih >= in.height) continue;
          for (int64_t kj = 0; kj < w.kernel; ++kj) {
            const int64_t iw = ow * w.stride - w.padding + kj;
            if (iw >= 0 && iw < in.width) taps.push_back((c * in.height + ih) * in.width + iw);
          }
        }
        visit((c * out.height + oh) * out.width + ow, taps);
      }
    }
  }
}

// The tap holding the window's largest value (the first of equals).
int64_t argmax(const float* x, const std::vector<int64_t>& taps) {
  int64_t best = taps.front();
  for (int64_t tap : taps)
    if (x[tap] > x[best]) best = tap;
  return best;
}

}  // namespace

WindowPoolLayer::WindowPoolLayer(LayerType type, int index, const ImageShape& in, const Window& window,
                                 DeviceAllocator* allocator)
    : Layer(type, index, in.size(), window_output(in, window, in.channels).size(), allocator),
      in_(in),
      out_(window_output(in, window, in.channels)),
      window_(window) {
  assert(type == LayerType::MaxPool || type == LayerType::AvgPool);
}

Tensor WindowPoolLayer::forward(const Tensor& x, const ForwardInfo& info) {
  (void)info;
  const bool max = type() == LayerType::MaxPool;
  const float scale = 1.0f / static_cast<float>(window_.kernel * window_.kernel);
  Tensor y = Tensor::uninitialized(x.rows(), out_features(), allocator(), MemoryCategory::Activations);
  for (int64_t n = 0; n < x.rows(); ++n) {
    const float* in = x.row(n);
    float* out = y.row(n);
    // padding < kernel, so every window holds at least one input.
    for_each_window(in_, out_, window_, [&](int64_t o, const std::vector<int64_t>& taps) {
      if (max) {
        out[o] = in[argmax(in, taps)];
        return;
      }
      float sum = 0.0f;
      for (int64_t tap : taps) sum += in[tap];
      out[o] = sum * scale;
    });
  }
  return y;
}

Tensor WindowPoolLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  (void)info;
  const bool max = type() == LayerType::MaxPool;
  const float scale = 1.0f / static_cast<float>(window_.kernel * window_.kernel);
  Tensor dx = make_activation(x.rows(), in_features());
  for (int64_t n = 0; n < x.rows(); ++n) {
    const float* in = x.row(n);
    const float* g = dy.row(n);
    float* d = dx.row(n);
    for_each_window(in_, out_, window_, [&](int64_t o, const std::vector<int64_t>& taps) {
      if (max) {
        d[argmax(in, taps)] += g[o];
        return;
      }
      for (int64_t tap : taps) d[tap] += g[o] * scale;
    });
  }
  return dx;
}

GlobalAvgPoolLayer::GlobalAvgPoolLayer(int index, const ImageShape& in, DeviceAllocator* allocator)
    : Layer(LayerType::GlobalAvgPool, index, in.size(), in.channels, allocator), in_(in) {}

Tensor GlobalAvgPoolLayer::forward(const Tensor& x, const ForwardInfo& info) {
  (void)info;
  const int64_t pixels = in_.pixels();
  Tensor y = Tensor::uninitialized(x.rows(), in_.channels, allocator(), MemoryCategory::Activations);
  for (int64_t n = 0; n < x.rows(); ++n) {
    for (int64_t c = 0; c < in_.channels; ++c) {
      const float* channel = x.row(n) + c * pixels;
      double sum = 0;
      for (int64_t p = 0; p < pixels; ++p) sum += channel[p];
      y.at(n, c) = static_cast<float>(sum / static_cast<double>(pixels));
    }
  }
  return y;
}

Tensor GlobalAvgPoolLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  (void)info;
  const int64_t pixels = in_.pixels();
  Tensor dx = Tensor::uninitialized(x.rows(), in_features(), allocator(), MemoryCategory::Activations);
  for (int64_t n = 0; n < x.rows(); ++n) {
    for (int64_t c = 0; c < in_.channels; ++c) {
      const float share = dy.at(n, c) / static_cast<float>(pixels);
      float* channel = dx.row(n) + c * pixels;
      for (int64_t p = 0; p < pixels; ++p) channel[p] = share;
    }
  }
  return dx;
}

FlattenLayer::FlattenLayer(int index, int64_t width, DeviceAllocator* allocator)
    : Layer(LayerType::Flatten, index, width, width, allocator) {}

Tensor FlattenLayer::forward(const Tensor& x, const ForwardInfo& info) {
  (void)info;
  return x.clone(allocator(), MemoryCategory::Activations);
}

Tensor FlattenLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  (void)x;
  (void)info;
  return dy.clone(allocator(), MemoryCategory::Activations);
}

}  // namespace pipelab
