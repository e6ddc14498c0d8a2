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
// Trainable scalars in the whole model (4 TiB of float32 weights).
inline constexpr int64_t kMaxParameters = int64_t{1} << 40;
// Bytes one micro-batch keeps and sends through the whole, unsplit stack
// (16 TiB: a GPT-3 micro-batch of 3 sequences is about 1.5 TB before any
// split). Times the 65,536 micro-batches a plan may have, still inside int64.
inline constexpr int64_t kMaxMicrobatchBytes = int64_t{1} << 44;

}  // namespace pipelab
