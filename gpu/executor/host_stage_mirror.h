// HostStageMirror: a host copy of one device stage (one tensor-parallel shard
// of it), built as a core/nn Sequential with the same layers and roles, so
// host code written for the CPU backend works on the GPU's weights:
//   - evaluation: Evaluator::copy_weights_from(mirror.stage(), tp, shard);
//   - async data parallelism: the ParameterServer pushes and pulls host
//     Parameters (mirror.parameters()).
// Host memory, not counted on any device (like the CPU backend's servers and
// evaluation model). The copies wait for the device stage's stream.
#pragma once

#include <vector>

#include "core/nn/sequential.h"
#include "gpu/layers/sequential.h"

namespace pipelab::gpu {

class HostStageMirror {
 public:
  // The host twin of `device_stage` (same model range, tensor-parallel degree,
  // shard and roles). Its forward is never run.
  HostStageMirror(const ModelSpec& model, uint64_t seed, GpuSequential& device_stage, int tp,
                  int shard, const std::vector<TensorParallelRole>& roles);

  Sequential& stage() { return host_; }
  std::vector<Parameter> parameters() { return host_.parameters(); }

  // Values (weights and biases), device to host.
  void copy_values_from_device();
  // Gradients, device to host.
  void copy_gradients_from_device();
  // Values, host to device (queued on the device stage's stream).
  void copy_values_to_device();

 private:
  GpuSequential& device_;
  Sequential host_;
};

}  // namespace pipelab::gpu
