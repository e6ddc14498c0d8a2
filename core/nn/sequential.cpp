#include "core/nn/sequential.h"

#include <cassert>
#include <utility>

#include "core/nn/activations.h"
#include "core/nn/dropout.h"
#include "core/nn/init.h"
#include "core/nn/layer_norm.h"
#include "core/nn/linear.h"
#include "core/nn/stack_layout.h"

namespace pipelab {
namespace {

// One layer as its layout says; linears are initialised with their block of
// the full layer's weights.
std::unique_ptr<Layer> build_layer(const LayerLayout& layer, uint64_t seed,
                                   DeviceAllocator* allocator) {
  const LayerSpec& spec = layer.spec;
  if (spec.type == LayerType::Linear) {
    // A row-parallel shard adds the bias once, after the all-reduce.
    auto linear = std::make_unique<LinearLayer>(layer.index, layer.in, layer.out, spec.bias,
                                                allocator,
                                                layer.role != TensorParallelRole::RowParallel);
    init_linear_weight(linear->weight(), seed, layer.index, layer.full_in, layer.full_out,
                       layer.weight.row_begin, layer.weight.col_begin);
    if (spec.bias)
      init_linear_bias(linear->bias(), seed, layer.index, layer.full_in, layer.full_out,
                       layer.bias.col_begin);
    return linear;
  }
  if (spec.type == LayerType::LayerNorm)
    return std::make_unique<LayerNormLayer>(layer.index, layer.out, allocator);
  if (spec.type == LayerType::Dropout)
    return std::make_unique<DropoutLayer>(layer.index, layer.out, spec.p, seed, allocator,
                                          layer.feature_offset);
  return make_activation_layer(spec.type, layer.index, layer.out, allocator);
}

}  // namespace

int64_t StageActivations::bytes() const {
  int64_t total = 0;
  for (const Tensor& t : inputs) total += t.bytes();
  for (const Tensor& t : output_grads) total += t.bytes();
  return total;
}

Sequential::Sequential(const ModelSpec& model, int begin, int end, uint64_t seed,
                       DeviceAllocator* allocator, TensorParallelSetup tensor_parallel)
    : begin_(begin) {
  const std::vector<LayerLayout> layout =
      stack_layout(model, begin, end,
                   {tensor_parallel.degree, tensor_parallel.shard, tensor_parallel.roles,
                    static_cast<bool>(tensor_parallel.all_reduce)});
  all_reduce_ = std::move(tensor_parallel.all_reduce);
  for (const LayerLayout& layer : layout) {
    layers_.push_back(build_layer(layer, seed, allocator));
    roles_.push_back(layer.role);
  }
}

Tensor Sequential::layer_forward(int k, const Tensor& x, const ForwardInfo& info) {
  Tensor y = layers_[k]->forward(x, info);
  if (roles_[k] == TensorParallelRole::RowParallel) {
    all_reduce_(y, begin_ + k, true);
    static_cast<LinearLayer&>(*layers_[k]).add_bias(y);
  }
  return y;
}

Tensor Sequential::layer_input_grad(int k, const Tensor& x, const Tensor& dy,
                                    const ForwardInfo& info) {
  Tensor dx = layers_[k]->backward_input(x, dy, info);
  if (roles_[k] == TensorParallelRole::ColumnParallel) all_reduce_(dx, begin_ + k, false);
  return dx;
}

Tensor Sequential::forward(Tensor input, const ForwardInfo& info, StageActivations& saved) {
  assert(input.cols() == input_features());
  input.retag(MemoryCategory::Activations);
  saved.info = info;
  saved.inputs.clear();
  saved.inputs.resize(layers_.size());
  saved.output_grads.clear();
  saved.output_grads.resize(layers_.size());
  saved.inputs[0] = std::move(input);
  return forward_keeping_inputs(saved);
}

Tensor Sequential::forward_keeping_inputs(StageActivations& saved) {
  const int last = layer_count() - 1;
  for (int k = 0; k < last; ++k)
    saved.inputs[k + 1] = layer_forward(k, saved.inputs[k], saved.info);
  return layer_forward(last, saved.inputs[last], saved.info);
}

Tensor Sequential::infer(const Tensor& input, const ForwardInfo& info) {
  assert(input.cols() == input_features());
  Tensor current = layer_forward(0, input, info);
  for (int k = 1; k < layer_count(); ++k) current = layer_forward(k, current, info);
  return current;
}

void Sequential::drop_activations(StageActivations& saved) const {
  for (size_t k = 1; k < saved.inputs.size(); ++k) saved.inputs[k].reset();
}

void Sequential::recompute(StageActivations& saved) {
  assert(saved.inputs.size() == layers_.size() && !saved.inputs[0].empty());
  forward_keeping_inputs(saved);  // the stage output was sent already; it is dropped here
}

Tensor Sequential::backward(Tensor output_grad, StageActivations& saved) {
  assert(saved.inputs.size() == layers_.size());
  Tensor grad = std::move(output_grad);
  for (int k = layer_count() - 1; k >= 0; --k) {
    Tensor input_grad;
    if (needs_input_grad(k)) input_grad = layer_input_grad(k, saved.inputs[k], grad, saved.info);
    layers_[k]->backward_weight(saved.inputs[k], grad);
    saved.inputs[k].reset();
    grad = std::move(input_grad);
  }
  saved.inputs.clear();
  saved.output_grads.clear();
  return grad;
}

Tensor Sequential::backward_input(Tensor output_grad, StageActivations& saved) {
  assert(saved.inputs.size() == layers_.size());
  Tensor grad = std::move(output_grad);
  for (int k = layer_count() - 1; k >= 0; --k) {
    Tensor input_grad;
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

void Sequential::backward_weight(StageActivations& saved) {
  assert(saved.inputs.size() == layers_.size() && saved.output_grads.size() == layers_.size());
  for (int k = layer_count() - 1; k >= 0; --k) {
    if (saved.output_grads[k].empty()) continue;
    layers_[k]->backward_weight(saved.inputs[k], saved.output_grads[k]);
    saved.inputs[k].reset();
    saved.output_grads[k].reset();
  }
  saved.inputs.clear();
  saved.output_grads.clear();
}

std::vector<Parameter> Sequential::parameters() {
  std::vector<Parameter> result;
  for (auto& layer : layers_) {
    const std::vector<Tensor*> values = layer->params();
    const std::vector<Tensor*> grads = layer->grads();
    assert(values.size() == grads.size());
    for (size_t i = 0; i < values.size(); ++i) result.push_back({values[i], grads[i]});
  }
  return result;
}

int64_t Sequential::parameter_count() const {
  int64_t count = 0;
  for (const auto& layer : layers_)
    for (Tensor* value : layer->params()) count += value->size();
  return count;
}

void Sequential::zero_grad() {
  for (auto& layer : layers_) layer->zero_grad();
}

}  // namespace pipelab
