#include "gpu/device/stream_order.h"

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {

void wait_for(StreamOnDevice waiter, StreamOnDevice producer) {
  if (waiter == producer) return;
  cudaEvent_t event = nullptr;
  {
    // An event is recorded on a stream of the device it was created on.
    DeviceGuard guard(producer.device);
    PIPELAB_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    PIPELAB_CUDA_CHECK(cudaEventRecord(event, producer.stream));
  }
  {
    DeviceGuard guard(waiter.device);
    PIPELAB_CUDA_CHECK(cudaStreamWaitEvent(waiter.stream, event, 0));
  }
  // Destroying a recorded event is fine: CUDA releases it once it completes.
  PIPELAB_CUDA_CHECK(cudaEventDestroy(event));
}

}  // namespace pipelab::gpu
