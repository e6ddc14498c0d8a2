// HostStaging: one virtual device's pinned host buffer for the tensors that
// cross to another rank of a run over processes (cuda_backend.h): a message
// for a device elsewhere comes down into it before it travels as the CPU
// backend's messages do, and a collective over ranks runs the CPU backend's
// ring on it in place before the sum goes back up. Pinned, so the copies are
// DMA transfers; it grows to the largest tensor staged (re-pinned then, which
// is slow once and never again).
#pragma once

#include <cstdint>

#include "gpu/device/cuda_handles.h"
#include "gpu/memory/device_tensor.h"
#include "gpu/memory/pinned_buffer.h"

namespace pipelab::gpu {

class HostStaging {
 public:
  explicit HostStaging(int gpu) : gpu_(gpu), uploaded_(gpu) {}
  ~HostStaging();  // waits for an upload still reading the buffer
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // Copies `tensor` into the buffer once its stream has produced it, and
  // waits for the copy: the returned tensor.size() floats are valid (and may
  // be changed) until the next call.
  float* download(const DeviceTensor& tensor);
  // Queues the copy of the buffer's first tensor.size() floats into `tensor`
  // on its stream; the next download waits for it before reusing the buffer.
  void upload_to(DeviceTensor& tensor);

 private:
  const int gpu_;
  PinnedBuffer buffer_;
  CudaEvent uploaded_;  // after the last upload_to's copy
  bool upload_pending_ = false;
};

}  // namespace pipelab::gpu
