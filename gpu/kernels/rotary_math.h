// Rotary position embeddings' rules (core/nn/rotary.h), for the host and the
// device: which columns of a fused QKV row are turned, and the turn of one
// pair. The angles' cosines and sines come from core's rotary_table, copied
// to the device, so both backends turn by the same floats.
#pragma once

#include <cstdint>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::rotary_math {

// The first column of turned head `slot` of a QKV row (attention.h's layout):
// slots [0, heads) are the query heads, slots [heads, heads + kv_heads) the
// key heads; `group` = heads / kv_heads.
PIPELAB_HOST_DEVICE inline int64_t turned_column(int64_t slot, int64_t heads, int64_t group,
                                                 int64_t head_dim) {
  if (slot < heads) return ((slot / group) * (group + 2) + slot % group) * head_dim;
  return ((slot - heads) * (group + 2) + group) * head_dim;
}

// The pair (a, b) = (x_c, x_{c + d/2}) turned by the angle whose cosine and
// sine are given; direction +1 forward, -1 for the transpose (the backward).
PIPELAB_HOST_DEVICE inline void turn_pair(float& a, float& b, float cos, float sin,
                                          float direction) {
  const float s = direction * sin;
  const float first = a * cos - b * s;
  const float second = b * cos + a * s;
  a = first;
  b = second;
}

}  // namespace pipelab::gpu::rotary_math
