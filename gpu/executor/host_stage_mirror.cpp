#include "gpu/executor/host_stage_mirror.h"

#include <cassert>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {
namespace {

TensorParallelSetup host_setup(int tp, int shard, const std::vector<TensorParallelRole>& roles) {
  TensorParallelSetup setup;
  setup.degree = tp;
  setup.shard = shard;
  if (tp > 1) {
    setup.roles = roles;
    // The mirror only holds weights; its forward (which would all-reduce) never runs.
    setup.all_reduce = [](Tensor&, int, bool) { assert(false && "a host mirror never runs"); };
  }
  return setup;
}

// What the pinned buffer holds at most: the values and the buffers, counted
// on the host twin, whose tensors are always whole (ZeRO 3 builds the device
// stage's layers sliced and gathers them whole only to use or copy them).
int64_t staged_floats(Sequential& host) {
  int64_t floats = 0;
  for (const Parameter& parameter : host.parameters()) floats += parameter.value->size();
  for (const Tensor* buffer : host.buffers()) floats += buffer->size();
  return floats;
}

// The stage's GPU (every parameter lives on the stage's allocator).
int stage_gpu(const std::vector<GpuParameter>& parameters) {
  return parameters.empty() ? 0 : parameters.front().value->device();
}

}  // namespace

HostStageMirror::HostStageMirror(const ModelSpec& model, uint64_t seed, GpuSequential& device_stage,
                                 int tp, int shard, const std::vector<TensorParallelRole>& roles,
                                 ExpertShard experts, CachingAllocator& ledger)
    : device_(device_stage),
      host_(model, device_stage.begin(), device_stage.end(), seed, &host_allocator_,
            host_setup(tp, shard, roles), /*selective_recompute=*/false, experts) {
  assert(host_.parameters().size() == device_.parameters().size());
  // The mirror's own tensors are weights and gradients; only Host bytes
  // (made later, by the offloaded optimizer) go to the GPU's ledger.
  host_allocator_.set_listener([this, &ledger](const MemoryBytes& held) {
    const int64_t host = held[static_cast<size_t>(MemoryCategory::Host)];
    if (host == counted_host_bytes_) return;
    ledger.count_host(host - counted_host_bytes_);
    counted_host_bytes_ = host;
  });
  const std::vector<GpuParameter> parameters = device_.parameters();
  const int gpu = stage_gpu(parameters);
  pinned_ = PinnedBuffer(gpu, staged_floats(host_) * static_cast<int64_t>(sizeof(float)));
  if (pinned_.bytes() > 0) uploaded_ = CudaEvent(gpu);
}

void HostStageMirror::download(bool gradients) {
  // The tensors to copy, in matching order: gradients, or values and the
  // buffers (batch norm's running statistics, which evaluation reads).
  std::vector<const DeviceTensor*> from;
  std::vector<Tensor*> to;
  for (const GpuParameter& parameter : device_.parameters())
    from.push_back(gradients ? parameter.grad : parameter.value);
  for (const Parameter& parameter : host_.parameters())
    to.push_back(gradients ? parameter.grad : parameter.value);
  if (!gradients) {
    for (const DeviceTensor* buffer : device_.buffers()) from.push_back(buffer);
    for (Tensor* buffer : host_.buffers()) to.push_back(buffer);
  }
  assert(from.size() == to.size());
  if (from.empty()) return;
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i]->size() != to[i]->size())
      throw std::logic_error("copying a stage to the host: a device tensor of " +
                             std::to_string(from[i]->size()) + " floats for a host one of " +
                             std::to_string(to[i]->size()) +
                             " (ZeRO 3's weights are copied only while gathered whole)");
  DeviceGuard guard(from.front()->device());
  const cudaStream_t stream = from.front()->stream();
  // Queued after any upload from the buffer on the same stream, so it cannot
  // overwrite values the GPU has yet to read.
  float* staged = pinned_.as<float>();
  for (const DeviceTensor* tensor : from) {
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(staged, tensor->data(), static_cast<size_t>(tensor->bytes()),
                                       cudaMemcpyDeviceToHost, stream));
    staged += tensor->size();
  }
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(stream));  // one wait for the whole stage
  uploading_ = false;
  staged = pinned_.as<float>();
  for (Tensor* tensor : to) {
    std::memcpy(tensor->data(), staged, static_cast<size_t>(tensor->size()) * sizeof(float));
    staged += tensor->size();
  }
}

void HostStageMirror::copy_values_from_device() { download(false); }

void HostStageMirror::copy_gradients_from_device() { download(true); }

void HostStageMirror::copy_values_to_device() {
  const std::vector<GpuParameter> to = device_.parameters();
  const std::vector<Parameter> from = host_.parameters();
  if (pinned_.bytes() == 0) return;
  DeviceGuard guard(stage_gpu(to));
  const cudaStream_t stream = to.front().value->stream();
  if (uploading_) uploaded_.synchronize();  // the GPU is done reading the buffer
  float* staged = pinned_.as<float>();
  for (size_t i = 0; i < to.size(); ++i) {
    assert(from[i].value->size() == to[i].value->size());
    std::memcpy(staged, from[i].value->data(), static_cast<size_t>(to[i].value->bytes()));
    PIPELAB_CUDA_CHECK(cudaMemcpyAsync(to[i].value->data(), staged,
                                       static_cast<size_t>(to[i].value->bytes()),
                                       cudaMemcpyHostToDevice, stream));
    staged += to[i].value->size();
  }
  uploaded_.record(stream);
  uploading_ = true;
}

}  // namespace pipelab::gpu
