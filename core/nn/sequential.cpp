#include "core/nn/sequential.h"

#include "core/nn/activations.h"
#include "core/nn/dropout.h"
#include "core/nn/init.h"
#include "core/nn/layer_norm.h"
#include "core/nn/linear.h"

namespace pipelab {

std::unique_ptr<Layer> HostStackMath::build_layer(const LayerLayout& layer, uint64_t seed,
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

void HostStackMath::add_bias(Layer& row_parallel_linear, Tensor& y) {
  static_cast<LinearLayer&>(row_parallel_linear).add_bias(y);
}

template class StageStack<HostStackMath>;

}  // namespace pipelab
