#include "core/nn/residual_block.h"

#include <cassert>

namespace pipelab {

struct ResidualBlockLayer::Kept : MovableLayerState<Tensor> {
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
    for (const Tensor* t : {&conv1_out, &relu1_out, &conv2_out, &projection_out, &block_out, &d_sum, &d_relu1,
                            &d_conv1, &d_conv2, &d_projection})
      total += t->bytes();
    return total;
  }
};

namespace {

void relu_in_place(Tensor& t) {
  float* v = t.data();
  for (int64_t i = 0; i < t.size(); ++i) v[i] = v[i] > 0.0f ? v[i] : 0.0f;
}

// dy where the relu's output is positive, 0 elsewhere.
Tensor relu_gradient(const Tensor& relu_out, const Tensor& dy) {
  Tensor d = dy.clone();
  const float* y = relu_out.data();
  float* g = d.data();
  for (int64_t i = 0; i < d.size(); ++i)
    if (!(y[i] > 0.0f)) g[i] = 0.0f;
  return d;
}

ConvGeometry conv3x3(const ImageShape& in, int64_t channels, int64_t stride) {
  return conv_geometry(in, channels, Window{3, stride, 1});
}

}  // namespace

ResidualBlockLayer::ResidualBlockLayer(int index, const ResidualShape& shape, const BatchNormOptions& norm,
                                       DeviceAllocator* allocator)
    : Layer(LayerType::ResidualBlock, index, shape.in.size(), shape.out.size(), allocator),
      shape_(shape),
      conv1_(index, conv3x3(shape.in, shape.out.channels, shape.stride), false, allocator),
      bn1_(index, shape.out, norm, allocator),
      conv2_(index, conv3x3(shape.out, shape.out.channels, 1), false, allocator),
      bn2_(index, shape.out, norm, allocator) {
  assert(conv1_.geometry().out == shape.out);
  if (shape.projection) {
    projection_ = std::make_unique<Conv2dLayer>(
        index, conv_geometry(shape.in, shape.out.channels, Window{1, shape.stride, 0}), false, allocator);
    projection_bn_ = std::make_unique<BatchNormLayer>(index, shape.out, norm, allocator);
  }
}

void ResidualBlockLayer::init(uint64_t seed) {
  conv1_.init(seed, 0);
  conv2_.init(seed, 1);
  if (projection_) projection_->init(seed, 2);
}

Tensor ResidualBlockLayer::run_forward(const Tensor& x, const ForwardInfo& info, Kept& kept) {
  kept.conv1_out = conv1_.forward(x, info);
  kept.relu1_out = bn1_.forward_keeping(kept.conv1_out, info, kept.bn1);
  relu_in_place(kept.relu1_out);
  kept.conv2_out = conv2_.forward(kept.relu1_out, info);
  Tensor sum = bn2_.forward_keeping(kept.conv2_out, info, kept.bn2);
  if (projection_) {
    kept.projection_out = projection_->forward(x, info);
    sum.add(projection_bn_->forward_keeping(kept.projection_out, info, kept.projection_bn));
  } else {
    sum.add(x);
  }
  relu_in_place(sum);
  kept.block_out = sum.clone();
  return sum;
}

Tensor ResidualBlockLayer::run_backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                                              Kept& kept) {
  kept.d_sum = relu_gradient(kept.block_out, dy);
  kept.d_conv2 = bn2_.backward_input_with(kept.conv2_out, kept.d_sum, info, kept.bn2.get());
  kept.d_relu1 = relu_gradient(kept.relu1_out, conv2_.backward_input(kept.relu1_out, kept.d_conv2, info));
  kept.d_conv1 = bn1_.backward_input_with(kept.conv1_out, kept.d_relu1, info, kept.bn1.get());
  Tensor dx = conv1_.backward_input(x, kept.d_conv1, info);
  if (projection_) {
    kept.d_projection =
        projection_bn_->backward_input_with(kept.projection_out, kept.d_sum, info, kept.projection_bn.get());
    dx.add(projection_->backward_input(x, kept.d_projection, info));
  } else {
    dx.add(kept.d_sum);
  }
  kept.has_gradients = true;
  return dx;
}

Tensor ResidualBlockLayer::forward_keeping(const Tensor& x, const ForwardInfo& info,
                                           std::unique_ptr<LayerState>& state) {
  auto kept = std::make_unique<Kept>();
  Tensor y = run_forward(x, info, *kept);
  state = std::move(kept);
  return y;
}

Tensor ResidualBlockLayer::forward(const Tensor& x, const ForwardInfo& info) {
  Kept kept;
  return run_forward(x, info, kept);
}

Tensor ResidualBlockLayer::backward_input_with(const Tensor& x, const Tensor& dy, const ForwardInfo& info,
                                               LayerState* state) {
  if (auto* kept = dynamic_cast<Kept*>(state)) return run_backward_input(x, dy, info, *kept);
  Kept again;  // no state kept: run the forward again
  run_forward(x, info, again);
  return run_backward_input(x, dy, info, again);
}

void ResidualBlockLayer::backward_weight_with(const Tensor& x, const Tensor& dy, LayerState* state) {
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
    projection_bn_->backward_weight_with(kept->projection_out, kept->d_sum, kept->projection_bn.get());
  }
  // The inner gradients are spent.
  for (Tensor* t : {&kept->d_sum, &kept->d_relu1, &kept->d_conv1, &kept->d_conv2, &kept->d_projection}) t->reset();
  kept->has_gradients = false;
}

Tensor ResidualBlockLayer::backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
  return backward_input_with(x, dy, info, nullptr);
}

void ResidualBlockLayer::backward_weight(const Tensor& x, const Tensor& dy) { backward_weight_with(x, dy, nullptr); }

namespace {

void append(std::vector<Tensor*>& to, const std::vector<Tensor*>& from) { to.insert(to.end(), from.begin(), from.end()); }

}  // namespace

std::vector<Layer*> ResidualBlockLayer::parts() {
  std::vector<Layer*> all = {&conv1_, &bn1_, &conv2_, &bn2_};
  if (projection_) {
    all.push_back(projection_.get());
    all.push_back(projection_bn_.get());
  }
  return all;
}

std::vector<Tensor*> ResidualBlockLayer::params() {
  std::vector<Tensor*> all;
  for (Layer* part : parts()) append(all, part->params());
  return all;
}

std::vector<Tensor*> ResidualBlockLayer::grads() {
  std::vector<Tensor*> all;
  for (Layer* part : parts()) append(all, part->grads());
  return all;
}

std::vector<Tensor*> ResidualBlockLayer::buffers() {
  std::vector<Tensor*> all;
  for (BatchNormLayer* norm : batch_norms()) append(all, norm->buffers());
  return all;
}

void ResidualBlockLayer::connect_batch_statistics(BatchStatisticsAllReduce all_reduce) {
  for (BatchNormLayer* norm : batch_norms()) norm->connect_batch_statistics(all_reduce);
}

std::vector<BatchNormLayer*> ResidualBlockLayer::batch_norms() {
  std::vector<BatchNormLayer*> norms = {&bn1_, &bn2_};
  if (projection_bn_) norms.push_back(projection_bn_.get());
  return norms;
}

}  // namespace pipelab
