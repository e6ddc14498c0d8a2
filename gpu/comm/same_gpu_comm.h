// Communication without NCCL: between virtual devices that share one GPU (NCCL
// refuses two ranks on one GPU) or when NCCL is missing. A send is a device-to-
// device copy (copy_between in device_tensor.h: cudaMemcpyAsync on one GPU, a
// peer copy across two); an all-reduce is copies plus the add kernel.
//
// These are called by one host thread on behalf of all participants, after
// they have all queued the work producing their tensors (the executor meets
// them at a barrier). Streams are ordered with events: nothing waits on the host.
#pragma once

#include <span>

#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

// Sums same-shape tensors in place: afterwards each holds t[0] + t[1] + ...,
// added in participant order on the first tensor's stream, so every
// participant gets the same bits run after run. Tensors on another GPU than
// the first are first copied to it (a CommBuffers temporary).
void all_reduce_sum_local(std::span<DeviceTensor* const> tensors);

}  // namespace pipelab::gpu
