// The device-to-device path of a group collective (device_group.h): runs its
// steps (collective_steps.h) in order on one stream, the root member's, with
// copies (peer copies between GPUs) and the add kernel. An addition whose
// source lives on another GPU first copies it over into a staging buffer; the
// scratch and the staging buffer are CommBuffers of the root's allocator.
#pragma once

#include <span>

#include "gpu/comm/collective_steps.h"
#include "gpu/device/stream_order.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

// `tensors[m]`: member m's tensor (each of the steps' size); `root`: the
// stream the steps run on and its GPU, which holds every addition's target.
// Queues everything and returns; the caller orders the members' streams
// around `root` and marks their tensors as used by it.
void run_collective_copies(const CollectiveSteps& plan, std::span<DeviceTensor* const> tensors,
                           CachingAllocator& root_allocator, StreamOnDevice root);

}  // namespace pipelab::gpu
