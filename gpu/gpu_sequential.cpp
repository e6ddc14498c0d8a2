#include "gpu/gpu_sequential.h"

#include <cassert>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/nn/init.h"
#include "core/nn/tensor_parallel.h"
#include "gpu/device_guard.h"
#include "gpu/gpu_activation.h"
#include "gpu/gpu_dropout.h"
#include "gpu/gpu_layer_norm.h"
#include "gpu/gpu_linear.h"

namespace pipelab::gpu {
namespace {

std::string layer_name(int index, LayerType type) {
  return "layer " + std::to_string(index) + " (" + layer_type_name(type) + ")";
}

bool is_elementwise(LayerType type) {
  return type == LayerType::Relu || type == LayerType::Gelu || type == LayerType::Tanh ||
         type == LayerType::Sigmoid || type == LayerType::Dropout;
}

// The roles of the model's layers, checked against their types as the CPU
// Sequential checks them. All Replicated without tensor parallelism.
std::vector<TensorParallelRole> checked_roles(const ModelSpec& model,
                                              const GpuTensorParallelSetup& tp) {
  const size_t count = model.layers.size();
  if (tp.degree < 1)
    throw std::invalid_argument("parallel.tp must be >= 1, got " + std::to_string(tp.degree));
  if (tp.shard < 0 || tp.shard >= tp.degree)
    throw std::invalid_argument("tensor-parallel shard " + std::to_string(tp.shard) +
                                " is outside [0, " + std::to_string(tp.degree) + ")");
  if (tp.degree == 1) return std::vector<TensorParallelRole>(count, TensorParallelRole::Replicated);
  if (tp.roles.size() != count)
    throw std::invalid_argument("tensor parallelism needs one role per model layer (" +
                                std::to_string(count) + "), got " +
                                std::to_string(tp.roles.size()) + "; use tensor_parallel_roles");
  if (!tp.all_reduce)
    throw std::invalid_argument("tensor parallelism (tp = " + std::to_string(tp.degree) +
                                ") needs an all_reduce function");
  for (size_t i = 0; i < count; ++i) {
    const LayerType type = model.layers[i].type;
    const TensorParallelRole role = tp.roles[i];
    const bool linear_role =
        role == TensorParallelRole::ColumnParallel || role == TensorParallelRole::RowParallel;
    if ((linear_role && type != LayerType::Linear) ||
        (role == TensorParallelRole::Sharded && !is_elementwise(type)))
      throw std::invalid_argument(
          layer_name(static_cast<int>(i), type) +
          " cannot take the tensor-parallel role it was given; use tensor_parallel_roles");
  }
  return tp.roles;
}

// A linear's initial weights: generated on the host for this shard's slice of
// the full layer (core/nn/init.h), then copied to the device.
void initialise_linear(GpuLinear& linear, const MatrixSlice& w, const MatrixSlice& b, uint64_t seed,
                       int index, int64_t in, int64_t out) {
  Tensor weight(w.rows, w.cols);
  init_linear_weight(weight, seed, index, in, out, w.row_begin, w.col_begin);
  linear.weight().copy_from_host(weight);
  if (linear.has_bias()) {
    Tensor bias(1, b.cols);
    init_linear_bias(bias, seed, index, in, out, b.col_begin);
    linear.bias().copy_from_host(bias);
  }
  // The host tensors die when this returns; copy_from_host has staged them.
}

std::unique_ptr<GpuLayer> build_layer(const LayerSpec& spec, int index, int64_t in, int64_t out,
                                      TensorParallelRole role, const GpuTensorParallelSetup& tp,
                                      uint64_t seed, DeviceContext& context) {
  if (spec.type == LayerType::Linear) {
    const MatrixSlice w = linear_weight_slice(role, in, out, tp.degree, tp.shard);
    const MatrixSlice b = linear_bias_slice(role, out, tp.degree, tp.shard);
    // A row-parallel shard adds the bias once, after the all-reduce.
    auto linear = std::make_unique<GpuLinear>(index, w.rows, w.cols, spec.bias, context,
                                              role != TensorParallelRole::RowParallel);
    initialise_linear(*linear, w, b, seed, index, in, out);
    return linear;
  }
  int64_t local = out;
  int64_t offset = 0;
  if (role == TensorParallelRole::Sharded) {
    if (out % tp.degree != 0)
      throw std::invalid_argument("tp = " + std::to_string(tp.degree) +
                                  " does not divide the width " + std::to_string(out) + " of " +
                                  layer_name(index, spec.type));
    local = out / tp.degree;
    offset = local * tp.shard;
  }
  if (spec.type == LayerType::LayerNorm)
    return std::make_unique<GpuLayerNorm>(index, local, context);
  if (spec.type == LayerType::Dropout)
    return std::make_unique<GpuDropout>(index, local, spec.p, seed, context, offset);
  return std::make_unique<GpuActivation>(spec.type, index, local, context);
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
  const int count = static_cast<int>(model.layers.size());
  if (begin < 0 || begin >= end || end > count)
    throw std::invalid_argument(
        "stage layer range [" + std::to_string(begin) + ", " + std::to_string(end) +
        ") must be non-empty and inside the model's " + std::to_string(count) + " layers");
  for (int64_t dim : model.input)
    if (dim <= 0)
      throw std::invalid_argument("model.input dimensions must be > 0, got " + std::to_string(dim));
  int64_t width = pipelab::input_features(model);
  if (width <= 0)
    throw std::invalid_argument(
        "model.input is empty; give the per-sample input shape, e.g. [784]");

  const std::vector<TensorParallelRole> model_roles = checked_roles(model, tensor_parallel);
  all_reduce_ = std::move(tensor_parallel.all_reduce);

  DeviceGuard guard(context_.gpu());
  // Widths follow from the input through every layer before the stage too.
  for (int i = 0; i < end; ++i) {
    const LayerSpec& spec = model.layers[i];
    const TensorParallelRole role = model_roles[i];
    const int64_t in = width;
    if (spec.type == LayerType::Linear) {
      if (spec.out <= 0)
        throw std::invalid_argument(layer_name(i, spec.type) + ": out must be > 0, got " +
                                    std::to_string(spec.out));
      width = spec.out;
    }
    if (i < begin) continue;

    std::unique_ptr<GpuLayer> layer =
        build_layer(spec, i, in, width, role, tensor_parallel, seed, context_);
    if (!layers_.empty() && layer->in_features() != layers_.back()->out_features())
      throw std::invalid_argument(
          layer_name(i, spec.type) + " takes " + std::to_string(layer->in_features()) +
          " features per shard but receives " + std::to_string(layers_.back()->out_features()) +
          ": the tensor-parallel roles do not pair up; use tensor_parallel_roles");
    layers_.push_back(std::move(layer));
    roles_.push_back(role);
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
