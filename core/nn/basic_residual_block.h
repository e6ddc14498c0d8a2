// BasicResidualBlock: He et al.'s basic residual block on images [C, H, W],
// written once for every backend over its convolution and batch norm layers:
//   y = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))
// conv1 is 3 x 3 with the block's stride, conv2 3 x 3 with stride 1, both
// padded by 1 and without bias (the batch norms shift). The shortcut is x
// itself, or bn(conv1x1(x)) with the block's stride when the channels or the
// size change (model/image_layers.h: residual_shape).
//
// The forward keeps what the backward needs (each convolution's output, the
// first relu's output, the block's output and the batch norms' statistics) as
// the micro-batch's LayerState; the input-gradient half leaves the inner
// gradients there for the weight-gradient half, so zero-bubble schedules can
// run them apart.
//
// Parts names the backend's types: Tensor, Layer (the layer base), Context
// (what its layers are built with), Conv (a convolution with init(seed, part))
// and Norm (a batch norm), and its relus: relu_in_place(Tensor&) and
// relu_gradient(relu output, dy) (dy where the output is positive, else 0).
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <vector>

#include "core/model/image_layers.h"
#include "core/nn/batch_norm.h"
#include "core/nn/conv2d.h"

namespace pipelab {

// A residual block's convolutions: conv1 (3 x 3, the block's stride), conv2
// (3 x 3, stride 1) and, when the shape changes, the 1 x 1 projection.
struct ResidualConvolutions {
  ConvGeometry conv1;
  ConvGeometry conv2;
  std::optional<ConvGeometry> projection;
};

inline ResidualConvolutions residual_convolutions(const ResidualShape& shape) {
  ResidualConvolutions convs{
      conv_geometry(shape.in, shape.out.channels, Window{3, shape.stride, 1}),
      conv_geometry(shape.out, shape.out.channels, Window{3, 1, 1}), std::nullopt};
  if (shape.projection)
    convs.projection = conv_geometry(shape.in, shape.out.channels, Window{1, shape.stride, 0});
  return convs;
}

template <typename Parts>
class BasicResidualBlock : public Parts::Layer {
 public:
  using Tensor = typename Parts::Tensor;
  using Conv = typename Parts::Conv;
  using Norm = typename Parts::Norm;
  using Base = typename Parts::Layer;

  BasicResidualBlock(int index, const ResidualShape& shape, const BatchNormOptions& norm,
                     typename Parts::Context context)
      : Base(LayerType::ResidualBlock, index, shape.in.size(), shape.out.size(), context),
        shape_(shape),
        conv1_(index, residual_convolutions(shape).conv1, false, context),
        bn1_(index, shape.out, norm, context),
        conv2_(index, residual_convolutions(shape).conv2, false, context),
        bn2_(index, shape.out, norm, context) {
    assert(conv1_.geometry().out == shape.out);
    if (const auto projection = residual_convolutions(shape).projection) {
      projection_ = std::make_unique<Conv>(index, *projection, false, context);
      projection_bn_ = std::make_unique<Norm>(index, shape.out, norm, context);
    }
  }

  void init(uint64_t seed) {
    conv1_.init(seed, 0);
    conv2_.init(seed, 1);
    if (projection_) projection_->init(seed, 2);
  }

  Tensor forward(const Tensor& x, const ForwardInfo& info) override {
    Kept kept;
    return run_forward(x, info, kept);
  }
  Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) override {
    return backward_input_with(x, dy, info, nullptr);
  }
  void backward_weight(const Tensor& x, const Tensor& dy) override {
    backward_weight_with(x, dy, nullptr);
  }

  Tensor forward_keeping(const Tensor& x, const ForwardInfo& info,
                         std::unique_ptr<LayerState>& state) override {
    auto kept = std::make_unique<Kept>();
    Tensor y = run_forward(x, info, *kept);
    state = std::move(kept);
    return y;
  }

  Tensor backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                             LayerState* state) override {
    if (auto* kept = dynamic_cast<Kept*>(state)) return run_backward_input(x, dy, info, *kept);
    Kept again;  // no state kept: run the forward again
    run_forward(x, info, again);
    return run_backward_input(x, dy, info, again);
  }

  void backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) override {
    Kept again;
    auto* kept = dynamic_cast<Kept*>(state);
    if (!kept || !kept->has_gradients) {
      // Without the input-gradient half's leftovers: rebuild them (tests, fused callers).
      const ForwardInfo info;
      if (!kept) {
        run_forward(x, info, again);
        kept = &again;
      }
      run_backward_input(x, dy, info, *kept);
    }
    conv1_.backward_weight(x, kept->d_conv1);
    bn1_.backward_weight_with(kept->conv1_out, kept->d_relu1, kept->bn1.get());
    conv2_.backward_weight(kept->relu1_out, kept->d_conv2);
    bn2_.backward_weight_with(kept->conv2_out, kept->d_sum, kept->bn2.get());
    if (projection_) {
      projection_->backward_weight(x, kept->d_projection);
      projection_bn_->backward_weight_with(kept->projection_out, kept->d_sum,
                                           kept->projection_bn.get());
    }
    // The inner gradients are spent.
    for (Tensor* t :
         {&kept->d_sum, &kept->d_relu1, &kept->d_conv1, &kept->d_conv2, &kept->d_projection})
      t->reset();
    kept->has_gradients = false;
  }

  std::vector<Tensor*> params() override {
    std::vector<Tensor*> all;
    for (Base* part : parts()) append(all, part->params());
    return all;
  }
  std::vector<Tensor*> grads() override {
    std::vector<Tensor*> all;
    for (Base* part : parts()) append(all, part->grads());
    return all;
  }
  std::vector<Tensor*> buffers() override {
    std::vector<Tensor*> all;
    for (Norm* norm : batch_norms()) append(all, norm->buffers());
    return all;
  }
  // Synced batch norm: every batch norm of the block sums its statistics.
  void connect_batch_statistics(typename Base::BatchStatisticsAllReduce all_reduce) override {
    for (Norm* norm : batch_norms()) norm->connect_batch_statistics(all_reduce);
  }

  // The batch norms, in order (bn1, bn2, and the shortcut's when there is one).
  std::vector<Norm*> batch_norms() {
    std::vector<Norm*> norms = {&bn1_, &bn2_};
    if (projection_bn_) norms.push_back(projection_bn_.get());
    return norms;
  }
  const ResidualShape& shape() const { return shape_; }
  // The convolutions (conv1, conv2, and the shortcut's when there is one).
  std::vector<Conv*> convolutions() {
    std::vector<Conv*> convs = {&conv1_, &conv2_};
    if (projection_) convs.push_back(projection_.get());
    return convs;
  }

 private:
  struct Kept : MovableLayerState<Tensor> {
    Tensor conv1_out, relu1_out, conv2_out, projection_out, block_out;
    std::unique_ptr<LayerState> bn1, bn2, projection_bn;
    // Left by the input-gradient half for the weight-gradient half.
    Tensor d_sum, d_relu1, d_conv1, d_conv2, d_projection;
    bool has_gradients = false;

    // What the forward keeps: offloading moves these to host memory and back.
    std::vector<Tensor*> tensors() override {
      std::vector<Tensor*> kept;
      for (Tensor* t : {&conv1_out, &relu1_out, &conv2_out, &projection_out, &block_out})
        if (!t->empty()) kept.push_back(t);
      return kept;
    }

    int64_t bytes() const override {
      int64_t total = 0;
      for (const Tensor* t : {&conv1_out, &relu1_out, &conv2_out, &projection_out, &block_out,
                              &d_sum, &d_relu1, &d_conv1, &d_conv2, &d_projection})
        total += t->bytes();
      for (const auto* state : {&bn1, &bn2, &projection_bn})
        if (*state) total += (*state)->bytes();
      return total;
    }
  };

  static void append(std::vector<Tensor*>& to, const std::vector<Tensor*>& from) {
    to.insert(to.end(), from.begin(), from.end());
  }

  // The convolutions and batch norms, in order (params() and grads() follow it).
  std::vector<Base*> parts() {
    std::vector<Base*> all = {&conv1_, &bn1_, &conv2_, &bn2_};
    if (projection_) {
      all.push_back(projection_.get());
      all.push_back(projection_bn_.get());
    }
    return all;
  }

  // forward_keeping's work, into `kept`.
  Tensor run_forward(const Tensor& x, const ForwardInfo& info, Kept& kept) {
    kept.conv1_out = conv1_.forward(x, info);
    kept.relu1_out = bn1_.forward_keeping(kept.conv1_out, info, kept.bn1);
    Parts::relu_in_place(kept.relu1_out);
    kept.conv2_out = conv2_.forward(kept.relu1_out, info);
    Tensor sum = bn2_.forward_keeping(kept.conv2_out, info, kept.bn2);
    if (projection_) {
      kept.projection_out = projection_->forward(x, info);
      sum.add(projection_bn_->forward_keeping(kept.projection_out, info, kept.projection_bn));
    } else {
      sum.add(x);
    }
    Parts::relu_in_place(sum);
    kept.block_out = sum.clone();
    return sum;
  }

  // The inner gradients, into `kept`; returns dx.
  Tensor run_backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                            Kept& kept) {
    kept.d_sum = Parts::relu_gradient(kept.block_out, dy);
    kept.d_conv2 = bn2_.backward_input_with(kept.conv2_out, kept.d_sum, info, kept.bn2.get());
    kept.d_relu1 = Parts::relu_gradient(kept.relu1_out,
                                        conv2_.backward_input(kept.relu1_out, kept.d_conv2, info));
    kept.d_conv1 = bn1_.backward_input_with(kept.conv1_out, kept.d_relu1, info, kept.bn1.get());
    Tensor dx = conv1_.backward_input(x, kept.d_conv1, info);
    if (projection_) {
      kept.d_projection = projection_bn_->backward_input_with(kept.projection_out, kept.d_sum, info,
                                                              kept.projection_bn.get());
      dx.add(projection_->backward_input(x, kept.d_projection, info));
    } else {
      dx.add(kept.d_sum);
    }
    kept.has_gradients = true;
    return dx;
  }

  ResidualShape shape_;
  Conv conv1_;
  Norm bn1_;
  Conv conv2_;
  Norm bn2_;
  std::unique_ptr<Conv> projection_;  // with its batch norm, when shape_.projection
  std::unique_ptr<Norm> projection_bn_;
};

}  // namespace pipelab
