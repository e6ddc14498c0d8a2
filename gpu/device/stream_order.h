// Ordering work across CUDA streams (of one GPU or of two): after wait_for,
// work queued on the waiter stream starts only after everything queued on the
// producer stream so far has finished. Used where memory crosses streams:
// copies between devices' allocators, same-GPU all-reduces.
#pragma once

#include <cuda_runtime.h>

namespace pipelab::gpu {

// A stream and the GPU it belongs to (stream 0 means a different stream on each GPU).
struct StreamOnDevice {
  cudaStream_t stream = nullptr;
  int device = 0;
  bool operator==(const StreamOnDevice&) const = default;
};

// No-op when both are the same stream. Records an event from the producer
// GPU's EventPool, which takes it back once the wait is issued.
void wait_for(StreamOnDevice waiter, StreamOnDevice producer);

}  // namespace pipelab::gpu
