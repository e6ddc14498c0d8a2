// The embedding lookup's index rules (core/nn/embedding.h), for the host and
// the device. Token ids arrive as floats (the data sets keep them in x); a
// vocabulary shard holds rows [begin, begin + rows) of the table, and an id it
// does not hold looks up a zero row (the shards' all-reduce sums to the full
// lookup). Output row i = b seq + t uses position t.
#pragma once

#include <cstdint>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::embedding_math {

// The shard's table row of a token id, or -1 when the shard does not hold it
// (ids that are not whole numbers in range never match a row).
PIPELAB_HOST_DEVICE inline int64_t table_row(float id, int64_t begin, int64_t rows) {
  if (!(id >= 0.0f) || id >= 2147483648.0f) return -1;
  const int64_t whole = static_cast<int64_t>(id);
  if (static_cast<float>(whole) != id) return -1;
  const int64_t row = whole - begin;
  return row >= 0 && row < rows ? row : -1;
}

PIPELAB_HOST_DEVICE inline int64_t position_of(int64_t token_row, int64_t seq) {
  return token_row % seq;
}

}  // namespace pipelab::gpu::embedding_math
