// Layer: one entry of a stage's layer stack on the CPU backend: the contract
// of basic_layer.h over host Tensors. Tensors a layer returns are counted as
// Activations on its allocator.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/basic_layer.h"
#include "core/nn/tensor.h"

namespace pipelab {

class Layer : public BasicLayer<Tensor, DeviceAllocator*> {
 public:
  using BasicLayer::BasicLayer;

  DeviceAllocator* allocator() const { return context_ptr(); }

 protected:
  // A [rows, cols] tensor counted as Activations.
  Tensor make_activation(int64_t rows, int64_t cols) const {
    return Tensor(rows, cols, allocator(), MemoryCategory::Activations);
  }
};

}  // namespace pipelab
