// PinnedStaging: uploads of per-micro-batch host data (a stage's inputs, the
// loss's labels or targets) through a small ring of page-locked host buffers
// (pinned_buffer.h says why), so the host thread only queues a DMA. A slot is
// reused once the GPU has finished the copy queued from it (an event per
// slot), so the host may run up to kSlots uploads ahead.
//
// Give the slot size when constructing (microbatch_staging_bytes), so every
// buffer is pinned before the run starts; an upload larger than its slot
// re-pins that slot, which is slow.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <span>

#include "core/nn/tensor.h"
#include "gpu/device/cuda_handles.h"
#include "gpu/memory/device_buffer.h"
#include "gpu/memory/device_tensor.h"
#include "gpu/memory/pinned_buffer.h"

namespace pipelab::gpu {

// The slot size for a micro-batch of `rows` samples: its largest upload, the
// inputs (input_width floats a row), the labels (an int32 a row) or the
// targets (target_width floats a row).
int64_t microbatch_staging_bytes(int64_t rows, int64_t input_width, int64_t target_width);

class PinnedStaging {
 public:
  static constexpr int kSlots = 4;

  // Pins kSlots buffers of `slot_bytes` on `gpu` now (0: none until needed).
  explicit PinnedStaging(int gpu, int64_t slot_bytes = 0);
  ~PinnedStaging();  // waits for the copies still reading the buffers
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // A device copy of `host` on `allocator` (its stream), counted as `category`.
  DeviceTensor upload(const Tensor& host, CachingAllocator& allocator, MemoryCategory category);
  // A device copy of rows x cols floats (row-major) at `values`.
  DeviceTensor upload(const float* values, int64_t rows, int64_t cols, CachingAllocator& allocator,
                      MemoryCategory category);
  // A device copy of int32 values (labels) in a buffer counted as `category`.
  DeviceBuffer upload(std::span<const int32_t> values, CachingAllocator& allocator,
                      MemoryCategory category);

  int64_t slot_bytes() const;  // the smallest slot's size

 private:
  struct Slot {
    PinnedBuffer pinned;
    CudaEvent copied;  // recorded after the copy out of `pinned`
    bool used = false;
  };
  // Copies `bytes` at `source` to device memory `target` on `stream`, through
  // the next slot.
  void stage(const void* source, int64_t bytes, void* target, cudaStream_t stream);

  const int gpu_;
  std::array<Slot, kSlots> slots_;
  int next_ = 0;
};

}  // namespace pipelab::gpu
