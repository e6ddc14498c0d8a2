// CachingAllocator: the device memory of one (virtual) device on one GPU, with
// every byte accounted by MemoryCategory like core/nn's DeviceAllocator, so
// memory curves read the same on either backend.
//
// Freed blocks are kept in a BlockPool (512-byte size classes) and handed to the
// next request of the same class instead of calling cudaFree and cudaMalloc,
// which synchronise the whole device. Reuse is safe in stream order: every
// kernel that touches this allocator's memory runs on its stream(), so a block
// freed on the host is reused only by work queued after the work that last used
// it.
//
// Memory that other streams use too (a communication stream sending a tensor,
// or writing a message another device reads) is released fenced: the buffer
// lists those streams (DeviceBuffer::record_stream), an event is recorded on
// each of them and on stream() when it dies, and the block is reused only once
// every event has completed (the host polls; no stream waits; the events come
// from each GPU's EventPool and go back to it). Such a block
// is then idle: no stream uses it, so allocate_idle() hands it to a buffer any
// stream may write at once (PyTorch's recordStream, in short).
//
// A request that cudaMalloc cannot satisfy first empties the cache of every
// allocator on the GPU (other virtual devices on it may hold what this one
// needs; allocator_registry.h) and retries; if it still fails it throws
// GpuOutOfMemory naming the bytes asked, the category, the GPU, the bytes
// free, and what this and the other allocators on the GPU count and hold.
// Nothing here aborts.
//
// Thread-safe. Constructing one makes no CUDA call (a CUDA build must start on a
// machine without a GPU); the first allocation does. Every allocator is listed
// in the AllocatorRegistry from construction to destruction.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "gpu/memory/block_pool.h"
#include "gpu/memory/memory_ledger.h"
#include "gpu/device/stream_order.h"

namespace pipelab::gpu {

// What CUDA says about a GPU's memory, beside what this allocator counts.
struct DeviceMemoryInfo {
  int64_t free_bytes = 0;      // cudaMemGetInfo: free on the whole GPU
  int64_t total_bytes = 0;     // cudaMemGetInfo: the GPU's capacity
  int64_t counted_bytes = 0;   // this allocator: bytes in use, as asked for (the ledger's total)
  int64_t reserved_bytes = 0;  // this allocator: cudaMalloc'd blocks, in use or cached
  int64_t cached_bytes = 0;    // this allocator: free blocks kept for reuse
};

class CachingAllocator {
 public:
  using Listener = MemoryLedger::Listener;

  // `gpu` is the CUDA device index; `stream` the stream its tensors' work runs on
  // (memsets and copies of DeviceTensor go there too). Not owned.
  CachingAllocator(int gpu, cudaStream_t stream);
  ~CachingAllocator();  // returns cached blocks to CUDA; asserts every byte was released
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  int device() const { return gpu_; }
  cudaStream_t stream() const { return stream_; }

  // Uninitialised device memory for `bytes` (nullptr and no change for 0),
  // counted under `category`. Throws GpuOutOfMemory when the GPU cannot hold it.
  void* allocate(int64_t bytes, MemoryCategory category);
  // Memory that no stream uses (a fresh or an idle block, never one of the
  // cache's blocks stream() may still be working on), for a buffer another
  // stream writes first. Release it with release_fenced().
  void* allocate_idle(int64_t bytes, MemoryCategory category);
  // Returns memory from allocate(); bytes and category must be what it holds now.
  void release(void* data, int64_t bytes, MemoryCategory category);
  // Returns memory that `streams` used besides stream(), or memory from
  // allocate_idle(): reused once each of them and stream() has passed this point.
  // Never throws a CudaError (it runs in destructors): on a GPU that has failed
  // the block is left unused and the failure reported on stderr.
  void release_fenced(void* data, int64_t bytes, MemoryCategory category,
                      std::span<const StreamOnDevice> streams);
  // Moves `bytes` from one category to another; the total does not change.
  void retag(int64_t bytes, MemoryCategory from, MemoryCategory to);
  // This device's data parked in host memory (offloading) grew by `bytes`
  // (shrank when negative): counted under Host, outside the device's total.
  void count_host(int64_t bytes);

  // Called after every change with the bytes held per category, under the
  // allocator's lock (samples arrive in order; it must not call back in here).
  void set_listener(Listener listener);

  MemoryBytes current() const;
  int64_t current_total() const;
  int64_t peak_total() const;
  MemoryBytes peak_by_category() const;
  void reset_peak();

  int64_t reserved_bytes() const;       // cudaMalloc'd and not yet freed: in use + cached
  int64_t peak_reserved_bytes() const;  // the most reserved at once
  int64_t cached_bytes() const;         // free blocks kept for reuse (fenced ones included)
  // Gives every cached block back to CUDA (cudaFree synchronises the device;
  // fenced blocks are waited for first).
  void empty_cache();
  // cudaMemGetInfo for this GPU beside this allocator's counters.
  DeviceMemoryInfo memory_info() const;

 private:
  // An event (from its GPU's EventPool) recorded on a stream that used a block.
  struct Fence {
    cudaEvent_t event = nullptr;
    int gpu = 0;
  };
  // A freed block waiting for the events of the streams that used it.
  struct FencedBlock {
    void* data = nullptr;
    int64_t block_bytes = 0;
    std::vector<Fence> fences;
  };
  void empty_cache_locked();
  int64_t cached_bytes_locked() const;
  // cudaMalloc under `lock`; on failure empties every cache on the GPU, which
  // releases `lock` for a while (other allocators may be waiting for it).
  void* cuda_malloc(std::unique_lock<std::mutex>& lock, int64_t block_bytes, int64_t bytes,
                    MemoryCategory category);
  // Moves fenced blocks whose events have all completed to the idle pool.
  void collect_fenced_locked();
  void wait_for_fenced_locked();

  const int gpu_;
  const cudaStream_t stream_;
  mutable std::mutex mutex_;
  MemoryLedger ledger_;
  BlockPool pool_;       // free blocks, safe for work queued on stream()
  BlockPool idle_pool_;  // free blocks no stream uses: safe for any stream
  std::vector<FencedBlock> fenced_;
  int64_t fenced_bytes_ = 0;
  int64_t reserved_bytes_ = 0;
  int64_t peak_reserved_bytes_ = 0;
};

}  // namespace pipelab::gpu
