// GpuSequential: a stage's layer stack on a CUDA device, StageStack
// (core/nn/stage_stack.h) over DeviceTensors and gpu/layers' layers: the same
// life cycle, tensor-parallel all-reduces, sequence parallelism's gathers and
// scatters, and checks as the CPU's Sequential, so the executor loop drives
// both the same way. Initial weights are generated
// on the host by core/nn/init.h, then copied to the device, so they equal the
// CPU's bit for bit for any split or shard.
//
// All work is queued on the context's stream. Public methods make the
// context's GPU current for their duration (DeviceStackMath::Scope).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/nn/stage_stack.h"
#include "gpu/layers/device_context.h"
#include "gpu/device/device_guard.h"
#include "gpu/layers/layer.h"
#include "gpu/layers/optimizer.h"

namespace pipelab::gpu {

// bf16-mixed: the weights the layer's GEMMs read keep a bf16 copy, counted as
// Weights (2 bytes per value, the simulator's precision.h), while their
// float32 values become the master copy, counted as OptimizerState as the
// simulator counts it; their gradients stay float32, summed from bf16
// products. Other parameters (biases, norm gains, embeddings) stay float32
// Weights. DeviceStackMath::build_layer does it on a bf16-mixed context.
void keep_bf16_copies(GpuLayer& layer);

struct DeviceStackMath {
  using Tensor = DeviceTensor;
  using Layer = GpuLayer;
  using Context = DeviceContext&;

  static std::unique_ptr<GpuLayer> build_layer(const LayerLayout& layer, uint64_t seed,
                                               DeviceContext& context);
  static void add_bias(GpuLayer& row_parallel_linear, DeviceTensor& y);
  // Sequence parallelism on [samples, positions * width] tensors, as
  // HostStackMath's (gpu/layers/sequence_split.h).
  static DeviceTensor gather_sequence(const DeviceTensor& local, const SequenceSlice& slice,
                                      DeviceContext& context,
                                      const std::function<void(DeviceTensor&)>& all_gather);
  static DeviceTensor scatter_sequence(const DeviceTensor& whole, const SequenceSlice& slice,
                                       DeviceContext& context,
                                       const std::function<void(DeviceTensor&)>& reduce_scatter);
  // Under bf16-mixed, a linear's or conv2d's input kept in bf16
  // (gpu/layers/kept_layer_input.h).
  static void keep_layer_input(GpuLayer& layer, bool stage_input, bool gathers_sequence,
                               DeviceTensor& input, std::unique_ptr<LayerState>& state);
  static bool holds_layer_input(const LayerState* state);
  static DeviceTensor restore_layer_input(const LayerState& state, DeviceContext& context);
  // The context's GPU is current while the stack works.
  struct Scope {
    explicit Scope(DeviceContext& context) : guard(context.gpu()) {}
    DeviceGuard guard;
  };
};

using GpuSequential = StageStack<DeviceStackMath>;
using GpuStageActivations = GpuSequential::Activations;
using GpuTensorParallelSetup = GpuSequential::TensorParallelSetup;
using GpuTensorParallelAllReduceFunction = BasicTensorParallelAllReduce<DeviceTensor>;

}  // namespace pipelab::gpu

namespace pipelab {
extern template class StageStack<gpu::DeviceStackMath>;
}  // namespace pipelab
