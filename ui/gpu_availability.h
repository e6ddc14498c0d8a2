// GpuAvailability: what the backend chooser knows about CUDA on this machine.
// app/pipelab_main.cpp fills it from gpu/ when the build has CUDA; the UI
// itself never talks to CUDA.
#pragma once

#include <QString>

#include "core/runtime/gpu_inventory.h"

namespace pipelab {

struct GpuAvailability {
  bool built_with_cuda = false;
  GpuInventory inventory;  // from gpu/'s query_gpus(); empty without CUDA

  bool usable() const { return built_with_cuda && !inventory.gpus.empty(); }
  // Why CUDA cannot be chosen, in plain words; empty when it can.
  QString reason_unusable() const;
  // "2 × NVIDIA H200 (139.8 GiB)", one line per GPU.
  QString description() const;
};

}  // namespace pipelab
