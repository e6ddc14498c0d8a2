// Sequential: a stage's layer stack on the CPU backend, StageStack
// (stage_stack.h) over host Tensors and core/nn's layers. The executor's life
// cycle of a micro-batch, the weight initialisation and the tensor-parallel
// all-reduces are StageStack's; this file only says how a host layer is built.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/nn/layer.h"
#include "core/nn/optimizer.h"
#include "core/nn/stage_stack.h"

namespace pipelab {

struct HostStackMath {
  using Tensor = pipelab::Tensor;
  using Layer = pipelab::Layer;
  using Context = DeviceAllocator*;  // may be nullptr: uncounted

  // One layer as its layout says; linears get their block of the full layer's
  // initial weights.
  static std::unique_ptr<Layer> build_layer(const LayerLayout& layer, uint64_t seed,
                                            DeviceAllocator* allocator);
  static void add_bias(Layer& row_parallel_linear, Tensor& y);
  // Sequence parallelism (sequence_split.h) on [samples, positions * width]
  // tensors: the whole sequence from this shard's slice, and this shard's
  // slice of the sum of the shards' whole partials.
  static Tensor gather_sequence(const Tensor& local, const SequenceSlice& slice,
                                DeviceAllocator* allocator,
                                const std::function<void(Tensor&)>& all_gather);
  static Tensor scatter_sequence(const Tensor& whole, const SequenceSlice& slice,
                                 DeviceAllocator* allocator,
                                 const std::function<void(Tensor&)>& reduce_scatter);
  // Nothing to make current on the host.
  struct Scope {
    explicit Scope(DeviceAllocator*) {}
  };
};

using Sequential = StageStack<HostStackMath>;
using StageActivations = Sequential::Activations;
using TensorParallelSetup = Sequential::TensorParallelSetup;
using TensorParallelAllReduceFunction = BasicTensorParallelAllReduce<Tensor>;
extern template class StageStack<HostStackMath>;

}  // namespace pipelab
