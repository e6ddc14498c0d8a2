#include "gpu/memory/pinned_staging.h"

#include <cstring>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {

PinnedStaging::PinnedStaging(int gpu) : gpu_(gpu) {}

PinnedStaging::~PinnedStaging() {
  DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
  for (Slot& slot : slots_) {
    if (slot.used) PIPELAB_CUDA_WARN(cudaEventSynchronize(slot.copied.get()));
    if (slot.pinned) PIPELAB_CUDA_WARN(cudaFreeHost(slot.pinned));
  }
}

DeviceTensor PinnedStaging::upload(const Tensor& host, CachingAllocator& allocator,
                                   MemoryCategory category) {
  DeviceTensor tensor = DeviceTensor::uninitialized(host.rows(), host.cols(), &allocator, category);
  if (host.empty()) return tensor;
  Slot& slot = slots_[static_cast<size_t>(next_)];
  next_ = (next_ + 1) % kSlots;
  DeviceGuard guard(gpu_);
  if (slot.used) slot.copied.synchronize();  // the GPU is done reading this buffer
  if (slot.capacity < host.size()) {
    if (slot.pinned) PIPELAB_CUDA_CHECK(cudaFreeHost(slot.pinned));
    slot.pinned = nullptr;
    PIPELAB_CUDA_CHECK(
        cudaMallocHost(reinterpret_cast<void**>(&slot.pinned), static_cast<size_t>(host.bytes())));
    slot.capacity = host.size();
  }
  if (!slot.copied.get()) slot.copied = CudaEvent(gpu_);
  std::memcpy(slot.pinned, host.data(), static_cast<size_t>(host.bytes()));
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(tensor.data(), slot.pinned, static_cast<size_t>(host.bytes()),
                                     cudaMemcpyHostToDevice, allocator.stream()));
  slot.copied.record(allocator.stream());
  slot.used = true;
  return tensor;
}

}  // namespace pipelab::gpu
