// AllocatorRegistry: every live CachingAllocator of the process, by GPU.
// Virtual devices that share a GPU each have their own allocator and cache;
// when cudaMalloc fails for one of them, the memory it needs may sit in the
// others' caches. The failing allocator then empties every cache on its GPU
// (empty_caches) and retries, and if it still fails, reports what all of them
// count and hold (usage) in its GpuOutOfMemory.
//
// Locking: the registry's lock is taken before an allocator's, never the
// other way round, and no allocator lock is held while calling in here (an
// allocator releases its own lock first), so two virtual devices running out
// of memory at once cannot deadlock. Registering makes no CUDA call.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace pipelab::gpu {

class CachingAllocator;

// What the allocators on one GPU count (bytes in use, as asked for) and hold
// (free blocks cached for reuse, fenced ones included).
struct GpuAllocatorUsage {
  int allocators = 0;
  int64_t counted_bytes = 0;
  int64_t cached_bytes = 0;
};

class AllocatorRegistry {
 public:
  static AllocatorRegistry& instance();

  void add(CachingAllocator* allocator);
  void remove(CachingAllocator* allocator);

  // Gives the cache of every allocator on `gpu` back to CUDA, one allocator at
  // a time. The caller must hold no allocator's lock.
  void empty_caches(int gpu);
  GpuAllocatorUsage usage(int gpu) const;

 private:
  mutable std::mutex mutex_;
  std::vector<CachingAllocator*> allocators_;
};

}  // namespace pipelab::gpu
