#include "gpu/layers/sequential.h"

#include <cassert>
#include <utility>

#include "core/nn/init.h"
#include "core/nn/stack_layout.h"
#include "gpu/device/device_guard.h"
#include "gpu/layers/activation.h"
#include "gpu/layers/dropout.h"
#include "gpu/layers/layer_norm.h"
#include "gpu/layers/linear.h"

namespace pipelab::gpu {
namespace {

// A linear's initial weights: generated on the host for this shard's block of
// the full layer (core/nn/init.h), then copied to the device.
void initialise_linear(GpuLinear& linear, const LayerLayout& layer, uint64_t seed) {
  Tensor weight(layer.weight.rows, layer.weight.cols);
  init_linear_weight(weight, seed, layer.index, layer.full_in, layer.full_out,
                     layer.weight.row_begin, layer.weight.col_begin);
  linear.weight().copy_from_host(weight);
  if (linear.has_bias()) {
    Tensor bias(1, layer.bias.cols);
    init_linear_bias(bias, seed, layer.index, layer.full_in, layer.full_out,
                     layer.bias.col_begin);
    linear.bias().copy_from_host(bias);
  }
  // The host tensors die when this returns; copy_from_host has staged them.
}

std::unique_ptr<GpuLayer> build_layer(const LayerLayout& layer, uint64_t seed,
                                      DeviceContext& context) {
  const LayerSpec& spec = layer.spec;
  if (spec.type == LayerType::Linear) {
    // A row-parallel shard adds the bias once, after the all-reduce.
    auto linear = std::make_unique<GpuLinear>(layer.index, layer.in, layer.out, spec.bias, context,
                                              layer.role != TensorParallelRole::RowParallel);
    initialise_linear(*linear, layer, seed);
    return linear;
  }
  if (spec.type == LayerType::LayerNorm)
    return std::make_unique<GpuLayerNorm>(layer.index, layer.out, context);
  if (spec.type == LayerType::Dropout)
    return std::make_unique<GpuDropout>(layer.index, layer.out, spec.p, seed, context,
                                        layer.feature_offset);
  return std::make_unique<GpuActivation>(spec.type, layer.index, layer.out, context);
}

}  // namespace

int64_t GpuStageActivations::bytes() const {
  int64_t total = 0;
  for (const DeviceTensor& t : inputs) total += t.bytes();
  for (const DeviceTensor& t : output_grads) total += t.bytes();
  return total;
}

GpuSequential::GpuSequential(const ModelSpec& model, int begin, int end, uint64_t seed,
                             DeviceContext& context, GpuTensorParallelSetup tensor_parallel)
    : begin_(begin), context_(context) {
  const std::vector<LayerLayout> layout =
      stack_layout(model, begin, end,
                   {tensor_parallel.degree, tensor_parallel.shard, tensor_parallel.roles,
                    static_cast<bool>(tensor_parallel.all_reduce)});
  all_reduce_ = std::move(tensor_parallel.all_reduce);

  DeviceGuard guard(context_.gpu());
  for (const LayerLayout& layer : layout) {
    layers_.push_back(build_layer(layer, seed, context_));
    roles_.push_back(layer.role);
  }
}

DeviceTensor GpuSequential::layer_forward(int k, const DeviceTensor& x, const ForwardInfo& info) {
  DeviceTensor y = layers_[k]->forward(x, info);
  if (roles_[k] == TensorParallelRole::RowParallel) {
    all_reduce_(y, begin_ + k, true);
    static_cast<GpuLinear&>(*layers_[k]).add_bias(y);
  }
  return y;
}

DeviceTensor GpuSequential::layer_input_grad(int k, const DeviceTensor& x, const DeviceTensor& dy,
                                             const ForwardInfo& info) {
  DeviceTensor dx = layers_[k]->backward_input(x, dy, info);
  if (roles_[k] == TensorParallelRole::ColumnParallel) all_reduce_(dx, begin_ + k, false);
  return dx;
}

DeviceTensor GpuSequential::forward(DeviceTensor input, const ForwardInfo& info,
                                    GpuStageActivations& saved) {
  assert(input.cols() == input_features());
  DeviceGuard guard(context_.gpu());
  input.retag(MemoryCategory::Activations);
  saved.info = info;
  saved.inputs.clear();
  saved.inputs.resize(layers_.size());
  saved.output_grads.clear();
  saved.output_grads.resize(layers_.size());
  saved.inputs[0] = std::move(input);
  return forward_keeping_inputs(saved);
}

DeviceTensor GpuSequential::forward_keeping_inputs(GpuStageActivations& saved) {
  const int last = layer_count() - 1;
  for (int k = 0; k < last; ++k)
    saved.inputs[k + 1] = layer_forward(k, saved.inputs[k], saved.info);
  return layer_forward(last, saved.inputs[last], saved.info);
}

DeviceTensor GpuSequential::infer(const DeviceTensor& input, const ForwardInfo& info) {
  assert(input.cols() == input_features());
  DeviceGuard guard(context_.gpu());
  DeviceTensor current = layer_forward(0, input, info);
  for (int k = 1; k < layer_count(); ++k) current = layer_forward(k, current, info);
  return current;
}

void GpuSequential::drop_activations(GpuStageActivations& saved) const {
  for (size_t k = 1; k < saved.inputs.size(); ++k) saved.inputs[k].reset();
}

void GpuSequential::recompute(GpuStageActivations& saved) {
  assert(saved.inputs.size() == layers_.size() && !saved.inputs[0].empty());
  DeviceGuard guard(context_.gpu());
  forward_keeping_inputs(saved);  // the stage output was sent already; it is dropped here
}

DeviceTensor GpuSequential::backward(DeviceTensor output_grad, GpuStageActivations& saved) {
  assert(saved.inputs.size() == layers_.size());
  DeviceGuard guard(context_.gpu());
  DeviceTensor grad = std::move(output_grad);
  for (int k = layer_count() - 1; k >= 0; --k) {
    DeviceTensor input_grad;
    if (needs_input_grad(k)) input_grad = layer_input_grad(k, saved.inputs[k], grad, saved.info);
    layers_[k]->backward_weight(saved.inputs[k], grad);
    saved.inputs[k].reset();
    grad = std::move(input_grad);
  }
  saved.inputs.clear();
  saved.output_grads.clear();
  return grad;
}

DeviceTensor GpuSequential::backward_input(DeviceTensor output_grad, GpuStageActivations& saved) {
  assert(saved.inputs.size() == layers_.size());
  DeviceGuard guard(context_.gpu());
  DeviceTensor grad = std::move(output_grad);
  for (int k = layer_count() - 1; k >= 0; --k) {
    DeviceTensor input_grad;
    if (needs_input_grad(k)) input_grad = layer_input_grad(k, saved.inputs[k], grad, saved.info);
    if (layers_[k]->has_params()) {
      grad.retag(MemoryCategory::Activations);
      saved.output_grads[k] = std::move(grad);  // with inputs[k], what BW needs
    } else {
      saved.inputs[k].reset();
    }
    grad = std::move(input_grad);
  }
  return grad;
}

void GpuSequential::backward_weight(GpuStageActivations& saved) {
  assert(saved.inputs.size() == layers_.size() && saved.output_grads.size() == layers_.size());
  DeviceGuard guard(context_.gpu());
  for (int k = layer_count() - 1; k >= 0; --k) {
    if (saved.output_grads[k].empty()) continue;
    layers_[k]->backward_weight(saved.inputs[k], saved.output_grads[k]);
    saved.inputs[k].reset();
    saved.output_grads[k].reset();
  }
  saved.inputs.clear();
  saved.output_grads.clear();
}

std::vector<GpuParameter> GpuSequential::parameters() {
  std::vector<GpuParameter> result;
  for (auto& layer : layers_) {
    const std::vector<DeviceTensor*> values = layer->params();
    const std::vector<DeviceTensor*> grads = layer->grads();
    assert(values.size() == grads.size());
    for (size_t i = 0; i < values.size(); ++i) result.push_back({values[i], grads[i]});
  }
  return result;
}

int64_t GpuSequential::parameter_count() const {
  int64_t count = 0;
  for (const auto& layer : layers_)
    for (DeviceTensor* value : layer->params()) count += value->size();
  return count;
}

void GpuSequential::zero_grad() {
  DeviceGuard guard(context_.gpu());
  for (auto& layer : layers_) layer->zero_grad();
}

}  // namespace pipelab::gpu
