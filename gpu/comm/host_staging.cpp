#include "gpu/comm/host_staging.h"

#include <cuda_runtime.h>

#include <cassert>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {

HostStaging::~HostStaging() {
  if (upload_pending_) PIPELAB_CUDA_WARN(cudaEventSynchronize(uploaded_.get()));
}

float* HostStaging::download(const DeviceTensor& tensor) {
  if (upload_pending_) {
    uploaded_.synchronize();  // the buffer is read by the last upload until then
    upload_pending_ = false;
  }
  if (buffer_.bytes() < tensor.bytes()) buffer_ = PinnedBuffer(gpu_, tensor.bytes());
  if (tensor.empty()) return buffer_.as<float>();
  DeviceGuard guard(tensor.device());
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(buffer_.data(), tensor.data(),
                                     static_cast<size_t>(tensor.bytes()), cudaMemcpyDeviceToHost,
                                     tensor.stream()));
  PIPELAB_CUDA_CHECK(cudaStreamSynchronize(tensor.stream()));
  return buffer_.as<float>();
}

void HostStaging::upload_to(DeviceTensor& tensor) {
  if (tensor.empty()) return;
  assert(buffer_.bytes() >= tensor.bytes());
  DeviceGuard guard(tensor.device());
  PIPELAB_CUDA_CHECK(cudaMemcpyAsync(tensor.data(), buffer_.data(),
                                     static_cast<size_t>(tensor.bytes()), cudaMemcpyHostToDevice,
                                     tensor.stream()));
  uploaded_.record(tensor.stream());
  upload_pending_ = true;
}

}  // namespace pipelab::gpu
