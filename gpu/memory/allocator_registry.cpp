#include "gpu/memory/allocator_registry.h"

#include <algorithm>
#include <cassert>

#include "gpu/memory/caching_allocator.h"

namespace pipelab::gpu {

AllocatorRegistry& AllocatorRegistry::instance() {
  static AllocatorRegistry registry;
  return registry;
}

void AllocatorRegistry::add(CachingAllocator* allocator) {
  std::lock_guard<std::mutex> lock(mutex_);
  allocators_.push_back(allocator);
}

void AllocatorRegistry::remove(CachingAllocator* allocator) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = std::find(allocators_.begin(), allocators_.end(), allocator);
  assert(found != allocators_.end());
  if (found != allocators_.end()) allocators_.erase(found);
}

void AllocatorRegistry::empty_caches(int gpu) {
  // Held throughout, so no allocator is destroyed under us.
  std::lock_guard<std::mutex> lock(mutex_);
  for (CachingAllocator* allocator : allocators_)
    if (allocator->device() == gpu) allocator->empty_cache();
}

GpuAllocatorUsage AllocatorRegistry::usage(int gpu) const {
  std::lock_guard<std::mutex> lock(mutex_);
  GpuAllocatorUsage usage;
  for (const CachingAllocator* allocator : allocators_) {
    if (allocator->device() != gpu) continue;
    ++usage.allocators;
    usage.counted_bytes += allocator->current_total();
    usage.cached_bytes += allocator->cached_bytes();
  }
  return usage;
}

}  // namespace pipelab::gpu
