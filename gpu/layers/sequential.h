// GpuSequential: the layers [begin, end) of a model as one pipeline stage (one
// tensor-parallel shard of it) holds them on a CUDA device: the twin of
// core/nn/sequential.h with the same inputs and life cycle, so an executor
// drives both the same way:
//   GpuStageActivations saved;                                 // per in-flight micro-batch
//   DeviceTensor y = stage.forward(std::move(x), info, saved);  // F
//   ... optionally stage.drop_activations(saved), later stage.recompute(saved)
//   DeviceTensor dx = stage.backward(std::move(dy), saved);     // B (fused)
//     or: dx = stage.backward_input(std::move(dy), saved);      // BI
//         ... stage.backward_weight(saved);                     // BW, later
// Initial weights are generated on the host by core/nn/init.h, then copied to
// the device, so they equal the CPU's bit for bit for any split or shard.
//
// All work is queued on the context's stream. Public methods make the
// context's GPU current for their duration.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/model/model_spec.h"
#include "core/nn/layer.h"
#include "core/plan/stage_profile.h"
#include "gpu/device/device_context.h"
#include "gpu/layers/layer.h"
#include "gpu/layers/optimizer.h"

namespace pipelab::gpu {

// Sums `tensor` over the tensor-parallel group in place (see
// TensorParallelAllReduceFunction in core/nn/sequential.h for when it is called).
using GpuTensorParallelAllReduceFunction =
    std::function<void(DeviceTensor& tensor, int layer, bool in_forward)>;

struct GpuTensorParallelSetup {
  int degree = 1;  // tp; 1 = no tensor parallelism
  int shard = 0;   // this shard, in [0, degree)
  // One role per layer of the whole model, from tensor_parallel_roles. Ignored
  // when degree == 1.
  std::vector<TensorParallelRole> roles;
  GpuTensorParallelAllReduceFunction all_reduce;  // required when degree > 1
};

// What one micro-batch's forward on a stage keeps for its backward.
struct GpuStageActivations {
  ForwardInfo info;
  std::vector<DeviceTensor> inputs;        // inputs[k]: input of the stage's k-th layer
  std::vector<DeviceTensor> output_grads;  // between BI and BW (layers with weights)

  int64_t bytes() const;
};

class GpuSequential {
 public:
  // Builds model layers [begin, end) on `context`. Throws std::invalid_argument
  // naming the field, as the CPU Sequential does (both check the model with
  // stack_layout, core/nn/stack_layout.h), when the model cannot be built.
  GpuSequential(const ModelSpec& model, int begin, int end, uint64_t seed, DeviceContext& context,
                GpuTensorParallelSetup tensor_parallel = {});

  int begin() const { return begin_; }
  int end() const { return begin_ + layer_count(); }
  int layer_count() const { return static_cast<int>(layers_.size()); }
  GpuLayer& layer(int k) { return *layers_[k]; }
  TensorParallelRole role(int k) const { return roles_[k]; }
  int64_t input_features() const { return layers_.front()->in_features(); }
  int64_t output_features() const { return layers_.back()->out_features(); }
  DeviceContext& context() const { return context_; }

  // F: `saved` takes over the stage input (retagged Activations) and keeps every
  // later layer's input.
  DeviceTensor forward(DeviceTensor input, const ForwardInfo& info, GpuStageActivations& saved);
  // Forward keeping nothing.
  DeviceTensor infer(const DeviceTensor& input, const ForwardInfo& info);

  void drop_activations(GpuStageActivations& saved) const;
  void recompute(GpuStageActivations& saved);

  // B: adds every weight gradient; returns dL/d(stage input), empty when begin == 0.
  DeviceTensor backward(DeviceTensor output_grad, GpuStageActivations& saved);
  // BI: returns dL/d(stage input) (empty when begin == 0); keeps what BW needs.
  DeviceTensor backward_input(DeviceTensor output_grad, GpuStageActivations& saved);
  // BW: adds the weight gradients of a micro-batch whose backward_input ran.
  void backward_weight(GpuStageActivations& saved);

  std::vector<GpuParameter> parameters();
  int64_t parameter_count() const;
  void zero_grad();

 private:
  DeviceTensor layer_forward(int k, const DeviceTensor& x, const ForwardInfo& info);
  DeviceTensor layer_input_grad(int k, const DeviceTensor& x, const DeviceTensor& dy,
                                const ForwardInfo& info);
  bool needs_input_grad(int k) const { return k > 0 || begin_ > 0; }
  DeviceTensor forward_keeping_inputs(GpuStageActivations& saved);

  const int begin_;
  DeviceContext& context_;
  std::vector<std::unique_ptr<GpuLayer>> layers_;
  std::vector<TensorParallelRole> roles_;
  GpuTensorParallelAllReduceFunction all_reduce_;
};

}  // namespace pipelab::gpu
