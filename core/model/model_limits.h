// The largest model PipeLab describes. Far past any model a lab runs or
// simulates (GPT-3 has 96 blocks, 175e9 parameters and widths of 12288), these
// keep every size derived from a model inside int64 with room to multiply by
// micro-batches, devices and versions, so a typo such as "out": 1e15 is an
// error message instead of an overflow or an allocation the machine cannot make.
#pragma once

#include <cstdint>

namespace pipelab {

inline constexpr int kMaxLayers = 10000;
// Values per sample at any point of the stack (model.input's product, a linear's out).
inline constexpr int64_t kMaxWidth = int64_t{1} << 30;
// Values per sample of a sequence model's layer, positions x width: long
// contexts need more than kMaxWidth (a GPT-3 block's ffn at 128k positions
// is 6.4e9 values; LLaMA 3's output layer at 128k, 1.7e10). Each width itself
// stays within kMaxWidth.
inline constexpr int64_t kMaxSequenceValues = int64_t{1} << 35;
// Trainable scalars in the whole model (4 TiB of float32 weights).
inline constexpr int64_t kMaxParameters = int64_t{1} << 40;
// Bytes one micro-batch keeps and sends through the whole, unsplit stack
// (64 TiB: a GPT-3 micro-batch of 3 sequences of 2,048 tokens is about 1.5 TB
// before any split; one sequence of 32k tokens, with every block's attention
// scores, 40 TB). Times the 65,536 micro-batches a plan may have, 2^62: still
// inside int64, with room for the other categories beside it.
inline constexpr int64_t kMaxMicrobatchBytes = int64_t{1} << 46;

}  // namespace pipelab
