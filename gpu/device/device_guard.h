// DeviceGuard: makes a GPU current for a scope and restores the previous one.
// CUDA's current device is per host thread; allocation, memsets and kernel
// launches go to it, so code that may be called from any thread sets it first.
#pragma once

#include <cuda_runtime.h>

#include "gpu/device/cuda_check.h"

namespace pipelab::gpu {

class DeviceGuard {
 public:
  // Throws CudaError when the device cannot be made current.
  explicit DeviceGuard(int device) {
    PIPELAB_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) PIPELAB_CUDA_CHECK(cudaSetDevice(device));
    switched_ = previous_ != device;
  }
  // For destructors: reports a failure to stderr instead of throwing.
  struct NoThrow {};
  DeviceGuard(int device, NoThrow) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      PIPELAB_CUDA_WARN(cudaSetDevice(device));
      return;
    }
    if (previous_ != device) {
      PIPELAB_CUDA_WARN(cudaSetDevice(device));
      switched_ = true;
    }
  }
  ~DeviceGuard() {
    if (switched_) PIPELAB_CUDA_WARN(cudaSetDevice(previous_));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace pipelab::gpu
