// GpuAvailability: what the backend chooser knows about CUDA on this machine.
// app/pipelab_main.cpp fills it from gpu/ when the build has CUDA; the UI
// itself never talks to CUDA.
#pragma once

#include <QString>
#include <cstdint>
#include <vector>

namespace pipelab {

struct GpuDescription {
  int index = 0;
  QString name;
  int64_t total_bytes = 0;
  int64_t free_bytes = 0;
};

struct GpuAvailability {
  bool built_with_cuda = false;
  std::vector<GpuDescription> gpus;
  QString unavailable_reason;  // from the probe, e.g. "no CUDA device"

  bool usable() const { return built_with_cuda && !gpus.empty(); }
  // Why CUDA cannot be chosen, in plain words; empty when it can.
  QString reason_unusable() const;
  // "2 × NVIDIA H200 (139.8 GiB)", one line per GPU.
  QString description() const;
};

}  // namespace pipelab
