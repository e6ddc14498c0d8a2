// The error for a GPU allocation that cannot be satisfied. It says what was
// asked, for what, on which device and how much was free, and what the user can
// change, e.g.
//   out of GPU memory on device 0: asked 80.0 GiB for activations, 12.3 GiB
//   free; use fewer micro-batches in flight, recompute, or more pipeline stages
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/trace/trace_events.h"

namespace pipelab::gpu {

class GpuOutOfMemory : public std::runtime_error {
 public:
  GpuOutOfMemory(int device, int64_t asked_bytes, MemoryCategory category, int64_t free_bytes);

  int device() const { return device_; }
  int64_t asked_bytes() const { return asked_bytes_; }
  MemoryCategory category() const { return category_; }
  int64_t free_bytes() const { return free_bytes_; }

 private:
  int device_;
  int64_t asked_bytes_;
  MemoryCategory category_;
  int64_t free_bytes_;
};

// "80.0 GiB", "12.5 MiB", "3.0 KiB", "100 B": one decimal in the largest unit
// that keeps the number at least 1.
std::string format_bytes(int64_t bytes);

// The message GpuOutOfMemory carries.
std::string out_of_memory_message(int device, int64_t asked_bytes, MemoryCategory category,
                                  int64_t free_bytes);

}  // namespace pipelab::gpu
