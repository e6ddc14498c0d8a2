#include "gpu/memory/out_of_memory.h"

#include <algorithm>
#include <cstdio>

namespace pipelab::gpu {

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

std::string out_of_memory_message(int device, int64_t asked_bytes, MemoryCategory category,
                                  int64_t free_bytes) {
  // "optimizer_state" reads better as "optimizer state" in a sentence.
  std::string what = memory_category_name(category);
  std::replace(what.begin(), what.end(), '_', ' ');
  return "out of GPU memory on device " + std::to_string(device) + ": asked " +
         format_bytes(asked_bytes) + " for " + what + ", " + format_bytes(free_bytes) +
         " free; use fewer micro-batches in flight, recompute, or more pipeline stages";
}

GpuOutOfMemory::GpuOutOfMemory(int device, int64_t asked_bytes, MemoryCategory category,
                               int64_t free_bytes)
    : std::runtime_error(out_of_memory_message(device, asked_bytes, category, free_bytes)),
      device_(device),
      asked_bytes_(asked_bytes),
      category_(category),
      free_bytes_(free_bytes) {}

}  // namespace pipelab::gpu
