// HostStageMirror: a host copy of one device stage (one tensor-parallel shard
// of it), built as a core/nn Sequential with the same layers and roles, so
// host code written for the CPU backend works on the GPU's weights:
//   - evaluation: Evaluator::copy_weights_from(mirror.stage(), tp, shard,
//     experts);
//   - async data parallelism: the ParameterServer pushes and pulls host
//     Parameters (mirror.parameters());
//   - optimizer offloading: the stage's update runs on the mirror
//     (DeviceWorker::host_optimizer), its state made on the mirror's tensors.
// Host memory, not counted on any device (like the CPU backend's servers and
// evaluation model), except what is made as MemoryCategory::Host on the
// mirror's tensors (the offloaded optimizer's state): that is counted as the
// GPU's Host bytes (`ledger`), as the cpu backend counts it on its device. Copies go through one
// pinned buffer holding the whole stage (whole even where ZeRO 3 holds slices), pinned at
// construction (so make every mirror before the run starts): device-to-host copies are all queued
// and then waited for once; host-to-device copies (an async data-parallel pull) are only queued,
// the buffer being reused once the GPU has read it.
#pragma once

#include <vector>

#include "core/nn/sequential.h"
#include "gpu/device/cuda_handles.h"
#include "core/nn/device_allocator.h"
#include "gpu/layers/sequential.h"
#include "gpu/memory/caching_allocator.h"
#include "gpu/memory/pinned_buffer.h"

namespace pipelab::gpu {

class HostStageMirror {
 public:
  // The host twin of `device_stage` (same model range, tensor-parallel degree,
  // shard and roles, same experts). Its forward is never run.
  HostStageMirror(const ModelSpec& model, uint64_t seed, GpuSequential& device_stage, int tp,
                  int shard, const std::vector<TensorParallelRole>& roles, ExpertShard experts,
                  CachingAllocator& ledger);

  Sequential& stage() { return host_; }
  std::vector<Parameter> parameters() { return host_.parameters(); }

  // Values (weights and biases) and buffers (batch norm's running
  // statistics, for evaluation), device to host; waits for the stage's stream.
  void copy_values_from_device();
  // Gradients, device to host; waits for the stage's stream.
  void copy_gradients_from_device();
  // Values (not the buffers: each replica keeps its own), host to device, queued on the device stage's stream (no wait,
  // unless the previous upload is still being read from the buffer).
  void copy_values_to_device();

 private:
  void download(bool gradients);

  GpuSequential& device_;
  // The allocator of the mirror's tensors: it forwards the changes of its
  // Host bytes to the GPU's ledger (declared before host_, which releases
  // into it).
  DeviceAllocator host_allocator_;
  int64_t counted_host_bytes_ = 0;  // forwarded so far (changed under host_allocator_'s lock)
  Sequential host_;
  PinnedBuffer pinned_;  // every parameter's floats, in parameter order
  CudaEvent uploaded_;   // recorded after the last host-to-device copy
  bool uploading_ = false;
};

}  // namespace pipelab::gpu
