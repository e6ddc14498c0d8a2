// Layer: one entry of a stage's layer stack, with forward and a backward split
// into the input gradient (BI) and the weight gradient (BW) for zero-bubble
// schedules.
//
// A layer keeps no per-micro-batch state: its backward is a function of its
// forward input x, the gradient dy of its output and the ForwardInfo. So the
// stage keeps each layer's input per in-flight micro-batch (StageActivations in
// sequential.h) and nothing else; dropping those inputs and re-running forward
// recomputes them exactly (dropout's mask is a function of ForwardInfo).
//
// Gradients accumulate: backward_weight adds into the gradient tensors, so the
// micro-batches of a step sum up; zero_grad clears them. Tensors a layer returns
// are counted as Activations on its allocator.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/tensor.h"

namespace pipelab {

// Which micro-batch a forward (or its backward) is for.
struct ForwardInfo {
  int step = 0;              // training step: part of dropout's key
  int64_t first_sample = 0;  // index of row 0 within the step's whole (global) batch
  bool training = true;      // false (evaluation): dropout passes x through
};

class Layer {
 public:
  // `index` is the layer's position in the whole model (keys its random numbers);
  // widths are this layer's (this shard's, under tensor parallelism).
  Layer(LayerType type, int index, int64_t in_features, int64_t out_features,
        DeviceAllocator* allocator)
      : type_(type),
        index_(index),
        in_features_(in_features),
        out_features_(out_features),
        allocator_(allocator) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  LayerType type() const { return type_; }
  int index() const { return index_; }
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  DeviceAllocator* allocator() const { return allocator_; }

  // y = f(x): x is [batch, in_features], y is [batch, out_features].
  virtual Tensor forward(const Tensor& x, const ForwardInfo& info) = 0;
  // dL/dx [batch, in_features] from dy = dL/dy, for the x and info of the forward.
  virtual Tensor backward_input(const Tensor& x, const Tensor& dy, const ForwardInfo& info) = 0;
  // Adds dL/dW (and dL/db) for this micro-batch into grads(). Layers without
  // weights do nothing.
  virtual void backward_weight(const Tensor& x, const Tensor& dy) {
    (void)x;
    (void)dy;
  }
  // Fused backward: backward_input then backward_weight.
  Tensor backward(const Tensor& x, const Tensor& dy, const ForwardInfo& info) {
    Tensor dx = backward_input(x, dy, info);
    backward_weight(x, dy);
    return dx;
  }

  // Trainable tensors and their gradients, in matching order (empty if none).
  virtual std::vector<Tensor*> params() { return {}; }
  virtual std::vector<Tensor*> grads() { return {}; }
  bool has_params() { return !params().empty(); }
  void zero_grad() {
    for (Tensor* grad : grads()) grad->set_zero();
  }

 protected:
  // A [rows, cols] tensor counted as Activations.
  Tensor make_activation(int64_t rows, int64_t cols) const {
    return Tensor(rows, cols, allocator_, MemoryCategory::Activations);
  }

 private:
  const LayerType type_;
  const int index_;
  const int64_t in_features_;
  const int64_t out_features_;
  DeviceAllocator* const allocator_;
};

}  // namespace pipelab
