// HostOffload: one virtual device's activations parked in pinned host memory
// (parallel.offload = activations), the CUDA side of the executor loop's
// OFFLOAD and RELOAD ops. Copies run on the device's copy stream (a copy
// engine beside the compute), ordered against the compute stream with events:
//   OFFLOAD  the copy stream waits for the compute stream's work so far (the
//            forward that wrote the tensors), then copies each tensor to a
//            pinned buffer; the device block is released fenced, reused only
//            once the copy has read it;
//   RELOAD   fresh idle device memory, filled from the pinned buffer on the
//            copy stream; an event after the copies is kept for the
//            micro-batch, and its B/BI's compute waits on it, so the copy
//            overlaps whatever runs in between.
// Pinned buffers are reused once their reload copy has completed (pinning is
// slow). The allocator counts parked bytes under Host from the offload to the
// reload.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "gpu/device/cuda_handles.h"
#include "gpu/comm/virtual_device.h"
#include "gpu/memory/device_tensor.h"
#include "gpu/memory/pinned_buffer.h"

namespace pipelab::gpu {

class HostOffload {
 public:
  // (chunk, step, micro-batch): whose activations a reload brought back.
  using MicrobatchKey = std::array<int, 3>;

  explicit HostOffload(VirtualDevice& device) : device_(device) {}
  ~HostOffload();  // drop()
  HostOffload(const HostOffload&) = delete;
  HostOffload& operator=(const HostOffload&) = delete;

  // Work queued on the copy stream from now on follows the compute stream's.
  void copy_after_compute();
  // Queues `tensor`'s copy to pinned memory and empties the tensor; returns
  // its bytes (0 for an empty slot).
  int64_t offload(DeviceTensor& tensor);
  // Queues the copy back into `tensor` (the slot offload emptied); returns its
  // bytes (0 for a slot that was not offloaded).
  int64_t reload(DeviceTensor& tensor);
  // After a RELOAD's copies: the micro-batch's backward will wait for them.
  void mark_reloaded(const MicrobatchKey& key);
  // Before a B or BI: the compute stream waits for its micro-batch's reload, if any.
  void compute_waits_for_reload(const MicrobatchKey& key);
  // Forgets whatever is parked (after a stop), once the copies are done.
  // A failed wait is reported on stderr, not thrown: this runs in
  // destructors after a failed run.
  void drop();

 private:
  struct Parked {
    PinnedBuffer pinned;
    int64_t rows = 0;
    int64_t cols = 0;
    MemoryCategory category = MemoryCategory::Activations;
  };
  struct Spare {
    PinnedBuffer pinned;
    CudaEvent copied;  // the reload copy out of it
  };
  PinnedBuffer take_pinned(int64_t bytes);

  VirtualDevice& device_;
  std::map<const DeviceTensor*, Parked> parked_;  // by the slot the tensor left
  std::vector<Spare> spares_;
  std::map<MicrobatchKey, CudaEvent> reloaded_;
};

}  // namespace pipelab::gpu
