// What GPUs this machine has. Works (and says so) on a machine with no GPU or
// no driver: the CUDA build must run everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipelab::gpu {

struct GpuInfo {
  int index = 0;
  std::string name;
  int64_t total_bytes = 0;
  int64_t free_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
};

struct GpuInventory {
  std::vector<GpuInfo> gpus;
  std::string unavailable_reason;  // why there are none ("no CUDA device", "no driver", ...)
  bool nccl_available = false;     // built with NCCL
  int nccl_version = 0;            // e.g. 22703 for 2.27.3; 0 when unknown
};

GpuInventory query_gpus();

}  // namespace pipelab::gpu
