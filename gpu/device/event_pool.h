// EventPool: reusable CUDA events (for ordering, no timing) of one GPU.
//
// Cross-stream waits (stream_order.h), fenced frees (caching_allocator.h) and
// messages (message_routes.h) each need an event for a moment; creating and
// destroying one every time costs two driver calls on the per-op path. The
// pool hands back events it made before. An event may return to the pool as
// soon as every cudaStreamWaitEvent on it has been issued (a wait captures
// the event's last record when it is issued; recording it again later does
// not change earlier waits), or, when the host polls it, once it completed.
//
// The bookkeeping is host code; how events are made and destroyed is a pair
// of functions, so host tests run it with fake handles. Thread-safe.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace pipelab::gpu {

class EventPool {
 public:
  using Create = std::function<cudaEvent_t()>;
  using Destroy = std::function<void(cudaEvent_t)>;

  EventPool(Create create, Destroy destroy);
  // Destroys the idle events; every event handed out must be back.
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // The pool of `gpu` (events made with cudaEventDisableTiming there). Made
  // on first use and never destroyed: CUDA may be unloaded before static
  // destructors run, and the driver frees the events with the context.
  static EventPool& of_gpu(int gpu);

  // An idle event, or a new one (throws CudaError when it cannot be made).
  cudaEvent_t acquire();
  // Gives an event from acquire() back for reuse (see above for when).
  void release(cudaEvent_t event);

  int64_t created() const;  // events made so far
  int64_t idle() const;     // in the pool now
  int64_t in_use() const { return created() - idle(); }

 private:
  const Create create_;
  const Destroy destroy_;
  mutable std::mutex mutex_;
  std::vector<cudaEvent_t> idle_;
  int64_t created_ = 0;
};

}  // namespace pipelab::gpu
