// GpuLayer: one entry of a stage's layer stack on the CUDA backend: the
// contract of core/nn/basic_layer.h over DeviceTensors. Tensors a layer
// returns are counted as Activations on its context's allocator. All work is
// queued on the context's stream; the caller makes the context's GPU current.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/basic_layer.h"
#include "gpu/layers/device_context.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

class GpuLayer : public BasicLayer<DeviceTensor, DeviceContext*> {
 public:
  GpuLayer(LayerType type, int index, int64_t in_features, int64_t out_features,
           DeviceContext& context)
      : BasicLayer(type, index, in_features, out_features, &context) {}

  DeviceContext& context() const { return *context_ptr(); }

  // The weights this layer's linear products read (cublas_gemm.h's
  // linear_forward and linear_backward_input): under bf16-mixed each keeps a
  // bf16 copy that those GEMMs read, and its gradient's GEMMs read bf16
  // inputs (GpuSequential builds them so). Each is one of params(). None by
  // default.
  virtual std::vector<DeviceTensor*> gemm_weights() { return {}; }

 protected:
  // An uninitialised [rows, cols] tensor counted as Activations, for a kernel to fill.
  DeviceTensor make_activation(int64_t rows, int64_t cols) const {
    return DeviceTensor::uninitialized(rows, cols, &context().allocator(),
                                       MemoryCategory::Activations);
  }
};

}  // namespace pipelab::gpu
