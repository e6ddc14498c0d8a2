// Context parallelism's moves on the CUDA backend (core/nn/context_split.h
// has the positions and the layout): gather_context and scatter_context over
// device buffers through the same rank-major staging buffer and the same
// chunk copies (context_chunk_copy, one cudaMemcpy2DAsync per rank and
// chunk), so the collectives' buffers are the CPU's; and the attention's
// packed keys (core/nn/attention.h's pack_keys: only K and V travel). The
// collective runs in place on the staging tensor (the stage's all-gather or
// reduce-scatter over the context-parallel group). Work is queued on the
// context's stream.
#pragma once

#include <cstdint>
#include <vector>

#include "core/nn/attention.h"
#include "core/nn/context_split.h"
#include "gpu/layers/device_context.h"
#include "gpu/layers/sequence_split.h"
#include "gpu/memory/device_buffer.h"

namespace pipelab::gpu {

// A rank's global positions (context_positions) on the device, int64, for
// the kernels that key masks and dropout by position.
DeviceBuffer upload_positions(const std::vector<int64_t>& positions, DeviceContext& context);

// whole [batch * seq, width] (position order) from every rank's local
// [batch * seq / cp, width].
void gather_context(const float* local, const ContextSlice& slice, int64_t width, float* whole,
                    const DeviceSequenceCollective& all_gather, DeviceContext& context);

// local [batch * seq / cp, width] = this rank's positions of the sum over the
// ranks of their partial whole [batch * seq, width].
void scatter_context(const float* whole, const ContextSlice& slice, int64_t width, float* local,
                     const DeviceSequenceCollective& reduce_scatter, DeviceContext& context);

// One key/value head's k and v (`width` = 2 head_dim columns): at
// `qkv_column` of the QKV rows and at `packed_column` of the packed rows.
// One run per key/value head, in order (host arithmetic, tested against
// core's pack_keys).
struct PackedKeyRun {
  int64_t qkv_column = 0;
  int64_t packed_column = 0;
  int64_t width = 0;
};
std::vector<PackedKeyRun> packed_key_runs(const AttentionShape& shape);

// The k and v columns of `rows` QKV rows [rows, qkv_width] as packed keys
// [rows, key_width] (one [k | v] pair per key/value head), and back into the
// QKV rows' k and v columns (the q columns untouched).
void pack_keys(const float* qkv, const AttentionShape& shape, int64_t rows, float* packed,
               cudaStream_t stream);
void unpack_keys(const float* packed, const AttentionShape& shape, int64_t rows, float* qkv,
                 cudaStream_t stream);

}  // namespace pipelab::gpu
