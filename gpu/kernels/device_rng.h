// The counter-based random numbers of core/nn/counter_rng.h, ported so CUDA
// kernels can call them: the same formulas, written once for host and device.
// Dropout masks and anything else keyed by these hashes are therefore bit-
// identical on the CPU and the GPU (tests/gpu/kernels/host_math_test.cpp checks the
// port against core/nn on many inputs, on the host).
#pragma once

#include <cstdint>

#include "gpu/device/host_device.h"

namespace pipelab::gpu {

// splitmix64's finaliser, as mix64 in counter_rng.h.
PIPELAB_HOST_DEVICE inline uint64_t device_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// As combine_key: mix64(hash + golden ratio + word), wrapping.
PIPELAB_HOST_DEVICE inline uint64_t device_combine_key(uint64_t hash, uint64_t word) {
  return device_mix64(hash + 0x9E3779B97F4A7C15ull + word);
}

// As layer_key, with the stream given as its number (RandomStream's value).
PIPELAB_HOST_DEVICE inline uint64_t device_layer_key(uint64_t seed, uint64_t stream, int layer) {
  return device_combine_key(device_combine_key(device_mix64(seed), stream),
                            static_cast<uint64_t>(layer));
}

// As unit_float: the top 24 bits as a float in [0, 1), exact.
PIPELAB_HOST_DEVICE inline float device_unit_float(uint64_t hash) {
  return static_cast<float>(hash >> 40) * (1.0f / 16777216.0f);
}

// Dropout (core/nn/dropout.h): the key of one row of a micro-batch, from the
// layer's key (device_layer_key with RandomStream::Dropout), the step and the
// row's sample index in the step's whole batch.
PIPELAB_HOST_DEVICE inline uint64_t dropout_row_key(uint64_t layer_key, int step, int64_t sample) {
  return device_combine_key(device_combine_key(layer_key, static_cast<uint64_t>(step)),
                            static_cast<uint64_t>(sample));
}

// Whether dropout keeps element `feature` (global feature index) of that row.
PIPELAB_HOST_DEVICE inline bool dropout_row_keeps(uint64_t row_key, int64_t feature, float p) {
  return device_unit_float(device_combine_key(row_key, static_cast<uint64_t>(feature))) >= p;
}

}  // namespace pipelab::gpu
