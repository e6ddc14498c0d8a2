#include "gpu/layers/kept_bf16.h"

#include <cmath>

namespace pipelab::gpu {

BlockKeptBf16 block_kept_bf16(bool mixed_bf16, bool sequence_parallel, bool experts,
                              bool context_parallel) {
  if (!mixed_bf16) return {};
  BlockKeptBf16 kept;
  kept.norm1_out = !sequence_parallel;
  kept.qkv = !context_parallel;
  kept.attention_out = true;
  kept.norm2_out = !sequence_parallel && !experts;
  kept.activation_out = !experts;
  kept.gathered_norms = sequence_parallel;
  return kept;
}

int64_t block_kept_bf16_values(const TransformerBlockShape& shape, const BlockSplit& split) {
  const BlockKeptBf16 kept =
      block_kept_bf16(true, split.sequence_parallel, shape.has_experts(), split.cp > 1);
  const int64_t tokens = shape.tokens / split.cp;  // the context rank's positions
  const int64_t sh = tokens * shape.dim;           // a residual-stream tensor, whole
  const int64_t tp = split.tp;
  int64_t values = 0;
  if (kept.norm1_out) values += sh;
  if (kept.qkv) values += 3 * sh / tp;
  if (kept.attention_out) values += sh / tp;
  if (kept.norm2_out) values += sh;
  if (kept.activation_out) values += tokens * shape.ffn / tp;
  if (shape.has_experts()) values += moe_kept_bf16_values(shape.moe());
  return values;
}

int64_t block_gathered_bf16_values(const TransformerBlockShape& shape, const BlockSplit& split) {
  if (!block_kept_bf16(true, split.sequence_parallel, shape.has_experts(), split.cp > 1)
           .gathered_norms)
    return 0;
  const int64_t norms = shape.has_experts() ? 1 : 2;  // the experts' gate reads Norm2's slice
  return norms * shape.tokens / split.cp * shape.dim;
}

int64_t moe_kept_bf16_values(const MoeShape& shape) {
  const double slots = shape.capacity_factor * static_cast<double>(shape.top_k);
  return static_cast<int64_t>(
      std::ceil(static_cast<double>(shape.tokens) * slots * static_cast<double>(shape.dim)));
}

bool layer_input_kept_bf16(bool mixed_bf16, LayerType type, bool stage_input,
                           bool gathers_sequence) {
  const bool gemm_only_input = type == LayerType::Linear || type == LayerType::Conv2d;
  return mixed_bf16 && gemm_only_input && !stage_input && !gathers_sequence;
}

int64_t layer_input_kept_bf16_values(const LayerInfo& info, TensorParallelRole role,
                                     const BlockSplit& split, bool stage_input,
                                     bool sequence_model) {
  const bool gathers =
      split.sequence_parallel && sequence_model && role == TensorParallelRole::ColumnParallel;
  if (!layer_input_kept_bf16(true, info.type, stage_input, gathers)) return 0;
  return role == TensorParallelRole::RowParallel ? info.in_features / split.tp : info.in_features;
}

}  // namespace pipelab::gpu
