// bfloat16 as raw bits (uint16_t), for the host and the device: the top half
// of a float32 (sign, the same 8 exponent bits, 7 mantissa bits). Mixed
// precision keeps a bf16 copy of each GEMM weight and rounds GEMM inputs to it.
//   to_bf16_bits     float32 -> bf16, round to nearest, ties to even; a NaN
//                    stays a (quiet) NaN with its sign; infinities stay
//                    infinities; values past bf16's largest round to infinity
//   bf16_bits_to_float  exact (every bf16 is a float32)
// For every other value the same rounding as __float2bfloat16_rn and PyTorch's
// float -> bfloat16; those return one canonical NaN, this keeps the NaN's sign.
#pragma once

#include <stdint.h>
#include <string.h>

#include "gpu/device/host_device.h"

namespace pipelab::gpu::bf16_math {

PIPELAB_HOST_DEVICE inline uint32_t float_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

PIPELAB_HOST_DEVICE inline uint16_t to_bf16_bits(float value) {
  const uint32_t bits = float_bits(value);
  const bool is_nan = (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0;
  // Adding 0x7FFF plus the kept part's lowest bit rounds the dropped 16 bits
  // to nearest, ties to even; a carry may ripple into the exponent, which is
  // the right rounding (up to infinity past the largest finite bf16). A NaN
  // instead keeps its top bits with the quiet bit set, so it cannot become
  // an infinity.
  if (is_nan) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  const uint32_t lowest_kept = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7FFFu + lowest_kept) >> 16);
}

// Two values rounded to bf16 in one 32-bit word, `low` in the low half (at the
// lower address in memory, as a pair of an mma operand or of a vector store).
PIPELAB_HOST_DEVICE inline uint32_t to_bf16_pair_bits(float low, float high) {
  return uint32_t{to_bf16_bits(low)} | (uint32_t{to_bf16_bits(high)} << 16);
}

PIPELAB_HOST_DEVICE inline float bf16_bits_to_float(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  memcpy(&value, &wide, sizeof value);
  return value;
}

}  // namespace pipelab::gpu::bf16_math
