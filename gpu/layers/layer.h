// GpuLayer: one entry of a stage's layer stack on the CUDA backend, the twin of
// core/nn's Layer with the same contract: forward, and a backward split into
// the input gradient (BI) and the weight gradient (BW); no per-micro-batch
// state (backward is a function of the forward input x, dy and the
// ForwardInfo); weight gradients accumulate until zero_grad. Tensors a layer
// returns are counted as Activations on its context's allocator. All work is
// queued on the context's stream; the caller makes the context's GPU current.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/layer.h"
#include "gpu/device/device_context.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

class GpuLayer {
 public:
  GpuLayer(LayerType type, int index, int64_t in_features, int64_t out_features,
           DeviceContext& context)
      : type_(type),
        index_(index),
        in_features_(in_features),
        out_features_(out_features),
        context_(context) {}
  virtual ~GpuLayer() = default;
  GpuLayer(const GpuLayer&) = delete;
  GpuLayer& operator=(const GpuLayer&) = delete;

  LayerType type() const { return type_; }
  int index() const { return index_; }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  DeviceContext& context() const { return context_; }

  // y = f(x): x is [batch, in_features], y is [batch, out_features].
  virtual DeviceTensor forward(const DeviceTensor& x, const ForwardInfo& info) = 0;
  // dL/dx from dy = dL/dy, for the x and info of the forward.
  virtual DeviceTensor backward_input(const DeviceTensor& x, const DeviceTensor& dy,
                                      const ForwardInfo& info) = 0;
  // Adds dL/dW (and dL/db) into grads(). Layers without weights do nothing.
  virtual void backward_weight(const DeviceTensor& x, const DeviceTensor& dy) {
    (void)x;
    (void)dy;
  }
  DeviceTensor backward(const DeviceTensor& x, const DeviceTensor& dy, const ForwardInfo& info) {
    DeviceTensor dx = backward_input(x, dy, info);
    backward_weight(x, dy);
    return dx;
  }

  virtual std::vector<DeviceTensor*> params() { return {}; }
  virtual std::vector<DeviceTensor*> grads() { return {}; }
  bool has_params() { return !params().empty(); }
  void zero_grad() {
    for (DeviceTensor* grad : grads()) grad->set_zero();
  }

 protected:
  // An uninitialised [rows, cols] tensor counted as Activations, for a kernel to fill.
  DeviceTensor make_activation(int64_t rows, int64_t cols) const {
    return DeviceTensor::uninitialized(rows, cols, &context_.allocator(),
                                       MemoryCategory::Activations);
  }

 private:
  const LayerType type_;
  const int index_;
  const int64_t in_features_;
  const int64_t out_features_;
  DeviceContext& context_;
};

}  // namespace pipelab::gpu
