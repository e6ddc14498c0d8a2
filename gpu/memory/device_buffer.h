// DeviceBuffer: uninitialised device memory of some bytes, owned (RAII, move-
// only) and counted by a CachingAllocator under a MemoryCategory until it dies.
// DeviceTensor is a DeviceBuffer with a 2-D float shape; other element types
// (the int32 labels of a loss, per-row double sums) use a DeviceBuffer directly.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/memory/caching_allocator.h"
#include "gpu/device/stream_order.h"

namespace pipelab::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;  // empty: no storage
  // Throws std::invalid_argument for a negative size or a missing allocator,
  // GpuOutOfMemory when the GPU cannot hold it.
  DeviceBuffer(int64_t bytes, CachingAllocator* allocator, MemoryCategory category);
  // Memory no stream is using (CachingAllocator::allocate_idle), for a buffer
  // that another stream than the allocator's writes first; record every
  // stream that touches it, the allocator's included.
  struct Idle {};
  DeviceBuffer(int64_t bytes, CachingAllocator* allocator, MemoryCategory category, Idle);
  ~DeviceBuffer() { reset(); }

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* as() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* as() const {
    return static_cast<const T*>(data_);
  }
  int64_t bytes() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }
  MemoryCategory category() const { return category_; }
  CachingAllocator* allocator() const { return allocator_; }

  // Counts these bytes under another category from now on.
  void retag(MemoryCategory category);
  // Notes that work on `stream` (besides the allocator's stream) uses this
  // memory: when the buffer dies, its block is reused only after that work.
  void record_stream(StreamOnDevice stream);
  // Gives the memory back to the allocator now; the buffer becomes empty.
  void reset();

 private:
  void* data_ = nullptr;
  int64_t bytes_ = 0;
  CachingAllocator* allocator_ = nullptr;
  MemoryCategory category_ = MemoryCategory::Workspace;
  bool idle_ = false;                          // from allocate_idle: always released fenced
  std::vector<StreamOnDevice> other_streams_;  // recorded by record_stream
};

}  // namespace pipelab::gpu
