// What GPUs this machine has. Works (and says so) on a machine with no GPU or
// no driver: the CUDA build must run everywhere.
#pragma once

#include <cstdint>
#include <string>

#include "core/runtime/gpu_inventory.h"

namespace pipelab::gpu {

using pipelab::GpuInfo;
using pipelab::GpuInventory;

GpuInventory query_gpus();

// CUDA device `gpu` as other processes can compare it: the host's name and the
// GPU's PCI bus id, "node1/0000:1B:00.0" (two processes on one machine may
// number its GPUs differently). Throws CudaError when CUDA cannot say.
std::string gpu_identity(int gpu);

// What cudaMemGetInfo says is free on CUDA device `gpu` now. Throws CudaError.
int64_t free_gpu_bytes(int gpu);

}  // namespace pipelab::gpu
