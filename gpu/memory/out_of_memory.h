// The error for a GPU allocation that cannot be satisfied, even after every
// allocator on the GPU gave its cache back. It says what was asked, for what,
// on which GPU, how much was free, what this virtual device counts in use and
// still holds cached, the same for all the virtual devices sharing the GPU,
// and what the user can change, e.g.
//   out of GPU memory on GPU 0: asked 80.0 GiB for activations, 12.3 GiB free;
//   this device counts 20.0 GiB in use and holds 0 B cached; the 4 virtual
//   devices on GPU 0 count 60.0 GiB and hold 2.0 MiB; use fewer micro-batches
//   in flight, recompute, or more pipeline stages
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/trace/trace_events.h"
#include "gpu/memory/allocator_registry.h"

namespace pipelab::gpu {

struct OutOfMemoryReport {
  int gpu = 0;
  int64_t asked_bytes = 0;
  MemoryCategory category = MemoryCategory::Workspace;
  int64_t free_bytes = 0;     // cudaMemGetInfo, after the caches were emptied
  int64_t counted_bytes = 0;  // the failing allocator: bytes in use, as asked for
  int64_t cached_bytes = 0;   // the failing allocator: blocks still held (in flight)
  GpuAllocatorUsage gpu_usage;  // every allocator on the GPU, the failing one included
};

class GpuOutOfMemory : public std::runtime_error {
 public:
  explicit GpuOutOfMemory(const OutOfMemoryReport& report);

  const OutOfMemoryReport& report() const { return report_; }
  int device() const { return report_.gpu; }
  int64_t asked_bytes() const { return report_.asked_bytes; }
  MemoryCategory category() const { return report_.category; }
  int64_t free_bytes() const { return report_.free_bytes; }

 private:
  OutOfMemoryReport report_;
};

// "80.0 GiB", "12.5 MiB", "3.0 KiB", "100 B": one decimal in the largest unit
// that keeps the number at least 1.
std::string format_bytes(int64_t bytes);

// The message GpuOutOfMemory carries. The part about the other virtual
// devices is left out when the failing one is alone on its GPU.
std::string out_of_memory_message(const OutOfMemoryReport& report);

}  // namespace pipelab::gpu
