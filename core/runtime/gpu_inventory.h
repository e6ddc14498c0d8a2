// GpuInventory: the GPUs this machine offers, as gpu/'s query_gpus() finds
// them. A plain description, so the CLI and the app can list GPUs and say why
// there are none without including CUDA (they get it through a hook that only
// a CUDA build sets).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pipelab {

struct GpuInfo {
  int index = 0;  // CUDA's device number
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

}  // namespace pipelab
