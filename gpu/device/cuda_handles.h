// Owned CUDA streams and events (RAII, move-only). Each is created on the GPU
// given (made current for the call) and destroyed with errors reported, not
// thrown. The CUDA executor's virtual devices own their communication stream
// and their cross-stream events through these.
#pragma once

#include <cuda_runtime.h>

namespace pipelab::gpu {

class CudaStream {
 public:
  CudaStream() = default;
  // A non-blocking stream on `gpu` (no implicit order with the legacy stream).
  explicit CudaStream(int gpu);
  ~CudaStream();
  CudaStream(CudaStream&& other) noexcept;
  CudaStream& operator=(CudaStream&& other) noexcept;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const { return stream_; }
  int gpu() const { return gpu_; }
  void synchronize() const;

 private:
  void reset() noexcept;
  cudaStream_t stream_ = nullptr;
  int gpu_ = 0;
};

// An event for ordering only (no timing): record() on one stream, then
// make_wait() another, or wait on the host.
class CudaEvent {
 public:
  CudaEvent() = default;
  // A new event of its own on `gpu`.
  explicit CudaEvent(int gpu);
  // An event from `gpu`'s EventPool, given back when this dies: for
  // short-lived events (a message's arrival). Give it up only once every
  // wait on it was issued and no host call will read it any more.
  static CudaEvent pooled(int gpu);
  ~CudaEvent();
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const { return event_; }
  int gpu() const { return gpu_; }
  // Captures the work queued on `stream` (of this event's GPU) so far.
  void record(cudaStream_t stream);
  // Work queued on `stream` (of any GPU) after this call waits for the
  // captured work. No host wait.
  void make_wait(cudaStream_t stream) const;
  void synchronize() const;

 private:
  void reset() noexcept;
  cudaEvent_t event_ = nullptr;
  int gpu_ = 0;
  bool pooled_ = false;
};

}  // namespace pipelab::gpu
