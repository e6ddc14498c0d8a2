// Pooling over samples laid out [channels, height, width] (image_shape.h):
//  - MaxPoolLayer: each output is the largest input in its window (padding
//    taps never win); the backward sends the gradient to that input (the first
//    one, when several tie), found again from x.
//  - AvgPoolLayer: each output is the window's sum over kernel * kernel
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

class MaxPoolLayer : public Layer {
 public:
  MaxPoolLayer(int index, const ImageShape& in, const Window& window, DeviceAllocator* allocator);
  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;

 private:
  ImageShape in_;
  ImageShape out_;
  Window window_;
};

class AvgPoolLayer : public Layer {
 public:
  AvgPoolLayer(int index, const ImageShape& in, const Window& window, DeviceAllocator* allocator);
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
