#include "gpu/device/stream_order.h"

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/device/event_pool.h"

namespace pipelab::gpu {

void wait_for(StreamOnDevice waiter, StreamOnDevice producer) {
  if (waiter == producer) return;
  // An event is recorded on a stream of the device it was created on.
  EventPool& pool = EventPool::of_gpu(producer.device);
  const cudaEvent_t event = pool.acquire();
  try {
    {
      DeviceGuard guard(producer.device);
      PIPELAB_CUDA_CHECK(cudaEventRecord(event, producer.stream));
    }
    DeviceGuard guard(waiter.device);
    PIPELAB_CUDA_CHECK(cudaStreamWaitEvent(waiter.stream, event, 0));
  } catch (...) {
    pool.release(event);
    throw;
  }
  // The wait is issued: the event may be recorded again by its next user.
  pool.release(event);
}

}  // namespace pipelab::gpu
