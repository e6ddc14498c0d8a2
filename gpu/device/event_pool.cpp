#include "gpu/device/event_pool.h"

#include <cassert>
#include <map>
#include <memory>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"

namespace pipelab::gpu {

EventPool::EventPool(Create create, Destroy destroy)
    : create_(std::move(create)), destroy_(std::move(destroy)) {}

EventPool::~EventPool() {
  assert(static_cast<int64_t>(idle_.size()) == created_ && "an event was not given back");
  for (cudaEvent_t event : idle_) destroy_(event);
}

EventPool& EventPool::of_gpu(int gpu) {
  static std::mutex mutex;
  static auto* pools = new std::map<int, std::unique_ptr<EventPool>>();  // never destroyed
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<EventPool>& pool = (*pools)[gpu];
  if (!pool)
    pool = std::make_unique<EventPool>(
        [gpu] {
          DeviceGuard guard(gpu);
          cudaEvent_t event = nullptr;
          PIPELAB_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
          return event;
        },
        [gpu](cudaEvent_t event) {
          DeviceGuard guard(gpu, DeviceGuard::NoThrow{});
          PIPELAB_CUDA_WARN(cudaEventDestroy(event));
        });
  return *pool;
}

cudaEvent_t EventPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      cudaEvent_t event = idle_.back();
      idle_.pop_back();
      return event;
    }
  }
  cudaEvent_t event = create_();  // outside the lock: a driver call
  std::lock_guard<std::mutex> lock(mutex_);
  ++created_;
  return event;
}

void EventPool::release(cudaEvent_t event) {
  assert(event);
  std::lock_guard<std::mutex> lock(mutex_);
  assert(static_cast<int64_t>(idle_.size()) < created_ && "released more events than made");
  idle_.push_back(event);
}

int64_t EventPool::created() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return created_;
}

int64_t EventPool::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(idle_.size());
}

}  // namespace pipelab::gpu
