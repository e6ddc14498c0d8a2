#include "gpu/memory/pinned_staging.h"

#include <algorithm>
#include <cstring>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {

int64_t microbatch_staging_bytes(int64_t rows, int64_t input_width, int64_t target_width) {
  static_assert(sizeof(int32_t) == sizeof(float));
  const int64_t widest = std::max<int64_t>({input_width, target_width, 1});
  return std::max<int64_t>(rows, 0) * widest * static_cast<int64_t>(sizeof(float));
}

PinnedStaging::PinnedStaging(int gpu, int64_t slot_bytes) : gpu_(gpu) {
  if (slot_bytes <= 0) return;
  for (Slot& slot : slots_) {
    slot.pinned = PinnedBuffer(gpu_, slot_bytes);
    slot.copied = CudaEvent(gpu_);
  }
}

PinnedStaging::~PinnedStaging() {
  for (Slot& slot : slots_)
    if (slot.used) PIPELAB_CUDA_WARN(cudaEventSynchronize(slot.copied.get()));
}

int64_t PinnedStaging::slot_bytes() const {
  int64_t smallest = slots_[0].pinned.bytes();
  for (const Slot& slot : slots_) smallest = std::min(smallest, slot.pinned.bytes());
  return smallest;
}

void PinnedStaging::stage(const void* source, int64_t bytes, void* target, cudaStream_t stream) {
  if (bytes == 0) return;
  Slot& slot = slots_[static_cast<size_t>(next_)];
  next_ = (next_ + 1) % kSlots;
  DeviceGuard guard(gpu_);
  if (slot.used) slot.copied.synchronize();  // the GPU is done reading this buffer
  if (slot.pinned.bytes() < bytes) slot.pinned = PinnedBuffer(gpu_, bytes);  // not reserved
  if (!slot.copied.get()) slot.copied = CudaEvent(gpu_);
  std::memcpy(slot.pinned.data(), source, static_cast<size_t>(bytes));
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(target, slot.pinned.data(), static_cast<size_t>(bytes),
                                     cudaMemcpyHostToDevice, stream));
  slot.copied.record(stream);
  slot.used = true;
}

DeviceTensor PinnedStaging::upload(const Tensor& host, CachingAllocator& allocator,
                                   MemoryCategory category) {
  return upload(host.data(), host.rows(), host.cols(), allocator, category);
}

DeviceTensor PinnedStaging::upload(const float* values, int64_t rows, int64_t cols,
                                   CachingAllocator& allocator, MemoryCategory category) {
  DeviceTensor tensor = DeviceTensor::uninitialized(rows, cols, &allocator, category);
  stage(values, tensor.bytes(), tensor.data(), allocator.stream());
  return tensor;
}

DeviceBuffer PinnedStaging::upload(std::span<const int32_t> values, CachingAllocator& allocator,
                                   MemoryCategory category) {
  DeviceBuffer buffer(static_cast<int64_t>(values.size_bytes()), &allocator, category);
  stage(values.data(), buffer.bytes(), buffer.data(), allocator.stream());
  return buffer;
}

}  // namespace pipelab::gpu
