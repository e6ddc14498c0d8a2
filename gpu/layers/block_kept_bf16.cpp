#include "gpu/layers/block_kept_bf16.h"

namespace pipelab::gpu {

BlockKeptBf16 block_kept_bf16(bool mixed_bf16, bool sequence_parallel, bool experts) {
  if (!mixed_bf16) return {};
  BlockKeptBf16 kept;
  kept.norm1_out = !sequence_parallel;
  kept.qkv = true;
  kept.attention_out = true;
  kept.norm2_out = !sequence_parallel && !experts;
  kept.activation_out = !experts;
  kept.gathered_norms = sequence_parallel;
  return kept;
}

int64_t block_kept_bf16_values(const TransformerBlockShape& shape, const BlockSplit& split) {
  const BlockKeptBf16 kept = block_kept_bf16(true, split.sequence_parallel, shape.has_experts());
  const int64_t sh = shape.tokens * shape.dim;  // a residual-stream tensor, whole
  const int64_t tp = split.tp;
  int64_t values = 0;
  if (kept.norm1_out) values += sh;
  if (kept.qkv) values += 3 * sh / tp;
  if (kept.attention_out) values += sh / tp;
  if (kept.norm2_out) values += sh;
  if (kept.activation_out) values += shape.tokens * shape.ffn / tp;
  return values;
}

}  // namespace pipelab::gpu
