// Counter-based random numbers: every value is a pure function of a key
// (seed, stream, layer, ... , element), with no generator state. So a tensor-
// parallel shard generates exactly its slice of a layer's initial weights, a
// dropout mask is the same whatever the micro-batch split or thread, and the
// CUDA backend reproduces the CPU's numbers bit for bit from these formulas:
//
//   mix64(z)         = splitmix64's finaliser (a bijection on 64-bit words)
//   start(seed)      = mix64(seed)
//   combine(h, word) = mix64(h + 0x9E3779B97F4A7C15 + word)   (wrapping)
//   key hash         = combine(...combine(combine(start(seed), stream), w1)..., wn)
//   unit_float(h)    = (h >> 40) * 2^-24, exactly representable in [0, 1)
#pragma once

#include <cstdint>

namespace pipelab {

// What a random number is for; part of every key so uses never collide.
enum class RandomStream : uint64_t {
  LinearWeight = 1,
  LinearBias = 2,
  Dropout = 3,
  TokenEmbedding = 4,
  PositionEmbedding = 5,
  TransformerBlock = 6,  // a block's tensors: each adds its own word (gpt_block.h)
  ConvWeight = 7,        // a conv2d's weights; a residual block's convolutions add their word
  ConvBias = 8,
  MixtureOfExperts = 9,  // a moe layer's gate and experts: each adds its own word (moe_layer.h)
};

constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr uint64_t combine_key(uint64_t hash, uint64_t word) {
  return mix64(hash + 0x9E3779B97F4A7C15ull + word);
}

// The hash of (seed, stream, layer): the prefix every key of a layer shares.
constexpr uint64_t layer_key(uint64_t seed, RandomStream stream, int layer) {
  return combine_key(combine_key(mix64(seed), static_cast<uint64_t>(stream)),
                     static_cast<uint64_t>(layer));
}

// 24 random bits as a float in [0, 1); exact, so every backend agrees.
constexpr float unit_float(uint64_t hash) {
  return static_cast<float>(hash >> 40) * (1.0f / 16777216.0f);
}

// uniform(-bound, bound): computed in double and rounded once to float, so the
// result does not depend on FMA contraction.
inline float symmetric_uniform(uint64_t hash, double bound) {
  const double u = static_cast<double>(hash >> 40) * (1.0 / 16777216.0);
  return static_cast<float>((2.0 * u - 1.0) * bound);
}

}  // namespace pipelab
