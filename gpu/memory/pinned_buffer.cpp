#include "gpu/memory/pinned_buffer.h"

#include <cuda_runtime.h>

#include <utility>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {

PinnedBuffer::PinnedBuffer(int gpu, int64_t bytes) : bytes_(bytes), gpu_(gpu) {
  if (bytes_ <= 0) {
    bytes_ = 0;
    return;
  }
  DeviceGuard guard(gpu_);
  PIPELAB_CUDA_CHECK(cudaMallocHost(&data_, static_cast<size_t>(bytes_)));
}

PinnedBuffer::~PinnedBuffer() { reset(); }

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      gpu_(other.gpu_) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    gpu_ = other.gpu_;
  }
  return *this;
}

void PinnedBuffer::reset() noexcept {
  if (!data_) return;
  DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
  PIPELAB_CUDA_WARN(cudaFreeHost(data_));
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace pipelab::gpu
