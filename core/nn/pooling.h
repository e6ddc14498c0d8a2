// Pooling over samples laid out [channels, height, width] (image_shape.h):
//  - WindowPoolLayer, max: each output is the largest input in its window (padding
//    taps never win); the backward sends the gradient to that input (the first
//    one, when several tie), found again from x.
//  - WindowPoolLayer, average: each output is the window's sum over kernel * kernel
//    (padding taps count as zeros, PyTorch's count_include_pad); the backward
//    spreads the gradient evenly over the window.
//  - GlobalAvgPoolLayer: the mean of each channel, [C, H, W] -> [C].
//  - FlattenLayer: [C, H, W] -> C * H * W features; the values stay as they
//    are (tensor rows are already flat), only the model's view changes.
// None has weights.
#pragma once

#include "core/model/image_shape.h"
#include "core/nn/layer.h"

namespace pipelab {

// MaxPool or AvgPool, as `type` says.
class WindowPoolLayer : public Layer {
 public:
  WindowPoolLayer(LayerType type, int index, const ImageShape& in, const Window& window,
                  DeviceAllocator* allocator);
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;

 private:
  ImageShape in_;
  ImageShape out_;
  Window window_;
};

class GlobalAvgPoolLayer : public Layer {
 public:
  GlobalAvgPoolLayer(int index, const ImageShape& in, DeviceAllocator* allocator);
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;

 private:
  ImageShape in_;
};

class FlattenLayer : public Layer {
 public:
  FlattenLayer(int index, int64_t width, DeviceAllocator* allocator);
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
};

}  // namespace pipelab
