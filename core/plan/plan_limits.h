// The largest split PipeLab plans, for experiment files and command-line flags
// alike. Each degree stays far past real clusters (Megatron runs tp <= 8 within a
// node and pp <= 64), and their products (devices, stages) stay inside int; the
// size of the schedule they make together is bounded by kMaxScheduleOps
// (core/schedule/lowering.h).
#pragma once

namespace pipelab {

inline constexpr int kMaxDataParallel = 1024;      // parallel.dp
inline constexpr int kMaxTensorParallel = 64;      // parallel.tp
inline constexpr int kMaxPipelineDevices = 1024;   // parallel.pp
inline constexpr int kMaxChunks = 64;              // parallel.chunks
inline constexpr int kMaxMicrobatches = 1 << 16;   // parallel.microbatches
inline constexpr int kMaxStaleness = 1000;         // parallel.staleness
inline constexpr int kMaxContextParallel = 64;     // parallel.cp

}  // namespace pipelab
