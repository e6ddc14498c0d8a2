#include "gpu/layers/residual_block.h"

#include <cassert>

#include "gpu/kernels/activations.h"

namespace pipelab::gpu {

struct GpuResidualBlock::Kept : MovableLayerState<DeviceTensor> {
  DeviceTensor conv1_out, relu1_out, conv2_out, projection_out, block_out;
  std::unique_ptr<LayerState> bn1, bn2, projection_bn;
  // Left by the input-gradient half for the weight-gradient half.
  DeviceTensor d_sum, d_relu1, d_conv1, d_conv2, d_projection;
  bool has_gradients = false;

  // What the forward keeps: offloading moves these to host memory and back.
  std::vector<DeviceTensor*> tensors() override {
    std::vector<DeviceTensor*> kept;
    for (DeviceTensor* t : {&conv1_out, &relu1_out, &conv2_out, &projection_out, &block_out})
      if (!t->empty()) kept.push_back(t);
    return kept;
  }

  int64_t bytes() const override {
    int64_t total = 0;
    for (const DeviceTensor* t : {&conv1_out, &relu1_out, &conv2_out, &projection_out, &block_out, &d_sum,
                                  &d_relu1, &d_conv1, &d_conv2, &d_projection})
      total += t->bytes();
    for (const auto* state : {&bn1, &bn2, &projection_bn})
      if (*state) total += (*state)->bytes();
    return total;
  }
};

namespace {

void relu_in_place(DeviceTensor& t) {
  kernels::activation_forward(Activation::Relu, t.data(), t.data(), t.size(), t.stream());
}

// dy where the relu's output is positive, 0 elsewhere.
DeviceTensor relu_gradient(const DeviceTensor& relu_out, const DeviceTensor& dy) {
  DeviceTensor d = DeviceTensor::uninitialized(dy.rows(), dy.cols(), relu_out.allocator(),
                                               MemoryCategory::Activations);
  kernels::activation_backward(Activation::Relu, relu_out.data(), dy.data(), d.data(), d.size(), d.stream());
  return d;
}

ConvGeometry conv3x3(const ImageShape& in, int64_t channels, int64_t stride) {
  return conv_geometry(in, channels, Window{3, stride, 1});
}

}  // namespace

GpuResidualBlock::GpuResidualBlock(int index, const ResidualShape& shape, const BatchNormOptions& norm,
                                   DeviceContext& context)
    : GpuLayer(LayerType::ResidualBlock, index, shape.in.size(), shape.out.size(), context),
      shape_(shape),
      conv1_(index, conv3x3(shape.in, shape.out.channels, shape.stride), false, context),
      bn1_(index, shape.out, norm, context),
      conv2_(index, conv3x3(shape.out, shape.out.channels, 1), false, context),
      bn2_(index, shape.out, norm, context) {
  assert(conv1_.geometry().out == shape.out);
  if (shape.projection) {
    projection_ = std::make_unique<GpuConv2d>(
        index, conv_geometry(shape.in, shape.out.channels, Window{1, shape.stride, 0}), false, context);
    projection_bn_ = std::make_unique<GpuBatchNorm>(index, shape.out, norm, context);
  }
}

void GpuResidualBlock::init(uint64_t seed) {
  conv1_.init(seed, 0);
  conv2_.init(seed, 1);
  if (projection_) projection_->init(seed, 2);
}

DeviceTensor GpuResidualBlock::run_forward(const DeviceTensor& x, const ForwardInfo& info, Kept& kept) {
  kept.conv1_out = conv1_.forward(x, info);
  kept.relu1_out = bn1_.forward_keeping(kept.conv1_out, info, kept.bn1);
  relu_in_place(kept.relu1_out);
  kept.conv2_out = conv2_.forward(kept.relu1_out, info);
  DeviceTensor sum = bn2_.forward_keeping(kept.conv2_out, info, kept.bn2);
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

DeviceTensor GpuResidualBlock::run_backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                                  const ForwardInfo& info, Kept& kept) {
  kept.d_sum = relu_gradient(kept.block_out, dy);
  kept.d_conv2 = bn2_.backward_input_with(kept.conv2_out, kept.d_sum, info, kept.bn2.get());
  kept.d_relu1 = relu_gradient(kept.relu1_out, conv2_.backward_input(kept.relu1_out, kept.d_conv2, info));
  kept.d_conv1 = bn1_.backward_input_with(kept.conv1_out, kept.d_relu1, info, kept.bn1.get());
  DeviceTensor dx = conv1_.backward_input(x, kept.d_conv1, info);
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

DeviceTensor GpuResidualBlock::forward_keeping(const DeviceTensor& x, const ForwardInfo& info,
                                               std::unique_ptr<LayerState>& state) {
  auto kept = std::make_unique<Kept>();
  DeviceTensor y = run_forward(x, info, *kept);
  state = std::move(kept);
  return y;
}

DeviceTensor GpuResidualBlock::forward(const DeviceTensor& x, const ForwardInfo& info) {
  Kept kept;
  return run_forward(x, info, kept);
}

DeviceTensor GpuResidualBlock::backward_input_with(const DeviceTensor& x, const DeviceTensor& dy,
                                                   const ForwardInfo& info, LayerState* state) {
  if (auto* kept = dynamic_cast<Kept*>(state)) return run_backward_input(x, dy, info, *kept);
  Kept again;  // no state kept: run the forward again
  run_forward(x, info, again);
  return run_backward_input(x, dy, info, again);
}

void GpuResidualBlock::backward_weight_with(const DeviceTensor& x, const DeviceTensor& dy, LayerState* state) {
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
  for (DeviceTensor* t : {&kept->d_sum, &kept->d_relu1, &kept->d_conv1, &kept->d_conv2, &kept->d_projection})
    t->reset();
  kept->has_gradients = false;
}

DeviceTensor GpuResidualBlock::backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                              const ForwardInfo& info) {
  return backward_input_with(x, dy, info, nullptr);
}

void GpuResidualBlock::backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
  backward_weight_with(x, dy, nullptr);
}

namespace {

void append(std::vector<DeviceTensor*>& to, const std::vector<DeviceTensor*>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

std::vector<GpuLayer*> GpuResidualBlock::parts() {
  std::vector<GpuLayer*> all = {&conv1_, &bn1_, &conv2_, &bn2_};
  if (projection_) {
    all.push_back(projection_.get());
    all.push_back(projection_bn_.get());
  }
  return all;
}

std::vector<DeviceTensor*> GpuResidualBlock::params() {
  std::vector<DeviceTensor*> all;
  for (GpuLayer* part : parts()) append(all, part->params());
  return all;
}

std::vector<DeviceTensor*> GpuResidualBlock::grads() {
  std::vector<DeviceTensor*> all;
  for (GpuLayer* part : parts()) append(all, part->grads());
  return all;
}

std::vector<DeviceTensor*> GpuResidualBlock::buffers() {
  std::vector<DeviceTensor*> all;
  for (GpuBatchNorm* norm : batch_norms()) append(all, norm->buffers());
  return all;
}

void GpuResidualBlock::connect_batch_statistics(BatchStatisticsAllReduce all_reduce) {
  for (GpuBatchNorm* norm : batch_norms()) norm->connect_batch_statistics(all_reduce);
}

std::vector<GpuBatchNorm*> GpuResidualBlock::batch_norms() {
  std::vector<GpuBatchNorm*> norms = {&bn1_, &bn2_};
  if (projection_bn_) norms.push_back(projection_bn_.get());
  return norms;
}

}  // namespace pipelab::gpu
