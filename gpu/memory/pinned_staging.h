// PinnedStaging: uploads of host data (a micro-batch's inputs) through a small
// ring of page-locked host buffers, so the copy is truly asynchronous. A
// cudaMemcpyAsync from ordinary (pageable) memory may wait for the stream's
// earlier work before it returns, which would stall the host thread behind
// its GPU at every upload and leave gaps between the ops it queues; from
// pinned memory it only queues a DMA. A slot is reused once the GPU has
// finished the copy queued from it (an event per slot), so the host may run
// up to kSlots uploads ahead.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "core/nn/tensor.h"
#include "gpu/device/cuda_handles.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

class PinnedStaging {
 public:
  static constexpr int kSlots = 4;

  explicit PinnedStaging(int gpu);  // allocates nothing until the first upload
  ~PinnedStaging();
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // A device copy of `host` on `allocator` (its stream), counted as `category`.
  DeviceTensor upload(const Tensor& host, CachingAllocator& allocator, MemoryCategory category);

 private:
  struct Slot {
    float* pinned = nullptr;
    int64_t capacity = 0;  // floats
    CudaEvent copied;      // recorded after the copy out of `pinned`
    bool used = false;
  };
  const int gpu_;
  std::array<Slot, kSlots> slots_;
  int next_ = 0;
};

}  // namespace pipelab::gpu
