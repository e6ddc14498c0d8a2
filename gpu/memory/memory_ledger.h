// MemoryLedger: the byte counts of one device by MemoryCategory, with peaks and
// a listener, kept exactly as core/nn's DeviceAllocator keeps them: a buffer
// counts the bytes asked for (not the rounding to the allocator's block size),
// so the GPU's memory curves and the CPU's show the same numbers for the same
// tensors. Plain bookkeeping, no CUDA and no lock: CachingAllocator holds its
// own lock around every call (and host tests use it directly).
#pragma once

#include <cstdint>
#include <functional>

#include "core/trace/trace_events.h"

namespace pipelab::gpu {

class MemoryLedger {
 public:
  // Called after every change with the bytes now held per category.
  using Listener = std::function<void(const MemoryBytes&)>;

  void add(MemoryCategory category, int64_t bytes);     // bytes >= 0
  void remove(MemoryCategory category, int64_t bytes);  // at most what the category holds
  // Moves bytes between categories; the total does not change.
  void retag(int64_t bytes, MemoryCategory from, MemoryCategory to);

  void set_listener(Listener listener) { listener_ = std::move(listener); }

  const MemoryBytes& current() const { return current_; }
  int64_t current(MemoryCategory category) const { return current_[static_cast<int>(category)]; }
  int64_t current_total() const { return current_total_; }
  int64_t peak_total() const { return peak_total_; }  // since the last reset_peak
  const MemoryBytes& peak_by_category() const { return peak_by_category_; }
  void reset_peak();  // peaks restart from the current values

 private:
  void change(MemoryCategory category, int64_t delta);  // updates peaks; no listener call
  void notify() const;

  MemoryBytes current_{};
  MemoryBytes peak_by_category_{};
  int64_t current_total_ = 0;
  int64_t peak_total_ = 0;
  Listener listener_;
};

}  // namespace pipelab::gpu
