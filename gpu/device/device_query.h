// What GPUs this machine has. Works (and says so) on a machine with no GPU or
// no driver: the CUDA build must run everywhere.
#pragma once

#include "core/runtime/gpu_inventory.h"

namespace pipelab::gpu {

using pipelab::GpuInfo;
using pipelab::GpuInventory;

GpuInventory query_gpus();

}  // namespace pipelab::gpu
