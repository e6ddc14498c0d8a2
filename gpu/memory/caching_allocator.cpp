#include "gpu/memory/caching_allocator.h"

#include <cassert>

#include "gpu/device/cuda_check.h"
#include "gpu/device/device_guard.h"
#include "gpu/device/event_pool.h"
#include "gpu/memory/allocator_registry.h"
#include "gpu/memory/out_of_memory.h"

namespace pipelab::gpu {
namespace {

// cudaMalloc's out-of-memory error is not sticky, but it stays the thread's
// last error; clear it so a later launch check does not report it. Any other
// pending error is real and is thrown.
void clear_out_of_memory_error() {
  const cudaError_t last = cudaGetLastError();
  if (last != cudaErrorMemoryAllocation) PIPELAB_CUDA_CHECK(last);
}

// Whether `event` has completed, without waiting.
bool event_done(cudaEvent_t event) {
  const cudaError_t status = cudaEventQuery(event);
  if (status == cudaErrorNotReady) {
    // An answer, not a failure: do not leave it as the thread's last error.
    const cudaError_t last = cudaGetLastError();
    if (last != cudaSuccess && last != cudaErrorNotReady) PIPELAB_CUDA_CHECK(last);
    return false;
  }
  PIPELAB_CUDA_CHECK(status);
  return true;
}

}  // namespace

CachingAllocator::CachingAllocator(int gpu, cudaStream_t stream) : gpu_(gpu), stream_(stream) {
  AllocatorRegistry::instance().add(this);
}

CachingAllocator::~CachingAllocator() {
  AllocatorRegistry::instance().remove(this);  // first: no one empties us from here on
  assert(ledger_.current_total() == 0 && "a device tensor outlived its allocator");
  std::lock_guard<std::mutex> lock(mutex_);
  if (pool_.cached_blocks() == 0 && idle_pool_.cached_blocks() == 0 && fenced_.empty()) return;
  DeviceGuard guard(gpu_, DeviceGuard::NoThrow{});
  for (FencedBlock& block : fenced_) {
    for (const Fence& fence : block.fences) {
      PIPELAB_CUDA_WARN(cudaEventSynchronize(fence.event));
      EventPool::of_gpu(fence.gpu).release(fence.event);
    }
    PIPELAB_CUDA_WARN(cudaFree(block.data));
  }
  fenced_.clear();
  for (const BlockPool::Block& block : pool_.take_all()) PIPELAB_CUDA_WARN(cudaFree(block.data));
  for (const BlockPool::Block& block : idle_pool_.take_all())
    PIPELAB_CUDA_WARN(cudaFree(block.data));
}

void* CachingAllocator::cuda_malloc(std::unique_lock<std::mutex>& lock, int64_t block_bytes,
                                    int64_t bytes, MemoryCategory category) {
  void* data = nullptr;
  DeviceGuard guard(gpu_);
  cudaError_t status = cudaMalloc(&data, static_cast<size_t>(block_bytes));
  if (status == cudaErrorMemoryAllocation) {
    // Give back what every virtual device on this GPU caches (ours included)
    // and try once more. Not under our lock: another allocator emptying the
    // caches may be waiting for it.
    clear_out_of_memory_error();
    lock.unlock();
    AllocatorRegistry::instance().empty_caches(gpu_);
    lock.lock();
    status = cudaMalloc(&data, static_cast<size_t>(block_bytes));
  }
  if (status == cudaErrorMemoryAllocation) {
    clear_out_of_memory_error();
    size_t free_bytes = 0, total_bytes = 0;
    PIPELAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    OutOfMemoryReport report;
    report.gpu = gpu_;
    report.asked_bytes = bytes;
    report.category = category;
    report.free_bytes = static_cast<int64_t>(free_bytes);
    report.counted_bytes = ledger_.current_total();
    report.cached_bytes = cached_bytes_locked();
    lock.unlock();  // usage() takes every allocator's lock, ours included
    report.gpu_usage = AllocatorRegistry::instance().usage(gpu_);
    throw GpuOutOfMemory(report);
  }
  PIPELAB_CUDA_CHECK(status);
  reserved_bytes_ += block_bytes;
  if (reserved_bytes_ > peak_reserved_bytes_) peak_reserved_bytes_ = reserved_bytes_;
  return data;
}

void* CachingAllocator::allocate(int64_t bytes, MemoryCategory category) {
  const int64_t block_bytes = block_size_for(bytes);
  if (block_bytes == 0) return nullptr;
  std::unique_lock<std::mutex> lock(mutex_);
  void* data = pool_.take(block_bytes);
  if (!data) {
    // An idle block is safe for stream() too.
    collect_fenced_locked();
    data = idle_pool_.take(block_bytes);
  }
  if (!data) data = cuda_malloc(lock, block_bytes, bytes, category);
  ledger_.add(category, bytes);
  return data;
}

void* CachingAllocator::allocate_idle(int64_t bytes, MemoryCategory category) {
  const int64_t block_bytes = block_size_for(bytes);
  if (block_bytes == 0) return nullptr;
  std::unique_lock<std::mutex> lock(mutex_);
  collect_fenced_locked();
  void* data = idle_pool_.take(block_bytes);
  if (!data) data = cuda_malloc(lock, block_bytes, bytes, category);
  ledger_.add(category, bytes);
  return data;
}

void CachingAllocator::release(void* data, int64_t bytes, MemoryCategory category) {
  if (!data) return;
  std::lock_guard<std::mutex> lock(mutex_);
  ledger_.remove(category, bytes);
  pool_.put(data, block_size_for(bytes));
}

void CachingAllocator::release_fenced(void* data, int64_t bytes, MemoryCategory category,
                                      std::span<const StreamOnDevice> streams) {
  if (!data) return;
  FencedBlock block;
  block.data = data;
  block.block_bytes = block_size_for(bytes);
  auto record_fence = [&](StreamOnDevice stream) {
    EventPool& pool = EventPool::of_gpu(stream.device);
    const Fence fence{pool.acquire(), stream.device};
    block.fences.push_back(fence);
    DeviceGuard guard(stream.device);
    PIPELAB_CUDA_CHECK(cudaEventRecord(fence.event, stream.stream));
  };
  // This runs in destructors (DeviceBuffer::reset), also while the exception
  // of a failed CUDA call unwinds a worker's stack: it must not throw. A GPU
  // that cannot record the fences has failed (its errors are sticky): the
  // block is then never reused, and the failure goes to stderr; the worker
  // reports the run's error from the call that failed first.
  try {
    record_fence({stream_, gpu_});
    for (const StreamOnDevice& stream : streams)
      if (!(stream == StreamOnDevice{stream_, gpu_})) record_fence(stream);
  } catch (const CudaError& error) {
    warn_cuda_error("fencing a freed block", error.what(), __FILE__, __LINE__);
    for (const Fence& fence : block.fences) EventPool::of_gpu(fence.gpu).release(fence.event);
    std::lock_guard<std::mutex> lock(mutex_);
    ledger_.remove(category, bytes);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ledger_.remove(category, bytes);
  fenced_bytes_ += block.block_bytes;
  fenced_.push_back(std::move(block));
  try {
    collect_fenced_locked();
  } catch (const CudaError&) {
    // As above: the next allocation, which may throw, collects them.
  }
}

void CachingAllocator::collect_fenced_locked() {
  for (size_t i = 0; i < fenced_.size();) {
    FencedBlock& block = fenced_[i];
    bool done = true;
    for (const Fence& fence : block.fences) done = done && event_done(fence.event);
    if (!done) {
      ++i;
      continue;
    }
    for (const Fence& fence : block.fences) EventPool::of_gpu(fence.gpu).release(fence.event);
    idle_pool_.put(block.data, block.block_bytes);
    fenced_bytes_ -= block.block_bytes;
    fenced_[i] = std::move(fenced_.back());
    fenced_.pop_back();
  }
}

void CachingAllocator::wait_for_fenced_locked() {
  for (FencedBlock& block : fenced_)
    for (const Fence& fence : block.fences) PIPELAB_CUDA_CHECK(cudaEventSynchronize(fence.event));
  collect_fenced_locked();
  assert(fenced_.empty());
}

void CachingAllocator::retag(int64_t bytes, MemoryCategory from, MemoryCategory to) {
  std::lock_guard<std::mutex> lock(mutex_);
  ledger_.retag(bytes, from, to);
}

void CachingAllocator::count_host(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes >= 0)
    ledger_.add(MemoryCategory::Host, bytes);
  else
    ledger_.remove(MemoryCategory::Host, -bytes);
}

void CachingAllocator::set_listener(Listener listener) {
  std::lock_guard<std::mutex> lock(mutex_);
  ledger_.set_listener(std::move(listener));
}

MemoryBytes CachingAllocator::current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ledger_.current();
}

int64_t CachingAllocator::current_total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ledger_.current_total();
}

int64_t CachingAllocator::peak_total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ledger_.peak_total();
}

MemoryBytes CachingAllocator::peak_by_category() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ledger_.peak_by_category();
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  ledger_.reset_peak();
}

int64_t CachingAllocator::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reserved_bytes_;
}

int64_t CachingAllocator::peak_reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_reserved_bytes_;
}

int64_t CachingAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_locked();
}

int64_t CachingAllocator::cached_bytes_locked() const {
  return pool_.cached_bytes() + idle_pool_.cached_bytes() + fenced_bytes_;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  empty_cache_locked();
}

void CachingAllocator::empty_cache_locked() {
  if (pool_.cached_blocks() == 0 && idle_pool_.cached_blocks() == 0 && fenced_.empty()) return;
  DeviceGuard guard(gpu_);
  wait_for_fenced_locked();
  for (BlockPool* pool : {&pool_, &idle_pool_})
    for (const BlockPool::Block& block : pool->take_all()) {
      PIPELAB_CUDA_CHECK(cudaFree(block.data));
      reserved_bytes_ -= block.bytes;
    }
}

DeviceMemoryInfo CachingAllocator::memory_info() const {
  DeviceMemoryInfo info;
  {
    DeviceGuard guard(gpu_);
    size_t free_bytes = 0, total_bytes = 0;
    PIPELAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    info.free_bytes = static_cast<int64_t>(free_bytes);
    info.total_bytes = static_cast<int64_t>(total_bytes);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  info.counted_bytes = ledger_.current_total();
  info.reserved_bytes = reserved_bytes_;
  info.cached_bytes = cached_bytes_locked();
  return info;
}

}  // namespace pipelab::gpu
