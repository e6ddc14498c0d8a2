// Precision: how many bytes each kind of training state takes per value.
//
//   fp32        everything in float32: 4-byte weights, gradients and activations;
//               the optimizer's state slots are float32 too.
//   bf16-mixed  bf16 weights, gradients and activations (2 bytes), plus a
//               float32 master copy of the weights beside the optimizer's
//               float32 slots. Under Adam that is 2 + 2 + (4 + 4 + 4) = 16
//               bytes per parameter, the figure of the ZeRO and Megatron papers.
//               With fp32 gradients (Megatron-LM's default for bf16, its
//               --accumulate-allreduce-grads-in-fp32) the gradients are held
//               and reduced in float32: 18 bytes. PipeLab's default is the
//               papers' 16; training.fp32_gradients chooses 18.
// Dropout keep-masks are one byte per element in both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipelab {

enum class Precision { Fp32, Bf16Mixed };

struct PrecisionBytes {
  int64_t weight = 4;            // per parameter, the copy forward and backward read
  int64_t gradient = 4;          // per parameter
  int64_t master_weight = 0;     // per parameter, float32 copy the optimizer updates
  int64_t optimizer_slot = 4;    // per parameter and state slot (momentum, variance)
  int64_t activation = 4;        // per activation value kept or sent
};

// `fp32_gradients`: gradients held (and data-parallel reduced) in float32
// whatever the precision (training.fp32_gradients).
constexpr PrecisionBytes precision_bytes(Precision precision, bool fp32_gradients = false) {
  PrecisionBytes bytes;
  if (precision == Precision::Bf16Mixed) bytes = {2, 2, 4, 4, 2};
  if (fp32_gradients) bytes.gradient = 4;
  return bytes;
}

const char* precision_name(Precision precision);  // "fp32", "bf16-mixed"
std::optional<Precision> parse_precision(const std::string& name);
std::vector<std::string> precision_names();

}  // namespace pipelab
