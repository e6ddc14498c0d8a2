#include "gpu/device/cuda_handles.h"

#include <utility>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/device/event_pool.h"

namespace pipelab::gpu {

CudaStream::CudaStream(int gpu) : gpu_(gpu) {
  DeviceGuard guard(gpu_);
  PIPELAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaStream::~CudaStream() { reset(); }

CudaStream::CudaStream(CudaStream&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)), gpu_(other.gpu_) {}

CudaStream& CudaStream::operator=(CudaStream&& other) noexcept {
  if (this != &other) {
    reset();
    stream_ = std::exchange(other.stream_, nullptr);
    gpu_ = other.gpu_;
  }
  return *this;
}

void CudaStream::synchronize() const {
  DeviceGuard guard(gpu_);
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaStream::reset() noexcept {
  if (!stream_) return;
  DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
  PIPELAB_CUDA_WARN(cudaStreamSynchronize(stream_));
  PIPELAB_CUDA_WARN(cudaStreamDestroy(stream_));
  stream_ = nullptr;
}

CudaEvent::CudaEvent(int gpu) : gpu_(gpu) {
  DeviceGuard guard(gpu_);
  PIPELAB_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
}

CudaEvent CudaEvent::pooled(int gpu) {
  CudaEvent event;
  event.event_ = EventPool::of_gpu(gpu).acquire();
  event.gpu_ = gpu;
  event.pooled_ = true;
  return event;
}

CudaEvent::~CudaEvent() { reset(); }

CudaEvent::CudaEvent(CudaEvent&& other) noexcept
    : event_(std::exchange(other.event_, nullptr)),
      gpu_(other.gpu_),
      pooled_(std::exchange(other.pooled_, false)) {}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    reset();
    event_ = std::exchange(other.event_, nullptr);
    gpu_ = other.gpu_;
    pooled_ = std::exchange(other.pooled_, false);
  }
  return *this;
}

void CudaEvent::record(cudaStream_t stream) {
  DeviceGuard guard(gpu_);
  PIPELAB_CUDA_CHECK(cudaEventRecord(event_, stream));
}

void CudaEvent::make_wait(cudaStream_t stream) const {
  PIPELAB_CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0));
}

void CudaEvent::synchronize() const { PIPELAB_CUDA_CHECK(cudaEventSynchronize(event_)); }

void CudaEvent::reset() noexcept {
  if (!event_) return;
  if (pooled_) {
    EventPool::of_gpu(gpu_).release(event_);
  } else {
    DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
    PIPELAB_CUDA_WARN(cudaEventDestroy(event_));
  }
  event_ = nullptr;
  pooled_ = false;
}

}  // namespace pipelab::gpu
