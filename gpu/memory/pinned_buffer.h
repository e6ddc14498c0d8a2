// PinnedBuffer: page-locked host memory (cudaMallocHost), owned, move-only.
// A cudaMemcpyAsync between the device and ordinary (pageable) host memory
// goes through a driver staging buffer and may not return before the
// stream's earlier work has run, which stalls the host thread behind its GPU;
// from or to pinned memory it only queues a DMA. Pinning is slow (it maps
// and locks pages), so pin before a run starts, not in its first steps.
#pragma once

#include <cstdint>

namespace pipelab::gpu {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;  // empty: no memory, no CUDA call
  // `bytes` of pinned memory for copies with GPU `gpu` (throws CudaError).
  PinnedBuffer(int gpu, int64_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  int64_t bytes() const { return bytes_; }

 private:
  void reset() noexcept;
  void* data_ = nullptr;
  int64_t bytes_ = 0;
  int gpu_ = 0;
};

}  // namespace pipelab::gpu
