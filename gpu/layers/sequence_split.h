// Sequence parallelism's moves on the CUDA backend: core/nn/sequence_split.h's
// gather_sequence and scatter_sequence over device buffers of
// [batch * positions, width] floats, through the same shard-major staging
// buffer (sequence_shard_copy's strided copies, one cudaMemcpy2DAsync per
// shard), so the shards' slices and the collectives' buffers are the CPU's.
// The collective runs in place on the staging tensor (the stage's
// tensor-parallel all-gather or reduce-scatter). Work is queued on the
// context's stream.
#pragma once

#include <cstdint>
#include <functional>

#include "core/nn/sequence_split.h"
#include "gpu/layers/device_context.h"
#include "gpu/memory/device_tensor.h"

namespace pipelab::gpu {

using DeviceSequenceCollective = std::function<void(DeviceTensor& values)>;

// whole [batch * seq, width] from every shard's local [batch * seq / tp, width].
void gather_sequence(const float* local, const SequenceSlice& slice, int64_t width, float* whole,
                     const DeviceSequenceCollective& all_gather, DeviceContext& context);

// local [batch * seq / tp, width] = this shard's positions of the sum over the
// shards of their partial whole [batch * seq, width].
void scatter_sequence(const float* whole, const SequenceSlice& slice, int64_t width, float* local,
                      const DeviceSequenceCollective& reduce_scatter, DeviceContext& context);

}  // namespace pipelab::gpu
