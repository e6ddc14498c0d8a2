#include "gpu/executor/host_offload.h"

#include <stdexcept>
#include <utility>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/device/stream_order.h"

namespace pipelab::gpu {

HostOffload::~HostOffload() {
  try {
    drop();
  } catch (const std::exception&) {
    // A GPU that failed has no copies left to wait for.
  }
}

void HostOffload::copy_after_compute() { wait_for(device_.copy_on_device(), device_.compute_on_device()); }

int64_t HostOffload::offload(DeviceTensor& tensor) {
  if (tensor.empty()) return 0;
  const int64_t bytes = tensor.bytes();
  Parked parked{take_pinned(bytes), tensor.rows(), tensor.cols(), tensor.category()};
  PIPELAB_CUDA_CHECK(
      cudaMemcpyAsync(parked.pinned.data(), tensor.data(), bytes, cudaMemcpyDeviceToHost, device_.copy.get()));
  tensor.record_stream(device_.copy_on_device());  // the block outlives the copy
  tensor.reset();
  device_.allocator().count_host(bytes);
  parked_[&tensor] = std::move(parked);
  return bytes;
}

int64_t HostOffload::reload(DeviceTensor& tensor) {
  const auto found = parked_.find(&tensor);
  if (found == parked_.end()) return 0;
  Parked parked = std::move(found->second);
  parked_.erase(found);
  tensor = DeviceTensor::uninitialized_idle(parked.rows, parked.cols, &device_.allocator(), parked.category);
  tensor.record_stream(device_.copy_on_device());
  const int64_t bytes = tensor.bytes();
  PIPELAB_CUDA_CHECK(
      cudaMemcpyAsync(tensor.data(), parked.pinned.data(), bytes, cudaMemcpyHostToDevice, device_.copy.get()));
  device_.allocator().count_host(-bytes);
  Spare spare{std::move(parked.pinned), CudaEvent::pooled(device_.gpu)};
  spare.copied.record(device_.copy.get());
  spares_.push_back(std::move(spare));
  return bytes;
}

void HostOffload::mark_reloaded(const MicrobatchKey& key) {
  CudaEvent done = CudaEvent::pooled(device_.gpu);
  done.record(device_.copy.get());
  reloaded_[key] = std::move(done);
}

void HostOffload::compute_waits_for_reload(const MicrobatchKey& key) {
  const auto found = reloaded_.find(key);
  if (found == reloaded_.end()) return;
  found->second.make_wait(device_.compute_stream());
  reloaded_.erase(found);
}

PinnedBuffer HostOffload::take_pinned(int64_t bytes) {
  for (auto spare = spares_.begin(); spare != spares_.end(); ++spare) {
    if (spare->pinned.bytes() < bytes) continue;
    spare->copied.synchronize();  // queued long ago: normally done already
    PinnedBuffer pinned = std::move(spare->pinned);
    spares_.erase(spare);
    return pinned;
  }
  return PinnedBuffer(device_.gpu, bytes);
}

void HostOffload::drop() {
  if (parked_.empty() && spares_.empty() && reloaded_.empty()) return;
  // The pinned buffers may still be read or written by queued copies. Warn,
  // not throw: drop runs in destructors (the worker's, the executor's via
  // release_in_flight) after a failed run, and a GPU that faulted has no
  // copies left to wait for.
  {
    DeviceGuard guard(device_.gpu, DeviceGuard::NoThrow{});
    PIPELAB_CUDA_WARN(cudaStreamSynchronize(device_.copy.get()));
  }
  for (const auto& entry : parked_)
    device_.allocator().count_host(-entry.second.rows * entry.second.cols * static_cast<int64_t>(sizeof(float)));
  parked_.clear();
  spares_.clear();
  reloaded_.clear();
}

}  // namespace pipelab::gpu
