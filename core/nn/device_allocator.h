// DeviceAllocator: hands out the float storage of one virtual device's tensors
// and accounts every byte by MemoryCategory. The accounting feeds the memory
// curves (MemorySample), so it is exact: a tensor of r x c floats counts
// r * c * 4 bytes from its allocation until its release (the padding to the
// 64-byte alignment is not counted, so the numbers match the memory model).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "core/trace/trace_events.h"

namespace pipelab {

// Storage is aligned to 64 bytes (a cache line, an AVX-512 vector).
inline constexpr std::size_t kTensorAlignment = 64;

// Whether new storage is zero-filled. Uninitialized is for outputs a kernel
// overwrites whole before anything reads them (a GEMM with beta = 0, a norm,
// an activation): it skips a pass over memory that the kernel then writes
// again (about 3% of a small GPT's training step on CPU).
enum class Fill { Zeros, Uninitialized };

// Aligned storage for `count` floats, zero-filled unless `fill` says
// otherwise, outside any accounting (nullptr when count is 0). Free it with
// free_aligned_floats.
float* allocate_aligned_floats(int64_t count, Fill fill = Fill::Zeros);
void free_aligned_floats(float* data);

class DeviceAllocator {
 public:
  // Called after every change with the bytes now held per category. It runs
  // while the allocator's lock is held, so samples arrive in the order of the
  // changes; it must not call back into this allocator.
  using Listener = std::function<void(const MemoryBytes&)>;

  explicit DeviceAllocator(int device = 0) : device_(device) {}
  ~DeviceAllocator();  // asserts every byte was returned
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  int device() const { return device_; }

  // 64-byte aligned storage for `count` floats, zero-filled unless `fill`
  // says otherwise, counted under `category` (nullptr and no change when count
  // is 0). Thread-safe: any thread may allocate or release (a channel frees
  // buffers on another thread).
  float* allocate(int64_t count, MemoryCategory category, Fill fill = Fill::Zeros);
  // Returns storage from allocate(); count and category must be what it holds now.
  void release(float* data, int64_t count, MemoryCategory category);
  // Moves `bytes` from one category to another (e.g. weights that become
  // stashed weights); the total does not change.
  void retag(int64_t bytes, MemoryCategory from, MemoryCategory to);

  void set_listener(Listener listener);

  MemoryBytes current() const;           // bytes held now, per category
  int64_t current_total() const;         // their sum on the device (all but Host)
  int64_t peak_total() const;            // the largest sum seen since the last reset_peak
  MemoryBytes peak_by_category() const;  // each category's own largest value since then
  void reset_peak();                     // peaks restart from the current values
  int64_t cached_bytes() const;          // freed blocks kept for reuse (not in use)
  void empty_cache();                    // gives the cached blocks back to the system

 private:
  // Freed blocks kept for reuse, keyed by float count. They are not counted as
  // in use (like a GPU caching allocator's reserved-but-free memory).
  static constexpr int64_t kMaxCachedBytes = int64_t{256} << 20;

  void add_locked(MemoryCategory category, int64_t bytes);  // updates peaks; no listener call
  void notify_locked();

  const int device_;
  mutable std::mutex mutex_;
  MemoryBytes current_{};
  MemoryBytes peak_by_category_{};
  int64_t current_total_ = 0;
  int64_t peak_total_ = 0;
  Listener listener_;
  std::unordered_multimap<int64_t, float*> cached_blocks_;
  int64_t cached_bytes_ = 0;
};

}  // namespace pipelab
