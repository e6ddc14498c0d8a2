// Conv2dLayer: a 2-D convolution over samples laid out [channels, height,
// width] in each tensor row (image_shape.h), as PyTorch's nn.Conv2d with
// square kernels. The weight is [out_channels, in_channels * kernel * kernel]
// and the bias [1, out_channels].
//
// The math goes through the BLAS GEMM by im2col: a sample's input becomes the
// matrix cols [in_channels * k * k, out_h * out_w] whose column p holds the
// input values output position p sees (zeros where the window hangs over the
// padding), so that
//   y_n  = W cols_n (+ b per output channel)          forward
//   dcols = W^T dy_n, folded back by col2im           input gradient
//   dW  += dy_n cols_n^T,  db += row sums of dy_n      weight gradient
// The backward rebuilds cols_n from x instead of keeping it (it is k * k
// times the input).
#pragma once

#include <cstdint>

#include "core/model/image_shape.h"
#include "core/nn/layer.h"

namespace pipelab {

struct ConvGeometry {
  ImageShape in;
  ImageShape out;
  Window window;

  int64_t taps() const { return in.channels * window.kernel * window.kernel; }  // rows of cols
};
ConvGeometry conv_geometry(const ImageShape& in, int64_t out_channels, const Window& window);

// One sample's input (in.size() values) to cols [taps(), out.pixels()].
void im2col(const float* image, const ConvGeometry& geometry, float* cols);
// The reverse: adds every entry of cols to the input value it came from.
void col2im_add(const float* cols, const ConvGeometry& geometry, float* image);

// Over a batch: x [batch, in.size()], y [batch, out.size()], weight
// [out.channels, taps()], bias [1, out.channels] or null; `cols` is scratch of
// taps() * out.pixels() floats.
void conv2d_forward(const Tensor& x, const Tensor& weight, const Tensor* bias,
                    const ConvGeometry& geometry, float* cols, Tensor& y);
void conv2d_backward_input(const Tensor& dy, const Tensor& weight, const ConvGeometry& geometry,
                           float* cols, Tensor& dx);
void conv2d_backward_weight(const Tensor& x, const Tensor& dy, const ConvGeometry& geometry,
                            float* cols, Tensor& weight_grad, Tensor* bias_grad);

class Conv2dLayer : public Layer {
 public:
  Conv2dLayer(int index, const ConvGeometry& geometry, bool bias, DeviceAllocator* allocator);

  // He-uniform weights, bound sqrt(6 / fan_in) (fan_in = taps()), and biases
  // uniform(+-1/sqrt(fan_in)), keyed by the layer's index and the element's
  // position (counter_rng.h); `part` tells apart the convolutions of one
  // residual block.
  void init(uint64_t seed, int part = 0);

  Tensor forward(const Tensor& x, const ForwardInfo& info) override;
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override;
  void backward_weight(const Tensor& x, const Tensor& dy) override;
  std::vector<Tensor*> params() override;
  std::vector<Tensor*> grads() override;

  const ConvGeometry& geometry() const { return geometry_; }
  bool has_bias() const { return !bias_.empty(); }
  Tensor& weight() { return weight_; }
  Tensor& bias() { return bias_; }
  Tensor& weight_grad() { return weight_grad_; }
  Tensor& bias_grad() { return bias_grad_; }

 private:
  Tensor scratch() const;  // one sample's cols, counted as Workspace

  ConvGeometry geometry_;
  Tensor weight_;       // [out.channels, taps()], Weights
  Tensor bias_;         // [1, out.channels] or empty, Weights
  Tensor weight_grad_;  // Gradients
  Tensor bias_grad_;
};

}  // namespace pipelab
