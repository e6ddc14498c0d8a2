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

std::string out_of_memory_message(const OutOfMemoryReport& report) {
  // "optimizer_state" reads better as "optimizer state" in a sentence.
  std::string what = memory_category_name(report.category);
  std::replace(what.begin(), what.end(), '_', ' ');
  std::string text = "out of GPU memory on GPU " + std::to_string(report.gpu) + ": asked " +
                     format_bytes(report.asked_bytes) + " for " + what + ", " +
                     format_bytes(report.free_bytes) + " free; this device counts " +
                     format_bytes(report.counted_bytes) + " in use and holds " +
                     format_bytes(report.cached_bytes) + " cached";
  if (report.gpu_usage.allocators > 1)
    text += "; the " + std::to_string(report.gpu_usage.allocators) +
            " virtual devices on that GPU count " + format_bytes(report.gpu_usage.counted_bytes) +
            " and hold " + format_bytes(report.gpu_usage.cached_bytes);
  return text + "; use fewer micro-batches in flight, recompute, or more pipeline stages";
}

GpuOutOfMemory::GpuOutOfMemory(const OutOfMemoryReport& report)
    : std::runtime_error(out_of_memory_message(report)), report_(report) {}

}  // namespace pipelab::gpu
