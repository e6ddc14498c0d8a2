#include "gpu/layers/sequential.h"

#include "core/nn/init.h"
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

}  // namespace

std::unique_ptr<GpuLayer> DeviceStackMath::build_layer(const LayerLayout& layer, uint64_t seed,
                                                       DeviceContext& context) {
  const LayerSpec& spec = layer.spec;
  if (spec.type == LayerType::Linear) {
    // A row-parallel shard adds the bias once, after the all-reduce.
    auto linear = std::make_unique<GpuLinear>(layer.index, layer.in, layer.out, spec.bias,
                                              context,
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

void DeviceStackMath::add_bias(GpuLayer& row_parallel_linear, DeviceTensor& y) {
  static_cast<GpuLinear&>(row_parallel_linear).add_bias(y);
}

}  // namespace pipelab::gpu

namespace pipelab {
template class StageStack<gpu::DeviceStackMath>;
}  // namespace pipelab
