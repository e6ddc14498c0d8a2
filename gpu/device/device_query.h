// What GPUs this machine has. Works (and says so) on a machine with no GPU or
// no driver: the CUDA build must run everywhere.
#pragma once

#include <cstdint>
#include <string>

#include "core/runtime/gpu_inventory.h"

namespace pipelab::gpu {

using pipelab::GpuInfo;
using pipelab::GpuInventory;

// With `read_free_bytes`, also what each GPU has free, which makes a CUDA
// context on every GPU (cudaMemGetInfo needs one). A rank of a run over
// processes passes false and reads only its own GPU's (free_gpu_bytes): a
// context on every GPU from every rank would hold memory on each GPU once
// per rank, and on GPUs in exclusive-process mode would keep the other ranks
// off their own GPU.
GpuInventory query_gpus(bool read_free_bytes = true);

// CUDA device `gpu` as other processes can compare it: the host's name and the
// GPU's PCI bus id, "node1/0000:1B:00.0" (two processes on one machine may
// number its GPUs differently). Throws CudaError when CUDA cannot say.
std::string gpu_identity(int gpu);

// What cudaMemGetInfo says is free on CUDA device `gpu` now. Throws CudaError.
int64_t free_gpu_bytes(int gpu);

}  // namespace pipelab::gpu
