// The Transformer block's dropout keys (core/nn/block_dropout.h), for the host
// and the device: element e of site s of a sample is kept iff
//   unit_float(combine(combine(dropout_row_key(layer_key, step, sample), s), e)) >= p
// where layer_key = device_layer_key(seed, RandomStream::Dropout, layer) and
// sample is the row's index in the step's whole batch.
#pragma once

#include <cstdint>

#include "gpu/device/host_device.h"
#include "gpu/kernels/device_rng.h"

namespace pipelab::gpu {

// One micro-batch's block dropout, as core/nn's BlockDropout, ready for kernels.
struct BlockDropoutKey {
  uint64_t layer_key = 0;
  int step = 0;
  int64_t first_sample = 0;
  float p = 0.0f;      // 0: inactive
  float scale = 1.0f;  // 1 / (1 - p), computed as the CPU does
};

PIPELAB_HOST_DEVICE inline uint64_t block_site_key(const BlockDropoutKey& key, int64_t sample,
                                                   uint64_t site) {
  return device_combine_key(dropout_row_key(key.layer_key, key.step, key.first_sample + sample),
                            site);
}

PIPELAB_HOST_DEVICE inline bool block_keeps(uint64_t site_key, int64_t element, float p) {
  return device_unit_float(device_combine_key(site_key, static_cast<uint64_t>(element))) >= p;
}

// The element number of value `within` (position-major within the sample's
// rows) of a residual site whose rows start at position first_position of the
// sample (0 unless sequence parallelism gives the shard a slice). Under
// context parallelism the rows are the rank's positions from
// `positions[first_position]` on (context_split.h), each keyed by its global
// position.
PIPELAB_HOST_DEVICE inline int64_t residual_dropout_element(int64_t first_position, int64_t dim,
                                                            int64_t within,
                                                            const int64_t* positions = nullptr) {
  if (!positions) return first_position * dim + within;
  return positions[first_position + within / dim] * dim + within % dim;
}

}  // namespace pipelab::gpu
